"""The one place tcg imports private CPython modules.

`tcg_shell run-line` runs for every command an agent sends, `tcg hook claude`
for every tool call; each pays the interpreter's start (~12 ms) plus what it
imports. A few public standard-library modules cost more to import than the
decision they serve, mostly for layers tcg does not use (enums, OpenSSL,
pure-Python wrappers); the C module underneath does the same work. Only this
package imports those C modules; everything else imports from here and is
ordinary Python (tests/structure keeps it so). Each module falls back to the
public one where the private one is missing (another interpreter); tests hold
what is built on them equal to the public module (tests/test_digest.py,
test_leanjson.py, test_record.py, test_events.py, tests/sandbox/test_libc.py).

Import cost, public vs private (cumulative ``python -I -X importtime``, median
of 9 runs, CPython 3.11 on a shared 2-core machine: noisy, three runs' range):

============  ===============================  ================  =====================================
module        public (ms)                      private (ms)      used by
============  ===============================  ================  =====================================
sha.py        hashlib 2.8 (loads OpenSSL)      _sha256 0.15      tcg.digest (names, fingerprints)
blake.py      hashlib 2.8, hmac 3.2-4.1        _blake2 0.2-0.3   tcg.digest (signed files' MACs)
              (both load OpenSSL)
ops.py        operator 0.3; hmac 3.2-4.1       _operator 0.07    tcg.record (every policy record),
              for compare_digest                                 tcg.digest (MAC comparison)
jsonc.py      json 7.6-17.6 (re, enum)         _json 0.2         tcg.leanjson (hook input), tcg.events
threads.py    threading 8-10                   _thread 0 (built  runner.loop, detect.helper,
                                               in, preloaded)    runner.session_events
queues.py     queue 4-13                       _queue 0.2        runner.session_events
signals.py    signal 12 (enum)                 _signal 0.08      runner.signals (every command)
libc.py       ctypes 2.0                       _ctypes 0.4       sandbox.linux (agent commands)
reparse.py    no public regex parser           re._parser        detect.regex (rule analysis)
sockets.py    socket 7.0-9.2 (enum, selectors) _socket 0.45-0.5  runner.maskserver (the station's
                                                                 request at every session start)
hs.py         hyperscan 4.6-5.5 (typing,       _hs_ext 1.7-2.5   detect (its compiled databases), the
              contextlib, warnings)                              masker's anchors: a session's masking
                                                                 process before its first prompt
============  ===============================  ================  =====================================

Signed files (every start-up cache, among them the policy snapshot each hook
call verifies) are MACed with BLAKE2b's keyed mode (tcg.digest), so verifying
one loads no OpenSSL; keyed names (placeholders, event hashes) stay HMAC-SHA256
from the standard library's ``hmac``, paid only by a process that computes one.

Two process-wide shortcuts live here too, though both are public interpreter APIs:
a short-lived command's entry collects garbage less often and leaves without the
interpreter's teardown (entry.py; `tcg scan`, started once per repository).

One idiom stays outside this package, in the modules a mediated command, a hook
call or a scan loads (and in the ones they may load: the guard, the entities,
the sandbox): ``TYPE_CHECKING = False`` instead of ``from typing import
TYPE_CHECKING``. ``typing`` costs 10-20 ms of import on this machine (cumulative,
5 runs), more than the decision it would annotate; mypy treats a constant of
that name as true, so the annotations are checked all the same.
"""
