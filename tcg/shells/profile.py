"""`tcg_shell init --profile`: the login profile's block that starts the masking
fork server at login (docs/shells.md, Install).

A login profile runs more often than at login: tmux starts login shells in
every pane, some terminals do in every window, and a session starts its shell
again with ``--login``. So the block costs nothing there: no Python runs while
the server's socket exists or inside a session, and otherwise the start runs in
the background (``( … & )``: no job notice, nothing waited for). POSIX sh, as
~/.profile is also read by sh and by display managers.
"""

from __future__ import annotations

import os
import sys

from tcg.errors import TcgError
from tcg.shells.quoting import posix_quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PROFILE_BEGIN_MARK = "# >>> tcg mask server >>>"
PROFILE_END_MARK = "# <<< tcg mask server <<<"
# The command as `tcg_shell mask-server start`, without site-packages (the server
# it launches has them) and without a console script to find on PATH.
ENTRY = ("import sys;sys.path.append(sys.argv.pop(1));from tcg.runner.maskserver_cmd import main;"
         "sys.exit(main(sys.argv[1:]))#tcg.shell_entry mask-server")


def profile_block(env: Mapping[str, str], python: str) -> str:
    """The block for this install (``python``, the interpreter `init` runs on) and
    ``env``; TcgError where no server can run, so the block would only start a
    Python at every login shell for nothing."""
    from tcg.runner import maskserver
    from tcg.shells.shells import package_dir

    if not sys.platform.startswith("linux"):
        raise TcgError("the masking fork server runs on Linux only: a login block would start "
                       "nothing", hint="every session starts a masking process of its own")
    if env.get(maskserver.ENV_SWITCH) == "0":
        raise TcgError("the masking fork server is off (TCG_MASK_SERVER=0): a login block would "
                       "start nothing", hint="unset TCG_MASK_SERVER to use it")
    socket = maskserver.socket_path(env)
    if len(socket.encode()) > maskserver.SUN_PATH_MAX:
        raise TcgError(f"the server's socket path is too long ({len(socket.encode())} bytes, at most "
                       f"{maskserver.SUN_PATH_MAX}): {socket}",
                       hint="a shorter TCG_HOME or XDG_STATE_HOME")
    return render_profile(python, package_dir(), socket)


def marked_block(text: str) -> str | None:
    """The block between the markers in a profile's ``text`` (markers included,
    trailing blanks dropped), or None."""
    lines = [line.rstrip() for line in text.splitlines()]
    if PROFILE_BEGIN_MARK not in lines:
        return None
    start = lines.index(PROFILE_BEGIN_MARK)
    end = lines.index(PROFILE_END_MARK, start) if PROFILE_END_MARK in lines[start:] else len(lines) - 1
    return "\n".join(lines[start:end + 1]) + "\n"


def render_profile(python: str, package: str, socket: str) -> str:
    """The block for ``python`` (the interpreter, never a shim), the tcg ``package``
    directory and the server's ``socket`` path as this environment places it (a
    login environment that places it elsewhere only starts a Python in the
    background that finds its server and leaves)."""
    q = posix_quote
    return (f"{PROFILE_BEGIN_MARK}\n"
            "# Starts tcg's masking fork server at login, unless one runs: the first terminal then\n"
            "# shows its prompt as soon as later ones (docs/shells.md). Remove: tcg_shell init\n"
            "# --uninstall bash --rc FILE.\n"
            f'if [ -z "${{TCG_SESSION-}}" ] && [ ! -S {q(socket)} ] && [ -x {q(python)} ] &&\n'
            f"  [ -r {q(os.path.join(package, 'runner', 'maskserver_cmd.py'))} ]; then\n"
            f"  ({q(python)} -I -S -c {q(ENTRY)} {q(os.path.dirname(package))} start"
            " </dev/null >/dev/null 2>&1 &)\n"
            "fi\n"
            f"{PROFILE_END_MARK}\n")
