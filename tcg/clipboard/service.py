"""Background run, one native way per platform: the text of the file to install.

Linux: a systemd *user* unit bound to the graphical session (it needs the
session's DISPLAY / WAYLAND_DISPLAY). macOS: a launchd agent plist. Windows: a
Task Scheduler task that starts at logon in the user's session (a service
could not see the user's clipboard). The service manager restarts the watcher
and owns its lifetime, so tcg needs no pid file or double fork of its own.
docs/clipboard.md has the install commands.
"""

from __future__ import annotations

import os
import shutil
import sys
from xml.sax.saxutils import escape

PLATFORMS = ("systemd", "launchd", "windows")
LABEL = "dev.tcg.clipboard"
TASK_NAME = "tcg clipboard watcher"


def default_platform() -> str:
    if sys.platform == "darwin":
        return "launchd"
    if sys.platform in ("win32", "cygwin"):
        return "windows"
    return "systemd"


def watch_command(interval: float | None = None) -> list[str]:
    """Absolute argv of the watcher: the installed `tcg`, else this Python with -m tcg.

    On Windows it is pythonw.exe (no console window at logon) when there is one.
    """
    exe = shutil.which("tcg")
    # -I: never a tcg/ directory of the working directory in place of the installed package
    argv = [os.path.abspath(exe)] if exe else [sys.executable, "-I", "-m", "tcg"]
    if sys.platform == "win32":  # pragma: no cover - Windows only
        pyw = os.path.join(os.path.dirname(sys.executable), "pythonw.exe")
        if os.path.exists(pyw):
            argv = [pyw, "-I", "-m", "tcg"]
    argv += ["clipboard", "watch"]
    if interval is not None:
        argv += ["--interval", repr(float(interval))]
    return argv


def _systemd_quote(arg: str) -> str:
    # systemd.service(5) "COMMAND LINES": double quotes, C-style escapes; % is a specifier.
    arg = arg.replace("%", "%%")
    if arg and all(c.isalnum() or c in "/._-+=:," for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(argv: list[str]) -> str:
    exec_start = " ".join(_systemd_quote(a) for a in argv)
    return (
        "[Unit]\n"
        "Description=tcg clipboard watcher (masks secrets copied to the clipboard)\n"
        "PartOf=graphical-session.target\n"
        "After=graphical-session.target\n"
        "\n"
        "[Service]\n"
        f"ExecStart={exec_start}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n"
        "[Install]\n"
        "WantedBy=graphical-session.target\n"
    )


def launchd_plist(argv: list[str]) -> str:
    args = "".join(f"    <string>{escape(a)}</string>\n" for a in argv)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
        '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        '<plist version="1.0">\n'
        "<dict>\n"
        f"  <key>Label</key>\n  <string>{LABEL}</string>\n"
        "  <key>ProgramArguments</key>\n  <array>\n"
        f"{args}"
        "  </array>\n"
        "  <key>RunAtLoad</key>\n  <true/>\n"
        "  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n"
        "  <key>ProcessType</key>\n  <string>Background</string>\n"
        "  <key>StandardErrorPath</key>\n  <string>/tmp/tcg-clipboard.log</string>\n"
        "</dict>\n"
        "</plist>\n"
    )


def _cmd_quote(arg: str) -> str:
    # Inside schtasks /TR the command is one argument; inner quotes are \" (schtasks /? ).
    return '\\"' + arg + '\\"' if (" " in arg or not arg) else arg


def windows_task(argv: list[str]) -> str:
    """A `schtasks` command line (cmd.exe) creating a logon task for the current user."""
    tr = " ".join(_cmd_quote(a) for a in argv)
    return (f'schtasks /Create /TN "{TASK_NAME}" /SC ONLOGON /RL LIMITED /F '
            f'/TR "{tr}"\n')


def render(platform: str, argv: list[str] | None = None) -> str:
    argv = argv or watch_command()
    if platform == "systemd":
        return systemd_unit(argv)
    if platform == "launchd":
        return launchd_plist(argv)
    if platform == "windows":
        return windows_task(argv)
    raise ValueError(f"unknown platform {platform!r} (one of {', '.join(PLATFORMS)})")
