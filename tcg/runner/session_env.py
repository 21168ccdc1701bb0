"""The settings a session's station read from its environment, against its shell's.

The station finds its policy, its files and the values of the paths it resolves
in a line (``$TMPDIR``, ``$HOME`` …) in the environment it started with. The
shell inside may set them differently further down its rc file (below the early
start block, docs/shells.md) or by hand before starting a nested shell; the
station would then decide and mask by other settings than the shell runs with.

So the station names the settings it watches in ``TCG_SESSION_ENV`` (names only,
space-separated), the hook sends their values in its hello (``NAME=VALUE`` or a
bare ``NAME`` for an unset one, each ended by US, \\x1f), and the station answers
with the names whose effect differs; the hook then says so. The values are paths
and switches that are in the environment anyway; nothing here is logged.
"""

from __future__ import annotations

import posixpath

from tcg.paths import RESOLVABLE_VARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_WATCHED = "TCG_SESSION_ENV"
SEP = "\x1f"
# Where tcg's files and policy are, which detector runs, whether a terminal is a
# session at all, and the paths a line's words resolve from (its PWD comes with
# each request instead). Who the actor is needs no check: a request names an agent
# actor itself, and it can only make the station stricter.
WATCHED = tuple(sorted(
    {"TCG_HOME", "TCG_POLICY", "TCG_PROJECT", "TCG_DETECT_ENGINE", "TCG_SESSION_AUTO"}
    | (RESOLVABLE_VARS - {"PWD"})))
# zsh sets LOGNAME itself when its environment lacks it (`env -i`, some containers);
# a station without it resolves nothing from it either.
_SHELL_SET = ("LOGNAME",)


def watched_names() -> str:
    """The value of TCG_SESSION_ENV for the shell."""
    return " ".join(WATCHED)


def parse(text: str) -> tuple[dict[str, str | None], set[str]]:
    """The hook's hello text: the watched names it sent with their values (None:
    unset), and the names sent more than once (a value holding the separator)."""
    out: dict[str, str | None] = {}
    twice: set[str] = set()
    for item in text.split(SEP):
        name, eq, value = item.partition("=")
        if name in WATCHED:
            if name in out:
                twice.add(name)
            out[name] = value if eq else None
    return out, twice


def _effect(name: str, value: str | None) -> object:
    """What a value changes for the station. A line's words resolve the path
    variables (XDG ones included) as text: a variable the station lacks is an
    unknown part of a path, which its checks cannot place, so that is a difference
    even where the shell sets the default. Paths count after normalising
    (``/tmp/`` is ``/tmp``), the opt-out only as on or off, an empty value as unset."""
    if name == "TCG_SESSION_AUTO":
        return value == "0"
    if value and value.startswith("/"):
        return posixpath.normpath(value)
    return value or None


def differing(station_env: Mapping[str, str], hello_text: str) -> list[str]:
    """The watched names the shell has with another effect than the station; none
    when the hello carried no values (a hook from before this check)."""
    shell, twice = parse(hello_text)
    return [name for name in WATCHED if name in shell and (
        name in twice or (_effect(name, shell[name]) != _effect(name, station_env.get(name))
                          and not (name in _SHELL_SET and name not in station_env)))]
