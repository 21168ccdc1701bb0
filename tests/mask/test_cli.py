"""`tcg mask` as a real filter process: streaming, both modes' timing
acceptance, exit codes, no leaks anywhere, bounded memory."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.leaks import assert_no_secret_written
from tests.mask.helpers import leaks, needles_of, plants

TCG = str(Path(sys.executable).with_name("tcg"))
KEY_TAIL = "Z7QH3KX9LM2PW4RT"  # AKIA + this: a fake AWS key id of the documented shape


def _read_until(fd: int, want: bytes, timeout: float) -> bytes:
    buf = b""
    end = time.monotonic() + timeout
    while want not in buf and time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
    return buf


def _no_part_of_key(out: bytes) -> None:
    tail = KEY_TAIL.encode()
    for i in range(len(tail) - 3):
        assert tail[i : i + 4] not in out


def test_acceptance_split_key_is_masked_in_both_modes():
    """printf 'AKIA'; sleep 0.2; printf '<rest>\\n' | tcg mask --mode M prints no part of the key."""
    for mode in ("strict", "terminal"):
        script = f"printf 'AKIA'; sleep 0.2; printf '{KEY_TAIL}\\n'"
        res = subprocess.run(["sh", "-c", f"({script}) | {TCG} mask --mode {mode}"],
                             capture_output=True, timeout=120)
        assert res.returncode == 0, res.stderr
        _no_part_of_key(res.stdout + res.stderr)
        assert b"<SECRET:aws-access-key-id:" in res.stdout


def test_acceptance_terminal_releases_plain_text_before_the_next_write():
    """hello is shown while `world` has not been written yet (the writer waits for it)."""
    p = subprocess.Popen([TCG, "mask", "--mode", "terminal"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write(b"hello ")
        p.stdin.flush()
        first = _read_until(p.stdout.fileno(), b"hello ", 60)
        assert first == b"hello "
        p.stdin.write(b"world\n")
        p.stdin.close()
        assert _read_until(p.stdout.fileno(), b"world\n", 60) == b"world\n"
        assert p.wait(60) == 0
    finally:
        p.kill()
        p.wait()


def test_terminal_releases_a_held_prefix_after_the_hold_time():
    p = subprocess.Popen([TCG, "mask", "--mode", "terminal"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write(b"see AKIA")
        p.stdin.flush()
        got = _read_until(p.stdout.fileno(), b"AKIA", 60)  # released by release_idle()
        assert got == b"see AKIA"
        p.stdin.close()
        assert p.wait(60) == 0
    finally:
        p.kill()
        p.wait()


def test_strict_mode_streams_before_eof():
    """Output flows while stdin is still open (os.read on the fd, not read-all)."""
    p = subprocess.Popen([TCG, "mask"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        line = b"build step ok 0123456789 lorem ipsum\n"
        p.stdin.write(line * 3000)
        p.stdin.flush()
        got = _read_until(p.stdout.fileno(), line * 100, 60)
        assert len(got) >= len(line) * 100 and p.poll() is None
        p.stdin.close()
        rest = _read_until(p.stdout.fileno(), b"\x00never", 60)
        assert got + rest == line * 3000
        assert p.wait(60) == 0
    finally:
        p.kill()
        p.wait()


def test_file_argument_dash_and_errors(tmp_path):
    f = tmp_path / "out.log"
    f.write_bytes(b"token AKIA" + KEY_TAIL.encode() + b" end\n")
    res = subprocess.run([TCG, "mask", str(f)], capture_output=True, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith(b"token <SECRET:aws-access-key-id:")
    res = subprocess.run([TCG, "mask", "-"], input=f.read_bytes(), capture_output=True, timeout=120)
    assert res.returncode == 0 and b"<SECRET:" in res.stdout
    res = subprocess.run([TCG, "mask", str(tmp_path / "missing")], capture_output=True, timeout=120)
    assert res.returncode == 1 and b"cannot read" in res.stderr and res.stdout == b""
    res = subprocess.run([TCG, "mask", "--mode", "fast"], input=b"", capture_output=True, timeout=120)
    assert res.returncode == 2


def test_no_value_reaches_stdout_stderr_or_tcg_home(tcg_home):
    chosen = plants()[::7]
    data = b"".join(b"line\n" + p.text + b"\n" for p in chosen)
    for mode in ("strict", "terminal"):
        res = subprocess.run([TCG, "mask", "--mode", mode], input=data, capture_output=True,
                             timeout=120)
        assert res.returncode == 0
        assert res.stdout.count(b"<SECRET:") + res.stdout.count(b"<PII:") >= len(chosen) // 2
        assert leaks(res.stdout + b"\x00" + res.stderr, needles_of(chosen)) == []
    # The compiled-pattern cache under TCG_HOME holds rule literals ("hooks.slack.com/"); it
    # must not depend on the input: identical to the cache of a run that saw no input.
    clean = tcg_home.parent / "clean-home"
    subprocess.run([TCG, "mask"], input=b"", capture_output=True, timeout=120, check=True,
                   env={**os.environ, "TCG_HOME": str(clean)})
    cache = {p.relative_to(tcg_home): p.read_bytes()
             for p in (tcg_home / "cache").rglob("*") if p.is_file()} if (tcg_home / "cache").exists() else {}
    for rel, content in cache.items():
        if rel.name == "policy-snapshots.bin":
            continue  # the effective policy, written once the install key exists: grepped below
        assert (clean / rel).read_bytes() == content, rel
        (tcg_home / rel).unlink()
    values = [v.decode("utf-8", "replace") for p in chosen for v in p.values if len(v) >= 12]
    assert_no_secret_written(tcg_home, values)


def test_memory_stays_bounded_on_a_large_stream():
    """64 MB through `tcg mask`: peak RSS grows by far less than the input (the 2 GB run
    is bench/mask_throughput.py --rss)."""
    prog = ("import sys; from tcg.cli import main; rc = main(['mask']); "
            "s = open('/proc/self/status').read(); "
            "sys.stderr.write([l for l in s.splitlines() if l.startswith('VmHWM')][0]); sys.exit(rc)")

    def hwm_kb(total: int) -> int:
        p = subprocess.Popen([sys.executable, "-c", prog], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        block = (b'{"level":"info","msg":"request served","path":"/api/items","ms":12}\n' * 1000)
        block += b"export AWS_ACCESS_KEY_ID=AKIA" + KEY_TAIL.encode() + b"\n"
        sent = 0
        while sent < total:
            p.stdin.write(block)
            sent += len(block)
        p.stdin.close()
        err = p.stderr.read()
        assert p.wait(300) == 0, err
        return int(err.split()[-2])

    base = hwm_kb(1)
    big = hwm_kb(64 << 20)
    assert big - base < 40 * 1024, (base, big)


def test_consumer_going_away_is_not_an_error():
    script = (f"yes 'line of output' | head -c 3000000 | {{ {TCG} mask; echo \"rc=$?\" >&2; }} | head -1")
    res = subprocess.run(["bash", "-c", script], capture_output=True, timeout=120)
    assert res.stdout == b"line of output\n"
    assert res.stderr == b"rc=0\n"


def test_one_grammar_whichever_entry_parses(tmp_path, capsys):
    """`tcg mask` parses its arguments once (tcg.mask.filter.parse_args); the click
    command only renders --help and hands anything else to the same function."""
    from tcg.cli import main
    from tcg.cli.app import cli
    from tcg.errors import run_with_error_handler

    for bad in (["--bogus"], ["a", "b"], ["--mode", "fast"], ["--mode"], [str(tmp_path)]):
        rc = main(["mask", *bad])
        routed = capsys.readouterr()
        assert (rc, routed.out) == (2, "") and routed.err.startswith("tcg: ") and "hint:" in routed.err, bad
        rc2 = run_with_error_handler(lambda bad=bad: cli.main(args=["mask", *bad], prog_name="tcg", standalone_mode=False))
        assert (rc2, capsys.readouterr()) == (rc, routed)
    res = subprocess.run([TCG, "mask", "--help"], capture_output=True, timeout=120)
    assert res.returncode == 0 and b"--mode [strict|terminal]" in res.stdout
