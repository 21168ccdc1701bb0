"""`tcg clipboard watch` as a process against a real X clipboard (Xvfb + xclip).

The loop tests measure how long a planted token survives and print it (the
figure goes into the report); they assert the behaviour with generous timeouts,
never the speed.
"""

from __future__ import annotations

import os
import plistlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tcg.events import iter_records
from tests.clipboard.conftest import XServer, copy, needs_x, paste
from tests.clipboard.helpers import argv_logging_shim, fake_pat, path_with
from tests.helpers.leaks import assert_no_secret_written
from tests.helpers.waiting import wait_for

pytestmark = needs_x

TCG = [sys.executable, "-m", "tcg"]


def events(tcg_home: Path) -> list[dict]:
    return list(iter_records(tcg_home / "state" / "events.jsonl"))


class Watcher:
    """`tcg clipboard watch` in a subprocess; stderr collected by a thread."""

    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen([*TCG, "clipboard", "watch", *args], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.err: list[str] = []
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()
        wait_for(lambda: any("watching the clipboard" in line for line in self.err) or
                 self.proc.poll() is not None, timeout=60)
        assert self.proc.poll() is None, self.err

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.err.append(raw.decode("utf-8", "replace"))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(30)
        self._t.join(10)
        return rc


def masked(tok: str, prefix: str) -> bool:
    """The clipboard holds this copy (``prefix``) with ``tok`` masked."""
    got = paste()
    return tok.encode() not in got and got.startswith(f"{prefix}<SECRET:github-pat-classic:".encode())


def test_once_masks_a_planted_token(display, tcg_home):
    tok = fake_pat()
    copy(f"export GITHUB_TOKEN={tok}\n".encode())
    r = subprocess.run([*TCG, "clipboard", "watch", "--once"], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == b"masked"
    got = paste()
    assert got.startswith(b"export GITHUB_TOKEN=<SECRET:github-pat-classic:") and tok.encode() not in got
    assert [e["event"] for e in events(tcg_home)] == ["clipboard_masked"]
    assert tok.encode() not in r.stdout + r.stderr
    assert_no_secret_written(tcg_home, [tok])


def test_loop_masks_within_two_intervals_and_never_puts_content_in_argv(display, tcg_home, tmp_path):
    argv_log = tmp_path / "argv.log"
    env = {**os.environ, "PATH": path_with(argv_logging_shim(tmp_path, argv_log))}
    seen_cmdlines: list[bytes] = []
    stop = threading.Event()

    def sample_proc() -> None:  # every process on the machine, every few ms: argv of all
        while not stop.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as f:
                            seen_cmdlines.append(f.read())
                    except OSError:
                        pass
            time.sleep(0.005)

    sampler = threading.Thread(target=sample_proc, daemon=True)
    w = Watcher("--interval", "0.5", env=env)
    sampler.start()
    tokens, delays = [], []
    try:
        for i in range(3):
            tok = fake_pat()
            tokens.append(tok)
            copy(f"round {i}: {tok}\n".encode(), wait=False)
            t0 = time.monotonic()
            wait_for(lambda tok=tok, i=i: masked(tok, f"round {i}: "), timeout=30, interval=0.01)
            delays.append(time.monotonic() - t0)
        # rapid changes: three copies back to back; the last one wins and is masked
        burst = [fake_pat() for _ in range(3)]
        tokens += burst
        for j, tok in enumerate(burst):
            copy(f"burst {j} {tok}\n".encode(), wait=False)
            # xclip's child takes the selection a moment after xclip returns: keep the order
            wait_for(lambda j=j: paste().startswith(f"burst {j} ".encode()), timeout=20, interval=0.005)
        wait_for(lambda: masked(burst[-1], "burst 2 "), timeout=30)
        time.sleep(1.2)  # two more polls: nothing older may overwrite the last copy
        last = paste()
        assert last.startswith(b"burst 2 <SECRET:github-pat-classic:")
        assert all(t.encode() not in last for t in burst)
    finally:
        stop.set()
        sampler.join(10)
        assert w.stop() == 0
    print(f"\nclipboard token lifetime at 0.5 s interval: {', '.join(f'{d:.2f}' for d in delays)} s")
    assert all(d < 30 for d in delays)
    logged = argv_log.read_text()
    assert "'-i'" in logged and "'-o'" in logged and "'TARGETS'" in logged  # not vacuous
    assert len(seen_cmdlines) > 100
    blob = logged.encode() + b"\n".join(seen_cmdlines)
    for tok in tokens:
        assert tok.encode() not in blob
        assert tok[4:16].encode() not in blob
    assert len([e for e in events(tcg_home) if e["event"] == "clipboard_masked"]) >= 4
    assert_no_secret_written(tcg_home, tokens)
    assert not any(t in "".join(w.err) for t in tokens)


def test_display_going_away_is_survived_and_logged_once(tcg_home, monkeypatch):
    srv = XServer().start()
    try:
        monkeypatch.setenv("DISPLAY", srv.display)
        w = Watcher("--interval", "0.2")
        srv.stop()
        time.sleep(1.5)  # several polls against a dead display
        assert w.proc.poll() is None, w.err
        srv = XServer(srv.display_num).start()
        tok = fake_pat()
        copy(f"after restart {tok}".encode(), wait=False)
        wait_for(lambda: masked(tok, "after restart "), timeout=30)
        assert w.stop() == 0
    finally:
        srv.stop()
    display_lines = [line for line in w.err if "display went away" in line]
    assert len(display_lines) == 1, w.err
    assert any("recovered: read:display" in line for line in w.err)


def test_no_display_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    r = subprocess.run([*TCG, "clipboard", "watch", "--once"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert "no graphical display" in r.stderr and "hint:" in r.stderr


def test_service_files_per_platform():
    unit = subprocess.run([*TCG, "clipboard", "service", "--platform", "systemd"],
                          capture_output=True, text=True, timeout=60, check=True).stdout
    assert "ExecStart=" in unit and "clipboard watch" in unit and "graphical-session.target" in unit
    plist = subprocess.run([*TCG, "clipboard", "service", "--platform", "launchd", "--interval", "1"],
                           capture_output=True, timeout=60, check=True).stdout
    parsed = plistlib.loads(plist)
    assert parsed["Label"] == "dev.tcg.clipboard" and parsed["RunAtLoad"] is True
    assert parsed["ProgramArguments"][-4:] == ["clipboard", "watch", "--interval", "1.0"]
    task = subprocess.run([*TCG, "clipboard", "service", "--platform", "windows"],
                          capture_output=True, text=True, timeout=60, check=True).stdout
    # Windows cannot run here: we check the exact schtasks command it would run.
    assert task.startswith('schtasks /Create /TN "tcg clipboard watcher" /SC ONLOGON /RL LIMITED /F /TR "')


def test_systemd_quoting_of_odd_paths():
    from tcg.clipboard.service import launchd_plist, systemd_unit

    unit = systemd_unit(["/opt/my tools/tcg", "clipboard", "watch", "50%"])
    assert 'ExecStart="/opt/my tools/tcg" clipboard watch "50%%"' in unit
    assert plistlib.loads(launchd_plist(["/a&b/<tcg>"]).encode())["ProgramArguments"] == ["/a&b/<tcg>"]
