#!/usr/bin/env python3
"""What a person at a terminal feels: a plain shell against the same shell in a
tcg session, side by side in one run.

1. Key press -> next prompt, for `true`, `ls`, `cd .` and `seq 1 200000`:
   the shells run in tmux panes driven through one tmux control-mode client,
   three arms: plain, under `script -qfc` (one PTY hop, no masking) and in a
   tcg session.
   The time Enter is sent is taken just before the `send-keys Enter` command is
   written to the client; the prompt carries ``$EPOCHREALTIME`` (when the shell
   printed it) and the control client reports when its bytes reached tmux (on
   screen). Runs alternate between the plain and the session pane.
2. Start-up: a new pane -> its first prompt on screen, plain rc vs the same rc
   with the tcg hook (which execs `tcg_shell session`, which starts the shell
   again): what opening a terminal costs; the `script` arm again for scale.
   ``rc`` does the same with an rc file people have (Debian's default .bashrc,
   which loads bash-completion; zsh's compinit and promptinit), which a session
   runs twice unless the early start block comes first in it.
3. Bulk output: `cat` of a 200 MB text file through the session vs
   `script -qfc` (both on an outer PTY this script drains), as
   bench/throughput.py measures the one-command path; with the CPU the whole
   machine spent during each arm (Linux), which on a machine whose CPUs are all
   busy decides the throughput.

Medians; the machine is shared, so the load average is printed with them.

    .venv/bin/python bench/interactive_latency.py [--runs 30] [--pause 0] [--shells bash,zsh] [--mb 200]
        [--parts keys,startup,rc,bulk] [--baseline-tree /path/to/other/checkout]
        [--install VENV] [--baseline-install VENV]

``--baseline-tree``: a second tcg checkout (with its own ``.venv``) measured as a
fourth arm, "baseline", interleaved with this tree's session in the same run: an
A/B that the machine's load affects alike.

``--install`` / ``--baseline-install``: the sessions of a tcg installed the way
users install it (``pipx install .``, ``pip install``: a wheel, its bytecode
written by pip) in the virtual environment VENV, in place of this checkout's
editable install / as the baseline arm. An editable install names its code by
the state of every file in the checkout, a wheel by its RECORD (tcg.fingerprint):
the two do not cost the same.

Bytecode: a pip-installed tcg comes with its ``.pyc`` files; an editable
checkout writes them on first import unless PYTHONDONTWRITEBYTECODE is set, in
which case every Python start compiles every module again (~100 ms more to the
first prompt). The benchmark unsets it and compiles both trees first, so it
times what an installed tcg costs.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import make_text, on_outer_pty, on_outer_pty_cpu  # noqa: E402 - the sibling benchmark's helpers

PY = sys.executable
TCG_SHELL = str(Path(PY).with_name("tcg_shell"))
TMUX = shutil.which("tmux")
COMMANDS = ("true", "ls", "cd .", "seq 1 200000")
# The prompt: $EPOCHREALTIME from its 8th character ("054.350152"; zsh gives more
# decimals), short enough that no detection rule takes it for a number to mask.
PROMPT_RE = re.compile(rb"T(\d{3}\.\d{6,})> ")
# Each prompt also appends $EPOCHREALTIME to ~/prompts (a builtin, no process):
# that is "printed by the shell", read without depending on tmux's output.
RC = {
    "bash": "PS1='T${EPOCHREALTIME:7}> '\nPS2='> '\nbind 'set enable-bracketed-paste off'\n"
            "PROMPT_COMMAND='echo $EPOCHREALTIME >> ~/prompts'\n",
    "zsh": "zmodload zsh/datetime\nsetopt PROMPT_SUBST NO_PROMPT_SP\nPS1='T${EPOCHREALTIME:7}> '\n"
           "unset zle_bracketed_paste\n_b_log() { echo $EPOCHREALTIME >> ~/prompts }\n"
           "precmd_functions+=(_b_log)\n",
}
# What people's rc files commonly hold before the prompt (the "rc" part).
SKEL_BASHRC = Path("/etc/skel/.bashrc")
COMMON_RC = {
    "bash": SKEL_BASHRC.read_text() if SKEL_BASHRC.exists() else "",
    "zsh": "autoload -Uz compinit && compinit\nautoload -Uz promptinit && promptinit\n",
}
QUIET = ("seq 1 200000",)  # too much output for a control client: timed by ~/prompts only


def unescape(data: str) -> bytes:
    """tmux control mode escapes bytes < 32 and backslash as \\ooo."""
    return re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1), 8)), data).encode("latin-1", "replace")


class Control:
    """One tmux server and a control-mode client: commands in, pane output out
    (with its arrival time)."""

    def __init__(self, env: dict[str, str], width: int = 160, height: int = 45):
        self.socket = f"tcg-bench-{os.getpid()}"
        self.env = env
        subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "b",
                        "-x", str(width), "-y", str(height), "sleep 100000"], env=env, check=True)
        self.proc = subprocess.Popen([TMUX, "-L", self.socket, "-C", "attach", "-t", "b"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     bufsize=0)
        self.out: queue.Queue[tuple[float, str, bytes]] = queue.Queue()
        self.replies: queue.Queue[list[str]] = queue.Queue()
        self.unanswered = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.replies.get(timeout=60)  # the block tmux sends for the attach itself
        self.cmd(f"refresh-client -C {width}x{height}")

    def _read(self) -> None:
        block: list[str] | None = None
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            now = time.time()
            line = raw.decode("latin-1").rstrip("\n")
            if line.startswith("%output "):
                _, pane, data = line.split(" ", 2)
                self.out.put((now, pane, unescape(data)))
            elif line.startswith("%begin"):
                block = []
            elif line.startswith(("%end", "%error")) and block is not None:
                self.replies.put(block)
                block = None
            elif block is not None:
                block.append(line)

    def cmd(self, command: str) -> list[str]:
        assert self.proc.stdin is not None
        while self.unanswered:  # replies to earlier send()s come first
            self.replies.get(timeout=60)
            self.unanswered -= 1
        self.proc.stdin.write(command.encode() + b"\n")
        return self.replies.get(timeout=60)

    def send(self, command: str) -> float:
        """Write a command without waiting for its reply; the time it was written."""
        assert self.proc.stdin is not None
        t = time.time()
        self.proc.stdin.write(command.encode() + b"\n")
        self.unanswered += 1
        return t

    def new_pane(self, argv: list[str], env: dict[str, str]) -> tuple[float, str]:
        envs = " ".join(f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items())
        t = time.time()
        reply = self.cmd(f"new-window -d -P -F '#{{pane_id}}' {envs} {shlex.join(argv)}")
        return t, reply[0].strip()

    def wait_output(self, pane: str, pattern: re.Pattern[bytes], timeout: float = 120.0,
                    ) -> tuple[float, re.Match[bytes]]:
        """Arrival time of the pane output that completes ``pattern``."""
        buf = b""
        deadline = time.time() + timeout
        while True:
            try:
                t, p, data = self.out.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                screen = subprocess.run([TMUX, "-L", self.socket, "capture-pane", "-p", "-t", pane],
                                        capture_output=True, text=True, env=self.env).stdout
                raise SystemExit(f"timed out waiting for {pattern.pattern!r} in {pane}; got "
                                 f"{buf[-300:]!r}; screen:\n{screen.rstrip()}") from None
            if p != pane:
                continue
            buf += data
            m = pattern.search(buf)
            if m:
                return t, m

    def drain(self) -> None:
        while True:
            try:
                self.out.get_nowait()
            except queue.Empty:
                return

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], env=self.env, capture_output=True)
        self.proc.kill()


def full_time(suffix: str, near: float) -> float:
    """``054.350152`` (the last digits of the epoch) -> seconds, next to ``near``."""
    base = int(near // 1000) * 1000
    t = base + float(suffix)
    if t < near - 500:
        t += 1000
    elif t > near + 500:
        t -= 1000
    return t


def shell_argv(shell: str, home: Path) -> list[str]:
    exe = shutil.which(shell) or shell
    return [exe, "--noprofile", "--rcfile", str(home / ".bashrc"), "-i"] if shell == "bash" \
        else [exe, "-i"]


def make_home(root: Path, shell: str, hook: str | None, stable: bool = False, tag: str = "",
              common: bool = False, early: bool = False) -> Path:
    """A home whose rc file sets the timing prompt and, with ``hook`` (a
    tcg_shell path), appends that tcg's hook; ``common``: after COMMON_RC;
    ``early``: with the early start block first."""
    home = root / f"{shell}-{'tcg' if hook else 'plain'}{'-stable' if stable else ''}{tag}"
    home.mkdir(parents=True, exist_ok=True)
    rc = (COMMON_RC[shell] if common else "") + RC[shell]
    if stable:  # the same first screen every time (a session can show it before its masker is up)
        rc += "PS1='stable> '\n"
    if hook:
        rc += subprocess.run([hook, "init", shell], capture_output=True, text=True,
                             check=True).stdout
    if hook and early:
        rc = subprocess.run([hook, "init", shell, "--early"], capture_output=True, text=True,
                            check=True).stdout + rc
    (home / (".bashrc" if shell == "bash" else ".zshrc")).write_text(rc)
    return home


ARMS: tuple[str, ...] = ("plain", "script", "tcg session")
BASELINE = "baseline"  # the --baseline-tree's session
# Start-up only: the session without the masking fork server (TCG_MASK_SERVER=0),
# which is what the first session after login costs: a fresh masking process.
NO_SERVER = "no server"
BASE_NO_SERVER = "baseline no server"  # the same for the --baseline-tree
# Start-up only: the first session after `tcg_shell mask-server start` (a login
# profile's line) started a server, its own TCG_HOME so no other arm's session did.
LOGIN = "login server"
HOOKS = {"tcg session": TCG_SHELL, NO_SERVER: TCG_SHELL, LOGIN: TCG_SHELL}
EARLY, EARLY_NO_SERVER = "early", "early no server"  # the rc part: the early start block first


def arm_home(work: Path, shell: str, arm: str, stable: bool = False) -> Path:
    tag = {"script": "-script", BASELINE: "-baseline", NO_SERVER: "-noserver",
           BASE_NO_SERVER: "-baseline-noserver", LOGIN: "-login"}.get(arm, "")
    return make_home(work, shell, HOOKS.get(arm), stable, tag)


def arm_argv(shell: str, arm: str, home: Path) -> list[str]:
    """The shell as the arm runs it: plain, under script(1) (one PTY hop, no
    masking: what any terminal multiplexer costs), or with the tcg hook (which
    execs `tcg_shell session`)."""
    argv = shell_argv(shell, home)
    return ["script", "-qfc", shlex.join(argv), "/dev/null"] if arm == "script" else argv


def tcg_home(env: dict[str, str], arm: str) -> str:
    """The baseline tree has a TCG_HOME of its own: two installs sharing one would
    overwrite each other's start-up caches (each recompiles on every other start)."""
    if arm == LOGIN:
        return env["TCG_HOME"] + "-login"
    return env["TCG_HOME"] + ("-baseline" if arm in (BASELINE, "baseline session", BASE_NO_SERVER) else "")


def login_server(env: dict[str, str]) -> None:
    """What logging in does with `tcg_shell mask-server start` in the login profile:
    a new server (the one before it stopped), loaded, then a pause before the
    first terminal opens."""
    for args in (["stop"], ["start", "--wait", "120"]):
        subprocess.run([TCG_SHELL, "mask-server", *args], env=env, check=True, capture_output=True)
    time.sleep(1.0)


def pane_env(home: Path, base: dict[str, str], arm: str = "") -> dict[str, str]:
    env = {"HOME": str(home), "ZDOTDIR": str(home), "TCG_HOME": tcg_home(base, arm),
           "PATH": base["PATH"], "TERM": "xterm-256color", "LC_ALL": "C.UTF-8"}
    if arm in (NO_SERVER, BASE_NO_SERVER, EARLY_NO_SERVER):
        env["TCG_MASK_SERVER"] = "0"
    return env


def next_prompt(log: Path, count: int, timeout: float = 300.0) -> float:
    """The timestamp of prompt number ``count + 1`` in ``log``."""
    deadline = time.time() + timeout
    while True:
        lines = log.read_text().split() if log.exists() else []
        if len(lines) > count:
            return float(lines[count])
        if time.time() > deadline:
            raise SystemExit(f"no new prompt in {log}")
        time.sleep(0.001)


def key_to_prompt(ctl: Control, panes: dict[str, tuple[str, Path]], runs: int, pause: float = 0.0
                  ) -> dict[tuple[str, str], list[tuple[float, float | None]]]:
    """``pause``: seconds of quiet in a pane before its command is typed (people type seconds
    apart; a session looks at its policy files again after a quiet second)."""
    out: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
    for cmd in COMMANDS:
        quiet = cmd in QUIET
        if quiet:  # the control client would get megabytes of %output: off for the panes
            for pane, _log in panes.values():
                ctl.cmd(f"refresh-client -A '{pane}:off'")
        for _ in range(runs):
            for arm, (pane, log) in panes.items():
                ctl.drain()
                count = len(log.read_text().split())
                if pause:
                    time.sleep(pause)
                ctl.send(f"send-keys -t {pane} -l -- {shlex.quote(cmd)}")
                if quiet:
                    time.sleep(0.3)  # the echo cannot be watched: give it time
                else:
                    ctl.wait_output(pane, re.compile(re.escape(cmd.encode()) + rb"$"))
                t0 = ctl.send(f"send-keys -t {pane} Enter")
                printed = next_prompt(log, count)
                seen = None if quiet else ctl.wait_output(pane, PROMPT_RE)[0] - t0
                out.setdefault((arm, cmd), []).append((printed - t0, seen))
                if quiet:
                    time.sleep(1.0)  # let the screen catch up before the next run
        if quiet:
            for pane, _log in panes.values():
                ctl.cmd(f"refresh-client -A '{pane}:on'")
            time.sleep(2.0)
    return out


STABLE_RE = re.compile(rb"stable> ")


def startup(ctl: Control, argv: list[str], env: dict[str, str], runs: int,
            prompt: re.Pattern[bytes] = PROMPT_RE, printed: list[float] | None = None) -> list[float]:
    """New pane -> first prompt on screen, per run; ``printed``: where the prompt
    carries its timestamp, the time from pane to the shell printing it is added
    there (what the rest, printed -> on screen, is: the masker's wait)."""
    times = []
    for _ in range(runs):
        ctl.drain()
        t0, pane = ctl.new_pane(argv, env)
        seen, m = ctl.wait_output(pane, prompt)
        times.append(seen - t0)
        if printed is not None and m.groups():
            printed.append(full_time(m.group(1).decode(), seen) - t0)
        time.sleep(0.5)  # as a person would: read the prompt, then type
        ctl.send(f"send-keys -t {pane} -l -- exit")
        ctl.send(f"send-keys -t {pane} Enter")
        time.sleep(1.0)
        ctl.cmd(f"kill-pane -t {pane}")
    return times


def bulk(mb: int, runs: int, work: Path, env: dict[str, str]
         ) -> dict[str, list[tuple[float, float | None]]]:
    """Per arm, per round: (seconds, CPU-seconds the machine was busy meanwhile)."""
    big = work / "big.txt"
    make_text(big, mb * 1_000_000)
    bash = shutil.which("bash") or "/bin/bash"
    line = f"cat '{big}'"
    arms = {
        "script -qfc": ["script", "-qfc", line, "/dev/null"],
        "tcg_shell session": [TCG_SHELL, "session", "--shell", bash, "--", "--norc", "-c", line],
    }
    if BASELINE in HOOKS:
        arms["baseline session"] = [HOOKS[BASELINE], "session", "--shell", bash, "--", "--norc",
                                    "-c", line]
    results: dict[str, list[tuple[float, float | None]]] = {k: [] for k in arms}
    for name, argv in arms.items():  # warm caches
        on_outer_pty(argv, dict(env, TCG_HOME=tcg_home(env, name)))
    for _ in range(runs):
        for name, argv in arms.items():
            results[name].append(on_outer_pty_cpu(argv, dict(env, TCG_HOME=tcg_home(env, name))))
    return results


def bulk_report(b: dict[str, list[tuple[float, float | None]]], mb: int) -> list[str]:
    """Medians per arm, each session against ``script -qfc``: the ratio of the
    medians, the median of the rounds' own ratios (an arm's runs are interleaved
    with script's, so a round shares the machine's state of the moment), and the
    machine's CPU per arm (on a busy machine throughput follows it)."""
    base = "script -qfc"
    report = [f"\nbulk output, {mb} MB of text on an outer PTY, median of {len(b[base])}:"]
    for name, rounds in b.items():
        t = statistics.median(w for w, _ in rounds)
        cpus = [c for _, c in rounds if c is not None]
        cpu = f"  machine CPU {statistics.median(cpus):5.2f} s" if len(cpus) == len(rounds) else ""
        report.append(f"  {name:20s} {t:7.2f} s  {mb / t:7.1f} MB/s{cpu}")
    script_t = statistics.median(w for w, _ in b[base])
    for name, rounds in b.items():
        if name == base:
            continue
        pairs = list(zip(b[base], rounds, strict=True))
        paired = statistics.median(s[0] / r[0] for s, r in pairs)
        line = (f"  {name} = {script_t / statistics.median(w for w, _ in rounds):.2f}x script's "
                f"throughput (per round: {paired:.2f}x)")
        cpu_pairs = [(s[1], r[1]) for s, r in pairs if s[1] and r[1] is not None]
        if len(cpu_pairs) == len(pairs):
            line += f", {statistics.median(r / s for s, r in cpu_pairs):.2f}x its machine CPU"
        report.append(line)
    return report


def ms(values: list) -> float:
    return statistics.median(values) * 1e3


def added(values: dict[str, float], arm: str = "tcg session") -> str:
    text = f"added {values[arm] - values['plain']:+.1f}"
    if BASELINE in values:
        text += f" (baseline {values[BASELINE] - values['plain']:+.1f})"
    return text


def keys_part(ctl: Control, work: Path, shell: str, env: dict[str, str], runs: int,
              pause: float = 0.0) -> list[str]:
    homes = {arm: arm_home(work, shell, arm) for arm in ARMS}
    panes = {}
    for arm, home in homes.items():
        _, pane = ctl.new_pane(arm_argv(shell, arm, home), pane_env(home, env, arm))
        ctl.wait_output(pane, PROMPT_RE)
        ctl.send(f"send-keys -t {pane} -l -- {shlex.quote('cd ' + str(work / 'files'))}")
        ctl.send(f"send-keys -t {pane} Enter")
        ctl.wait_output(pane, PROMPT_RE)
        panes[arm] = (pane, home / "prompts")
    time.sleep(5.0)  # the session's masking process and background warm-up
    key_to_prompt(ctl, panes, 3)  # and a few unmeasured lines first
    res = key_to_prompt(ctl, panes, runs, pause)
    after = f", {pause:g} s after the pane's last output" if pause else ""
    report = [f"\n{shell}: key press -> next prompt, median of {runs}{after}, ms "
              f"(printed by the shell / on screen); added = session - plain"]
    for cmd in COMMANDS:
        cells = []
        med = {}
        for arm in ARMS:
            r = res[(arm, cmd)]
            med[arm] = (ms([x[0] for x in r]), None if cmd in QUIET else ms([x[1] for x in r]))  # type: ignore[misc]
            shown = "      -" if med[arm][1] is None else f"{med[arm][1]:7.2f}"
            cells.append(f"{arm} {med[arm][0]:7.2f} / {shown}")
        added_p = med["tcg session"][0] - med["plain"][0]
        added_s = ("      -" if med["plain"][1] is None else
                   f"{med['tcg session'][1] - med['plain'][1]:+7.2f}")  # type: ignore[operator]
        report.append(f"  {cmd:13s} " + "   ".join(cells) + f"   added {added_p:+7.2f} / {added_s}")
    for pane, _log in panes.values():
        ctl.cmd(f"kill-pane -t {pane}")
    return report


def startup_part(ctl: Control, work: Path, shell: str, env: dict[str, str], runs: int) -> list[str]:
    """New pane -> first prompt, the arms interleaved run by run."""
    report = [f"{shell}: new pane -> first prompt on screen, median of {runs}, ms:"]
    for stable, pattern, label in ((False, PROMPT_RE, "prompt with a timestamp (never the same)"),
                                   (True, STABLE_RE, "the same prompt every time")):
        arms = (*ARMS, LOGIN, NO_SERVER, *((BASE_NO_SERVER,) if BASE_NO_SERVER in HOOKS else ()))
        times: dict[str, list[float]] = {arm: [] for arm in arms}
        printed: dict[str, list[float]] = {arm: [] for arm in arms}
        homes = {arm: arm_home(work, shell, arm, stable) for arm in arms}
        for _ in range(runs):
            for arm in arms:
                if arm == LOGIN:
                    login_server(pane_env(homes[arm], env, arm))
                times[arm] += startup(ctl, arm_argv(shell, arm, homes[arm]),
                                      pane_env(homes[arm], env, arm), 1, pattern, printed[arm])
        starts = {arm: ms(v) for arm, v in times.items()}
        report.append(f"  {label:41s} " + ", ".join(f"{arm} {v:.1f}" for arm, v in starts.items())
                      + ", " + added(starts) + "".join(f", {arm} {starts[arm] - starts['plain']:+.1f}"
                                                       for arm in (LOGIN, NO_SERVER, BASE_NO_SERVER) if arm in starts))
        if not stable:  # where the time goes: the shell printing its prompt, then the wait to the screen
            report.append("    prompt printed by the shell / on screen: " + ", ".join(
                f"{arm} {ms(printed[arm]):.1f}/{starts[arm]:.1f}" for arm in arms if printed[arm]))
    return report


def rc_part(ctl: Control, work: Path, shell: str, env: dict[str, str], runs: int) -> list[str]:
    """New pane -> first prompt with a common rc file (COMMON_RC): plain, the
    hook last (the rc file runs twice), and the early start block first as well."""
    arms = ("plain", "tcg session", EARLY, NO_SERVER, EARLY_NO_SERVER)
    homes = {arm: make_home(work, shell, None if arm == "plain" else TCG_SHELL, tag=f"-rc-{arm}",
                            common=True, early=arm in (EARLY, EARLY_NO_SERVER)) for arm in arms}
    what = "Debian's .bashrc" if shell == "bash" else "compinit and promptinit"
    if shell == "bash" and not Path("/usr/share/bash-completion/bash_completion").exists():
        what += " (bash-completion is not installed: not loaded)"
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    for _ in range(runs):
        for arm in arms:
            times[arm] += startup(ctl, arm_argv(shell, "plain", homes[arm]),
                                  pane_env(homes[arm], env, arm), 1)
    starts = {arm: ms(v) for arm, v in times.items()}
    return [f"{shell}: new pane -> first prompt with a common rc file ({what}), median of {runs}, ms:",
            "  " + ", ".join(f"{arm} {v:.1f}" for arm, v in starts.items()),
            "  added: " + ", ".join(f"{arm} {starts[arm] - starts['plain']:+.1f}"
                                    for arm in arms[1:])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30, help="key presses per command and arm")
    ap.add_argument("--startups", type=int, default=15)
    ap.add_argument("--pause", type=float, default=0.0,
                    help="keys: seconds of quiet before each command is typed (default 0: "
                         "back to back)")
    ap.add_argument("--shells", default="bash,zsh")
    ap.add_argument("--mb", type=int, default=200, help="bulk output size (0: skip)")
    ap.add_argument("--bulk-runs", type=int, default=3)
    ap.add_argument("--parts", default="keys,startup,bulk",
                    help="which measurements: keys (key press -> prompt), startup, rc (start-up "
                         "with a common rc file), bulk")
    ap.add_argument("--baseline-tree", type=Path, default=None,
                    help="another tcg checkout with a .venv: its session as a fourth arm")
    ap.add_argument("--install", type=Path, default=None,
                    help="a virtual environment with tcg pip-installed: its sessions, not this checkout's")
    ap.add_argument("--baseline-install", type=Path, default=None,
                    help="a virtual environment with another tcg pip-installed: the baseline arm")
    a = ap.parse_args()
    if a.baseline_tree is not None and a.baseline_install is not None:
        raise SystemExit("--baseline-tree and --baseline-install name the same arm: give one")
    parts = set(a.parts.split(","))
    if TMUX is None:
        raise SystemExit("tmux is not installed")
    work = Path(tempfile.mkdtemp(prefix="tcg-ilat-"))
    env = dict(os.environ, TCG_HOME=str(work / "tcg-home"), TERM="xterm-256color")
    for var in ("TCG_SESSION", "TCG_SESSION_CHANNEL", "TCG_SESSION_PID", "TCG_MEDIATED",
                "TCG_ACTOR", "TCG_AGENT", "TMUX", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    global ARMS, TCG_SHELL
    # (arm, its venv's bin directory, the checkout to compile, or None: pip compiled it)
    tree = Path(__file__).resolve().parent.parent
    installs: list[tuple[str, Path, Path | None]] = [("tcg session", tree / ".venv" / "bin", tree)]
    if a.install is not None:
        installs[0] = ("tcg session", a.install.resolve() / "bin", None)
        TCG_SHELL = str(installs[0][1] / "tcg_shell")
        for arm in ("tcg session", NO_SERVER, LOGIN):
            HOOKS[arm] = TCG_SHELL
    if a.baseline_tree is not None:
        installs.append((BASELINE, a.baseline_tree.resolve() / ".venv" / "bin", a.baseline_tree.resolve()))
    if a.baseline_install is not None:
        installs.append((BASELINE, a.baseline_install.resolve() / "bin", None))
    if len(installs) > 1:
        HOOKS[BASELINE] = HOOKS[BASE_NO_SERVER] = str(installs[1][1] / "tcg_shell")
        ARMS = (*ARMS, BASELINE)
    for arm, bin_dir, checkout in installs:
        # what pip leaves installed: the bytecode, and a compiled detector cache
        if checkout is not None:
            subprocess.run([str(bin_dir / "python"), "-m", "compileall", "-q", str(checkout / "tcg")],
                           env=env, capture_output=True, check=True)
        subprocess.run([str(bin_dir / "tcg"), "mask", "--mode", "terminal"],
                       input=b"warm\n", env=dict(env, TCG_HOME=tcg_home(env, arm)),
                       capture_output=True, check=True)
    (work / "files").mkdir()
    for i in range(20):
        (work / "files" / f"file-{i:02d}.txt").write_text("x\n")
    loads = [os.getloadavg()[0]]
    ctl = Control(env)
    report: list[str] = []
    try:
        for shell in [s for s in a.shells.split(",") if s]:
            if "keys" in parts:
                report += keys_part(ctl, work, shell, env, a.runs, a.pause)
                loads.append(os.getloadavg()[0])
            if "startup" in parts:
                report += startup_part(ctl, work, shell, env, a.startups)
                loads.append(os.getloadavg()[0])
            if "rc" in parts:
                report += rc_part(ctl, work, shell, env, a.startups)
                loads.append(os.getloadavg()[0])
    finally:
        ctl.close()
        if "startup" in parts:  # the login arm's server would wait out its 12 hours
            subprocess.run([TCG_SHELL, "mask-server", "stop"], capture_output=True,
                           env=dict(env, TCG_HOME=tcg_home(env, LOGIN)))
    if a.mb and "bulk" in parts:
        b = bulk(a.mb, a.bulk_runs, work, env)
        loads.append(os.getloadavg()[0])
        report += bulk_report(b, a.mb)
    shutil.rmtree(work, ignore_errors=True)
    print(f"interactive latency: plain shell vs tcg session (load avg during the run: "
          f"{', '.join(f'{x:.1f}' for x in loads)} on {os.cpu_count()} CPUs)")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
