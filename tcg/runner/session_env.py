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

from tcg.paths import RESOLVABLE_VARS, xdg_paths

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
    {"TCG_HOME", "TCG_POLICY", "TCG_PROJECT", "TCG_DETECT_ENGINE", "TCG_SESSION_AUTO",
     "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} | (RESOLVABLE_VARS - {"PWD"})))
_XDG = {"XDG_CONFIG_HOME": "config", "XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "cache"}


def watched_names() -> str:
    """The value of TCG_SESSION_ENV for the shell."""
    return " ".join(WATCHED)


def parse(text: str) -> dict[str, str | None]:
    """The hook's hello text: the watched names it sent, with their values (None: unset)."""
    out: dict[str, str | None] = {}
    for item in text.split(SEP):
        name, eq, value = item.partition("=")
        if name in WATCHED:
            out[name] = value if eq else None
    return out


def _effect(name: str, env: Mapping[str, str | None]) -> object:
    """What ``name``'s value changes for the station: an XDG base directory counts
    only as the directory it makes (unset, blank or relative: the default under
    the home directory, tcg.paths; a changed HOME is a difference of its own); the
    opt-out only as on or off; an empty value as unset."""
    value = env.get(name)
    if name in _XDG:
        return getattr(xdg_paths({name: value} if value is not None else {}), _XDG[name])
    if name == "TCG_SESSION_AUTO":
        return value == "0"
    return value or None


def differing(station_env: Mapping[str, str], hello_text: str) -> list[str]:
    """The watched names the shell has with another effect than the station; none
    when the hello carried no values (a hook from before this check)."""
    shell = parse(hello_text)
    return [name for name in WATCHED
            if name in shell and _effect(name, shell) != _effect(name, station_env)]
