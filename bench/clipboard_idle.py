"""Idle cost of `tcg clipboard watch`: CPU over N seconds of an unchanged clipboard.

Starts its own Xvfb (free display via -displayfd), copies a few KB of text
with xclip, starts the watcher (default interval 0.5 s) with a temporary
TCG_HOME, lets it settle, then measures for --seconds (default 60):

- the watcher process itself plus its reaped children (the xclip it runs),
  from psutil cpu_times — the figure the target applies to; by default the
  X11 watcher waits for XFixes owner-change events and reads only on an event
  or every 2 s; the same is measured with --no-hint (xclip every poll);
- the clipboard owner (the xclip -i process answering each read) and Xvfb,
  reported separately (cost the polling causes elsewhere).

Baseline in the same run: a minimal shell loop doing the same work
(`xclip -o > /dev/null; sleep 0.5`), so the ratio shows what tcg adds over the
bare tool. Target: watcher + children <= 1 % of one core.

    .venv/bin/python bench/clipboard_idle.py [--seconds 60] [--interval 0.5] [--baseline-seconds 20]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
TEXT = ("The quick brown fox jumps over the lazy dog; Съешь же ещё этих булок. 0123456789\n" * 50).encode()


def start_xvfb() -> tuple[subprocess.Popen, str]:
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0",
                             "320x200x24"], pass_fds=(w,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(w)
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(r, 64)
        if not chunk:
            raise SystemExit("Xvfb did not start")
        data += chunk
    os.close(r)
    return proc, f":{int(data)}"


def cpu(p: psutil.Process) -> float:
    t = p.cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def owner_of(env: dict[str, str]) -> psutil.Process | None:
    for p in psutil.process_iter(["cmdline", "environ"]):
        try:
            if p.info["cmdline"][:1] == ["xclip"] and "-i" in p.info["cmdline"] and \
                    (p.info["environ"] or {}).get("DISPLAY") == env["DISPLAY"]:
                return p
        except (psutil.Error, TypeError):
            continue
    return None


def measure(cmd: list[str], env: dict[str, str], seconds: float, settle: float,
            ready: str | None) -> tuple[float, float, float]:
    """(cpu % of one core for cmd+children, owner %, Xvfb %) over ``seconds``."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        if ready:
            assert proc.stderr is not None
            line = proc.stderr.readline().decode()
            if ready not in line:
                raise SystemExit(f"watcher did not start: {line.strip()}")
        time.sleep(settle)
        me = psutil.Process(proc.pid)
        owner = owner_of(env)
        xvfb = psutil.Process(int(env["_XVFB_PID"]))
        c0, o0, x0, t0 = cpu(me), cpu(owner) if owner else 0.0, cpu(xvfb), time.monotonic()
        time.sleep(seconds)
        c1, o1, x1, t1 = cpu(me), cpu(owner) if owner else 0.0, cpu(xvfb), time.monotonic()
        wall = t1 - t0
        return 100 * (c1 - c0) / wall, 100 * (o1 - o0) / wall, 100 * (x1 - x0) / wall
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--baseline-seconds", type=float, default=20.0)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--settle", type=float, default=2.0)
    args = ap.parse_args()
    xvfb, display = start_xvfb()
    with tempfile.TemporaryDirectory(prefix="tcg-clip-bench-") as home:
        env = {**os.environ, "DISPLAY": display, "TCG_HOME": home, "_XVFB_PID": str(xvfb.pid)}
        env.pop("WAYLAND_DISPLAY", None)
        try:
            subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=TEXT, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            base = measure(["sh", "-c", f"while :; do xclip -selection clipboard -t UTF8_STRING -o "
                            f">/dev/null 2>&1; sleep {args.interval}; done"],
                           env, args.baseline_seconds, 0.5, None)
            cmd = [sys.executable, "-m", "tcg", "clipboard", "watch", "--interval", str(args.interval)]
            watch = measure(cmd, env, args.seconds, args.settle, "watching")
            nohint = measure([*cmd, "--no-hint"], env, args.baseline_seconds, args.settle, "watching")
        finally:
            os.killpg(xvfb.pid, signal.SIGTERM)
            xvfb.wait(10)
    load = os.getloadavg()[0]
    print(f"clipboard watcher idle, interval {args.interval} s, {len(TEXT)} B unchanged text, "
          f"{args.seconds:.0f} s (load avg {load:.1f} on {os.cpu_count()} cores)")
    print(f"  watcher + its xclip children : {watch[0]:.2f} % of one core   (target <= 1 %)")
    print(f"  clipboard owner (xclip -i)   : {watch[1]:.2f} %   Xvfb: {watch[2]:.2f} %")
    print(f"  same, --no-hint (xclip every poll): {nohint[0]:.2f} %   ({args.baseline_seconds:.0f} s)")
    print(f"  baseline sh loop of xclip -o : {base[0]:.2f} %   ({args.baseline_seconds:.0f} s)")
    if base[0] > 0:
        print(f"  ratio watcher / bare-tool loop: {watch[0] / base[0]:.2f}x "
              f"(--no-hint: {nohint[0] / base[0]:.2f}x)")
    return 0 if watch[0] <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
