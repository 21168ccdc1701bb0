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

from tcg.shells.quoting import posix_quote

PROFILE_BEGIN_MARK = "# >>> tcg mask server >>>"
PROFILE_END_MARK = "# <<< tcg mask server <<<"
# The command as `tcg_shell mask-server start`, without site-packages (the server
# it launches has them) and without a console script to find on PATH.
ENTRY = ("import sys;sys.path.append(sys.argv.pop(1));from tcg.runner.maskserver_cmd import main;"
         "sys.exit(main(sys.argv[1:]))#tcg.shell_entry mask-server")


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
            f'if [ -z "${{TCG_SESSION-}}" ] && [ ! -S {q(socket)} ] && [ -x {q(python)} ]; then\n'
            f"  ({q(python)} -I -S -c {q(ENTRY)} {q(os.path.dirname(package))} start"
            " </dev/null >/dev/null 2>&1 &)\n"
            "fi\n"
            f"{PROFILE_END_MARK}\n")
