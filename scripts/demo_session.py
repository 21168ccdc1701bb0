#!/usr/bin/env python3
"""`make demo`: a tcg terminal session, typed at by this script.

A throw-away HOME whose ~/.bashrc has the hook appended (`tcg_shell init bash
>> ~/.bashrc`), a bash started on a pseudo-terminal as a terminal emulator
would, then a few lines typed into it. What the terminal showed is printed as
it arrives: the shell became a session, a token is masked, a read of tcg's key
is refused before it runs, a background job is the shell's own, `rm -rf` goes
to tcg's trash first and `tcg restore` brings it back. Then the same
for an agent actor reading .env. Driven with ptyprocess (a tcg dependency).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptyprocess import PtyProcess

TCG_SHELL = shutil.which("tcg_shell") or str(Path(sys.executable).with_name("tcg_shell"))
TCG = str(Path(TCG_SHELL).with_name("tcg"))
PROMPT = "demo$ "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: str):
        self.proc = PtyProcess.spawn(argv, env=env, cwd=cwd, dimensions=(30, 110))
        self.seen = ""
        self.log = ""  # everything shown so far

    def expect(self, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise SystemExit(f"demo: timed out waiting for {text!r}")
            try:
                chunk = self.proc.read(4096).decode("utf-8", "replace")
            except EOFError:
                raise SystemExit(f"demo: the shell ended before {text!r}") from None
            clean = ANSI.sub("", chunk)
            sys.stdout.write(clean)
            sys.stdout.flush()
            self.seen += clean
            self.log += clean
        self.seen = self.seen[self.seen.index(text) + len(text):]

    def type(self, line: str) -> None:
        self.proc.write(line.encode() + b"\r")
        self.expect(PROMPT)

    def close(self) -> None:
        self.proc.write(b"exit\r")
        try:
            while True:
                self.proc.read(4096)
        except EOFError:
            pass
        self.proc.wait()


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="tcg-demo-session-"))
    try:
        home, work = root / "home", root / "work"
        home.mkdir()
        work.mkdir()
        hook = subprocess.run([TCG_SHELL, "init", "bash"], capture_output=True, text=True,
                              check=True).stdout
        (home / ".bashrc").write_text(f"PS1='{PROMPT}'\nbind 'set enable-bracketed-paste off'\n" + hook)
        (work / "notes.txt").write_text("deploy token: ghp_" + "Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8\n")
        (work / ".env").write_text("DATABASE_URL=postgres://app:not-a-real-password@db/app\n")
        env = dict(os.environ, HOME=str(home), TERM="xterm-256color")
        env.setdefault("TCG_HOME", str(root / "tcg-home"))  # `make demo` sets a throw-away one
        for var in ("TCG_SESSION", "TCG_SESSION_CHANNEL", "TCG_SESSION_PID", "TCG_MEDIATED",
                    "TCG_ACTOR", "TCG_AGENT", "TCG_SESSION_AUTO"):
            env.pop(var, None)
        bash = shutil.which("bash") or "/bin/bash"
        print("# A terminal opens bash; the hook in ~/.bashrc turns it into a tcg session:")
        term = Terminal([bash, "-i"], env, str(work))
        term.expect(PROMPT)
        term.type("tr '\\0' ' ' < /proc/$PPID/cmdline; echo")
        term.type("cat notes.txt")
        term.type('cp "$TCG_HOME/state/key" stolen.key; echo this does not run either')
        term.type("(sleep 1; echo background job done) & jobs")
        time.sleep(1.5)
        term.type("echo $?")
        term.type("mkdir -p build && echo generated > build/out.txt")
        term.type("rm -rf build; ls")
        txid = re.findall(r"tcg restore ([0-9A-Za-z.-]+)\)", term.log)[-1]
        term.type(f"{shlex.quote(TCG)} restore {txid}; cat build/out.txt")
        term.close()
        print("\n\n# The same terminal for an agent actor (TCG_ACTOR=agent): .env is never opened")
        term = Terminal([bash, "-i"], dict(env, TCG_ACTOR="agent"), str(work))
        term.expect(PROMPT)
        term.type("cat .env")
        term.close()
        print()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
