"""A session's first masking process as a fork of its station (tcg.runner.maskproc's
``_start_forked``): started the way the hook starts the station (``python -I -S``,
tcg on an appended path), it writes byte for byte what a fresh ``python -I``
masking process writes, loads hyperscan from site-packages, and is not used once
the station runs a second thread. Real processes, real masker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tcg
from tcg.runner.session_screen import header

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux fork path")

TOKEN = "ghp_" + "Rk3Wm8Qz1Xv6Lb9Nt2Hc5Pd7Jf0Gs4Ya8Ue2"
AWS = "AKIA" + "M2XQ7RT4KZ9PL3WH"
DATA = (f"{TOKEN} P1> plain line\r\nexport GITHUB_TOKEN={TOKEN}\r\n"
        f"\x1b[1mbold\x1b[0m key {AWS} end\r\nP2> ").encode()
ROOT = str(Path(tcg.__file__).resolve().parent.parent)

# As the hook starts the station: no site-packages, tcg from an appended path.
HARNESS = r"""
import json, os, sys, threading, time
sys.path.append(sys.argv.pop(1))
fork, thread = sys.argv[1] == "fork", sys.argv[2] == "thread"
if thread:  # a station that runs a second thread must not fork
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
if sys.argv[2] == "signals":  # a late fork: the station's PTY signal handlers are installed
    import signal
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGCONT):
        signal.signal(sig, lambda *a: None)
before = None
if sys.argv[2] == "inherit":  # as a station no fork server serves: site-packages and policy first
    def before():
        import site
        site.main()
        from tcg.policy.load import load_policy
        return load_policy()
from tcg.runner.maskproc import MaskerProcess
m = MaskerProcess("terminal", None, dict(os.environ), fork=fork, before_fork=before)
m.start()
with open(f"/proc/{m.pid}/cmdline", "rb") as fh:
    cmdline = fh.read().decode(errors="replace")
comm, end = "", time.monotonic() + 30
while fork and comm != "tcg-masker" and time.monotonic() < end:  # it names itself first thing
    with open(f"/proc/{m.pid}/comm") as fh:
        comm = fh.read().strip()
    time.sleep(0.01)
data = sys.stdin.buffer.read()
for i in range(0, len(data), 11):  # in pieces: secrets across their edges
    m.feed(data[i:i + 11])
caught, end = "", time.monotonic() + 60
while time.monotonic() < end:  # the masker is running once it ignores SIGINT (2: bit 1)
    try:
        with open(f"/proc/{m.pid}/status") as fh:
            status = dict(line.split(":\t", 1) for line in fh.read().splitlines() if ":\t" in line)
    except OSError:  # gone (it failed): no mask to read
        break
    if status["State"].startswith("Z"):
        break
    if int(status["SigIgn"], 16) & 2:
        caught = status["SigCgt"].strip()
        break
    time.sleep(0.01)
m.flush()
sys.stderr.write("\nRESULT " + json.dumps([m.error is None, str(m.error), cmdline, comm, caught]) + "\n")
# fork-harness
"""


def _run(how: str, thread: str = "-") -> tuple[bytes, bool, str, str, str]:
    """(what the masking process wrote, no error, the error, its command line, its name)."""
    out, ok, why, cmdline, comm, _ = _run_full(how, thread)
    return out, ok, why, cmdline, comm


def _run_full(how: str, thread: str = "-") -> tuple[bytes, bool, str, str, str, str]:
    """_run, and the masking process's caught-signal mask once it runs (SigCgt)."""
    res = subprocess.run([sys.executable, "-I", "-S", "-c", HARNESS, ROOT, how, thread],
                         input=header(0) + DATA, capture_output=True, timeout=180)
    lines = [x for x in res.stderr.splitlines() if x.startswith(b"RESULT ")]
    assert lines, res.stderr.decode(errors="replace")
    ok, why, cmdline, comm, caught = json.loads(lines[-1][7:])
    return res.stdout, ok, why, cmdline, comm, caught


def test_a_forked_masking_process_writes_what_a_fresh_one_writes(tcg_home):
    forked, ok, why, cmdline, comm = _run("fork")
    assert ok, why
    assert "# fork-harness" in cmdline  # the station's own process image: no second interpreter
    assert comm == "tcg-masker"
    fresh, ok, why, fresh_cmdline, _ = _run("fresh")
    assert ok, why
    assert "# fork-harness" not in fresh_cmdline  # a process of its own
    assert forked == fresh  # byte for byte
    assert TOKEN.encode() not in forked and AWS.encode() not in forked
    assert forked.count(b"<SECRET:") == 3 and b"plain line" in forked


def test_a_forked_masking_process_loads_hyperscan_from_site_packages(tcg_home, tmp_path):
    """The station starts without site-packages; its fork adds them as a fresh
    ``python -I`` has them (else the detector would fall back to its re engine)."""
    probe = tmp_path / "engine"
    code = (r"import os, sys; sys.path.append(sys.argv.pop(1));"
            r"from tcg.runner import session_mask;"
            r"r, w = os.pipe(); cr, cw = os.pipe(); pid = os.fork()" "\n"
            r"if pid == 0:" "\n"
            r"    import tcg.detect.engine as e; orig = e.Detector.__init__" "\n"
            r"    def spy(self, *a, **k):" "\n"
            r"        orig(self, *a, **k); open(sys.argv[1], 'w').write(self.engine)" "\n"
            r"    e.Detector.__init__ = spy" "\n"
            r"    session_mask.forked_main('terminal', r, cr)" "\n"
            r"os.close(r); os.close(cr); os.write(w, b'TCGSHOWN 0\nP1> '); os.close(w)" "\n"
            r"os.waitpid(pid, 0)")
    subprocess.run([sys.executable, "-I", "-S", "-c", code, ROOT, str(probe)], timeout=180,
                   capture_output=True, check=True)
    try:
        import hyperscan  # noqa: F401
    except ImportError:  # pragma: no cover - the re engine everywhere
        pytest.skip("hyperscan is not installed")
    assert probe.read_text() == "hyperscan"


def test_a_station_with_a_second_thread_starts_a_fresh_process(tcg_home):
    out, ok, why, cmdline, _ = _run("fork", "thread")
    assert ok, why
    assert "# fork-harness" not in cmdline
    assert TOKEN.encode() not in out and out.count(b"<SECRET:") == 3


def test_a_forked_masking_process_under_an_unusable_policy_writes_nothing(tcg_home, tmp_path):
    """Fail closed as the fresh process does: the policy does not load, nothing
    reaches the terminal, and the station hears it failed."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[detect\n")
    env = dict(os.environ, TCG_POLICY=str(bad))
    res = subprocess.run([sys.executable, "-I", "-S", "-c", HARNESS, ROOT, "fork", "-"],
                         input=header(0) + DATA, capture_output=True, timeout=180, env=env)
    lines = [x for x in res.stderr.splitlines() if x.startswith(b"RESULT ")]
    ok, why, *_ = json.loads(lines[-1][7:])
    assert not ok and "exited with" in why
    assert res.stdout == b""


def test_a_late_fork_does_not_keep_the_stations_signal_handlers(tcg_home):
    """A fork after the station installed its PTY signal handlers and a wake-up fd
    (a served worker refused late): the masking process catches what a fresh one
    catches (an exec resets handlers; the fork resets them itself), so a resize
    prints no wake-up-fd error on the terminal and SIGTERM ends it."""
    forked, ok, why, _, comm, caught = _run_full("fork", "signals")
    assert ok, why
    assert comm == "tcg-masker"
    fresh, ok, why, _, _, fresh_caught = _run_full("fresh", "signals")
    assert ok, why
    assert caught and caught == fresh_caught
    assert forked == fresh


def test_the_masking_load_imports_neither_typing_nor_json_nor_the_event_log(tcg_home):
    """What a session's masking process loads before its first masked byte (the
    station's fork or a fresh process): hyperscan's extension without its package's
    ``typing`` (tcg._lean.hs), its start-up caches without ``json`` (tcg.leanjson),
    and a policy without the event log it never writes."""
    code = (r"import sys; sys.path.append(sys.argv.pop(1)); import site; site.main()" "\n"
            r"from tcg.runner.session_mask import FollowingMasker" "\n"
            r"m = FollowingMasker('terminal')" "\n"
            r"out = m.feed(sys.argv[1].encode() + b' P1> ') + m.flush()" "\n"
            r"assert sys.argv[1].encode() not in out and b'<SECRET:' in out, out" "\n"
            r"import tcg.detect.hsdb as h" "\n"
            r"assert h.default_engine() == 'hyperscan'" "\n"
            r"print(sorted(n for n in ('typing', 'hyperscan', 'json', 'tcg.events') if n in sys.modules))")
    try:
        import hyperscan  # noqa: F401
    except ImportError:  # pragma: no cover - the re engine everywhere
        pytest.skip("hyperscan is not installed")
    for _ in range(2):  # the first builds the start-up caches (its rules come from TOML)
        res = subprocess.run([sys.executable, "-I", "-S", "-c", code, ROOT, TOKEN], timeout=180,
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_a_fork_that_inherits_the_stations_policy_writes_what_a_fresh_one_writes(tcg_home):
    """The station loads site-packages and the policy right before it forks (the
    fork loads neither again): the output is still byte for byte a fresh process's."""
    forked, ok, why, cmdline, comm = _run("fork", "inherit")
    assert ok, why
    assert "# fork-harness" in cmdline and comm == "tcg-masker"
    fresh, ok, why, _, _ = _run("fresh")
    assert ok, why
    assert forked == fresh
    assert TOKEN.encode() not in forked and forked.count(b"<SECRET:") == 3


def test_a_fork_with_the_stations_policy_masks_with_hyperscan_and_that_policy(tcg_home, tmp_path):
    """The inherited policy is the one masked with (a rule it disables stays
    unmasked, as under a fresh process with that policy), and the detector is
    hyperscan's: the station added site-packages before the fork."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:  # pragma: no cover - the re engine everywhere
        pytest.skip("hyperscan is not installed")
    probe = tmp_path / "engine"
    policy = tmp_path / "policy.toml"
    policy.write_text('[detect]\ndisabled_rules = ["aws-access-key-id"]\n')
    env = dict(os.environ, TCG_POLICY=str(policy))
    code = (r"import os, sys; sys.path.append(sys.argv.pop(1));"
            r"from tcg.runner import session_mask; import site; site.main()" "\n"
            r"from tcg.policy.load import load_policy; pol = load_policy()" "\n"
            r"r, w = os.pipe(); cr, cw = os.pipe(); pid = os.fork()" "\n"
            r"if pid == 0:" "\n"
            r"    os.environ['TCG_POLICY'] = '/nonexistent/policy.toml'  # a reload would fail" "\n"
            r"    import tcg.detect.engine as e; orig = e.Detector.__init__" "\n"
            r"    def spy(self, *a, **k):" "\n"
            r"        orig(self, *a, **k); open(sys.argv[1], 'w').write(self.engine)" "\n"
            r"    e.Detector.__init__ = spy" "\n"
            r"    session_mask.forked_main('terminal', r, cr, pol)" "\n"
            r"os.close(r); os.close(cr); os.write(w, b'TCGSHOWN 0\n' + sys.argv[2].encode()); os.close(w)" "\n"
            r"_, st = os.waitpid(pid, 0); sys.exit(os.waitstatus_to_exitcode(st))")
    line = f"{TOKEN} {AWS} P1> "
    res = subprocess.run([sys.executable, "-I", "-S", "-c", code, ROOT, str(probe), line], timeout=180,
                         capture_output=True, env=env)
    assert res.returncode == 0, res.stderr
    assert probe.read_text() == "hyperscan"
    assert TOKEN.encode() not in res.stdout and AWS.encode() in res.stdout  # that policy's rules


def test_an_unusable_policy_before_the_fork_starts_nothing(tcg_home):
    """What the station's load before the fork raises (an unusable policy) reaches
    the station, and no masking process was started (its own check refuses)."""
    from tcg.runner.maskproc import MaskerProcess

    class Unusable(Exception):
        pass

    def before():
        raise Unusable("policy")

    m = MaskerProcess("terminal", None, dict(os.environ), fork=True, before_fork=before)
    with pytest.raises(Unusable):
        m.start()
    assert m.pid is None and m.input_fd is None


def test_site_packages_are_added_under_dash_s_even_when_site_was_imported():
    """`python -S` with site imported (by anything) has not run site.main(): the
    station and its masking process must still add site-packages (hyperscan lives
    there), so "site" in sys.modules cannot be the sign that it ran."""
    code = ("import site, sys, tcg; had = any(p.endswith('site-packages') for p in sys.path); "
            "tcg.add_site_packages(); tcg.add_site_packages(); "
            "print(had, any(p.endswith('site-packages') for p in sys.path))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(tcg.__file__)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=root, env=env)
    assert out.stdout.split() == ["False", "True"]


# Not needed before a session's first masked byte, and loaded by none of what masks it: the
# fork's start (the first prompt waits for it) takes _thread and _signal (tcg._lean) instead
# of threading and signal's enum wrapper, binascii instead of base64 (and struct), and
# collections.abc only for annotations. (re, with enum and functools, it does need.)
NOT_AFTER_THE_FORK = ("threading", "signal", "base64", "struct", "collections.abc", "typing", "json",
                      "tcg.events")


def test_the_fork_loads_no_heavy_standard_module_before_its_first_masked_byte(tcg_home, tmp_path):
    """The station's own step before the fork (Session._policy_first: site-packages
    and the policy), then the fork: what it imports between the fork and its
    first write to the terminal (a prompt, nothing in it to mask) includes none of
    NOT_AFTER_THE_FORK, and it writes the prompt as it came."""
    probe = tmp_path / "loaded"
    code = (r"import os, sys; sys.path.append(sys.argv.pop(1))" "\n"
            r"from tcg.runner.session import Options, Session" "\n"
            r"s = Session(Options()); pol = s._policy_first()" "\n"
            r"r, w = os.pipe(); cr, cw = os.pipe(); pid = os.fork()" "\n"
            r"if pid == 0:" "\n"
            r"    before = set(sys.modules)" "\n"
            r"    import tcg.runner.term_writer as tw; orig = tw.TerminalWriter.put" "\n"
            r"    def spy(self, data):" "\n"
            r"        if data and not os.path.exists(sys.argv[1]):" "\n"
            r"            open(sys.argv[1], 'w').write(' '.join(sorted(set(sys.modules) - before)))" "\n"
            r"        orig(self, data)" "\n"
            r"    tw.TerminalWriter.put = spy" "\n"
            r"    from tcg.runner.session_mask import forked_main  # as maskproc's fork does" "\n"
            r"    forked_main('terminal', r, cr, pol)" "\n"
            r"os.close(r); os.close(cr); os.write(w, b'TCGSHOWN 0\n' + sys.argv[2].encode()); os.close(w)" "\n"
            r"_, st = os.waitpid(pid, 0); sys.exit(os.waitstatus_to_exitcode(st))")
    line = "\x1b]0;me@host: ~/src\x07\x1b[1mme@host\x1b[0m:~/src P1> "
    for _ in range(2):  # the first builds the start-up caches
        if probe.exists():
            probe.unlink()
        res = subprocess.run([sys.executable, "-I", "-S", "-c", code, ROOT, str(probe), line], timeout=180,
                             capture_output=True)
        assert res.returncode == 0, res.stderr
    assert res.stdout == line.encode()
    loaded = probe.read_text().split()
    assert "re" in loaded and "tcg.detect.hsdb" in loaded  # the probe saw the fork's own load
    assert sorted(m for m in loaded if m in NOT_AFTER_THE_FORK or m.startswith("typing.")) == [], " ".join(loaded)
