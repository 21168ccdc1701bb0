"""Pick the clipboard backend for this machine, or say clearly why there is none.

Linux: Wayland (``WAYLAND_DISPLAY`` + wl-paste) first, then X11 (``DISPLAY`` +
xclip, else xsel). macOS: pbpaste/pbcopy. Windows: PowerShell. A missing tool
or display is a ClipboardUnavailable error whose hint names the package.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping

from tcg.clipboard.backends import (
    ALIASES,
    BACKENDS,
    Backend,
    MacBackend,
    PowerShellBackend,
    Runner,
    WaylandBackend,
    XclipBackend,
    XselBackend,
)
from tcg.errors import TcgError

Which = Callable[[str], "str | None"]


class ClipboardUnavailable(TcgError):
    """No usable clipboard tool or display."""


def _install_hint(package: str) -> str:
    return (f"install {package}: `sudo apt install {package}` (Debian/Ubuntu), "
            f"`sudo dnf install {package}` (Fedora), `sudo pacman -S {package}` (Arch)")


def detect_backend(name: str | None = None, *, env: Mapping[str, str] | None = None,
                   platform: str | None = None, which: Which | None = None,
                   runner: Runner | None = None) -> Backend:
    """The backend to use: ``name`` if given (checked), else the platform's best."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    which = which or shutil.which
    if name:
        key = ALIASES.get(name, name)
        cls = BACKENDS.get(key)
        if cls is None:
            raise ClipboardUnavailable(
                f"unknown clipboard backend {name!r}",
                hint="choose one of: " + ", ".join(sorted(BACKENDS)), exit_code=2)
        _check(cls, env, platform, which)
        return cls(runner=runner)
    if platform == "darwin":
        _check(MacBackend, env, platform, which)
        return MacBackend(runner=runner)
    if platform == "win32" or platform == "cygwin":
        _check(PowerShellBackend, env, platform, which)
        return PowerShellBackend(runner=runner)
    if env.get("WAYLAND_DISPLAY"):
        if which("wl-paste") and which("wl-copy"):
            return WaylandBackend(runner=runner)
        if not env.get("DISPLAY"):
            raise ClipboardUnavailable(
                "Wayland session but wl-paste/wl-copy are not installed",
                hint=_install_hint("wl-clipboard"))
    if env.get("DISPLAY"):
        for cls in (XclipBackend, XselBackend):
            if which(cls.tool):
                return cls(runner=runner)
        raise ClipboardUnavailable("no X11 clipboard tool found (xclip or xsel)",
                                   hint=_install_hint("xclip"))
    raise ClipboardUnavailable(
        "no graphical display: neither DISPLAY nor WAYLAND_DISPLAY is set",
        hint="run the watcher inside your desktop session (docs/clipboard.md shows a systemd user "
             "unit that imports DISPLAY), or export DISPLAY=:0")


def _check(cls: type[Backend], env: Mapping[str, str], platform: str, which: Which) -> None:
    tools = [cls.tool]
    if cls is WaylandBackend:
        tools.append("wl-copy")
    if cls is MacBackend:
        tools.append("pbcopy")
    for tool in tools:
        if not which(tool):
            if cls is MacBackend:
                hint = "pbpaste/pbcopy ship with macOS; this backend works on macOS only"
            elif cls is PowerShellBackend:
                hint = "powershell.exe ships with Windows; this backend works on Windows only"
            else:
                hint = _install_hint(cls.package)
            raise ClipboardUnavailable(f"clipboard tool {tool!r} not found", hint=hint)
    if cls in (XclipBackend, XselBackend) and not env.get("DISPLAY"):
        raise ClipboardUnavailable(f"{cls.tool} needs an X11 display but DISPLAY is not set",
                                   hint="export DISPLAY=:0 (or run inside your desktop session)")
    if cls is WaylandBackend and not env.get("WAYLAND_DISPLAY"):
        raise ClipboardUnavailable("wl-clipboard needs WAYLAND_DISPLAY to be set",
                                   hint="run inside your Wayland session")
