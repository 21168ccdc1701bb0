"""`tcg agents install|uninstall claude`: tcg's hooks in Claude Code's user settings.

For users who start `claude` directly rather than through `tcg launch claude`
(which wires the hooks for one session with ``--settings`` and touches no file
of the user's). Install merges tcg's hook entries into
``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json`` when that is
set): it keeps a copy of the file as it was (``settings.json.tcg-bak``), writes
atomically with the file's mode, and is idempotent (tcg's entries are replaced,
never duplicated). Uninstall removes exactly tcg's entries — recognised by
their arguments and ``statusMessage``, whatever interpreter they name — and
the matcher groups and event lists that held only them, so install followed by
uninstall gives back the settings the user had.

Claude Code's own hooks (tcg.agents.claude) are the same whichever way they
are wired; what install cannot give is the shell prefix for the Bash tool:
Bash commands are then decided by the PreToolUse hook and their output masked
by PostToolUse, but they do not run through the station (no OS view).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcg.agents import claude
from tcg.agents.settings import merge_hooks
from tcg.errors import TcgError

BACKUP_SUFFIX = ".tcg-bak"


class InstallError(TcgError):
    """The agent's settings cannot be read or written (nothing was changed)."""


def claude_settings_path(env: Mapping[str, str]) -> Path:
    base = env.get("CLAUDE_CONFIG_DIR")
    if base:
        return Path(base).expanduser() / "settings.json"
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude" / "settings.json"


def read_settings(path: Path) -> dict[str, Any] | None:
    """The settings object, None when the file does not exist. InstallError when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror}", hint=f"check the permissions of {path}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); nothing was changed",
                           hint="fix the file (Claude Code would not read it either), then run this again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; nothing was changed", hint="fix the file")
    return data


def without_tcg_hooks(hooks: object) -> dict[str, Any]:
    """A hooks block with tcg's entries (and the groups and events left empty by that) removed."""
    out: dict[str, Any] = {}
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                entries = [h for h in group["hooks"] if not claude.is_tcg_hook(h)]
                if not entries and len(entries) != len(group["hooks"]):
                    continue  # the group held only tcg's hooks
                group = {**group, "hooks": entries}
            kept_groups.append(group)
        if kept_groups or not groups:
            out[event] = kept_groups
    return out


def tcg_interpreters(settings: Mapping[str, Any]) -> set[str]:
    """The interpreters tcg's hook entries in ``settings`` start."""
    hooks = settings.get("hooks")
    found: set[str] = set()
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks", []) if isinstance(group, dict) else ():
                if claude.is_tcg_hook(hook) and isinstance(hook.get("command"), str):
                    found.add(hook["command"])
    return found


def installed(settings: Mapping[str, Any]) -> bool:
    """True when every event tcg hooks has a tcg entry."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for event in claude.ADAPTER.events:
        groups = hooks.get(event)
        if not isinstance(groups, list) or not any(
            isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(claude.is_tcg_hook(h) for h in g["hooks"])
            for g in groups
        ):
            return False
    return True


def _write(path: Path, data: dict[str, Any], original: str | None) -> None:
    text = json.dumps(data, indent=2) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o600
        if original is not None:
            backup = path.with_name(path.name + BACKUP_SUFFIX)
            backup.write_text(original, encoding="utf-8")
            os.chmod(backup, mode)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tcg-tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror}; nothing was changed",
                           hint=f"check the permissions of {path.parent}") from None


def install_claude(env: Mapping[str, str], python: str) -> tuple[Path, bool]:
    """(settings file, changed). Idempotent; a backup of the previous file is kept."""
    path = claude_settings_path(env)
    current = read_settings(path)
    original = path.read_text(encoding="utf-8") if current is not None else None
    base = dict(current or {})
    rest = without_tcg_hooks(base.get("hooks"))
    new = {**base, "hooks": merge_hooks(claude.settings_hooks(python), rest)}
    if current == new:
        return path, False
    _write(path, new, original)
    return path, True


def uninstall_claude(env: Mapping[str, str]) -> tuple[Path, bool]:
    """(settings file, changed): tcg's entries removed, nothing else touched."""
    path = claude_settings_path(env)
    current = read_settings(path)
    if current is None or "hooks" not in current:
        return path, False
    new = dict(current)
    hooks = without_tcg_hooks(current["hooks"])
    if hooks == current["hooks"]:
        return path, False
    if hooks:
        new["hooks"] = hooks
    else:
        del new["hooks"]
    _write(path, new, path.read_text(encoding="utf-8"))
    return path, True


# ------------------------------------------------------------------ inspection (tcg doctor)


def claude_settings_files(env: Mapping[str, str], cwd: str) -> list[tuple[str, Path]]:
    """(scope, path) of every settings file Claude Code reads from ``cwd``, lowest first."""
    from tcg.agents.settings import CLAUDE_MANAGED_DIR

    files = [("user", claude_settings_path(env))]
    here = Path(cwd)
    files += [("project", here / ".claude" / "settings.json"), ("local", here / ".claude" / "settings.local.json")]
    managed = Path(CLAUDE_MANAGED_DIR)
    files.append(("managed", managed / "managed-settings.json"))
    drop_in = managed / "managed-settings.d"
    if drop_in.is_dir():
        files += [("managed", p) for p in sorted(drop_in.glob("*.json"))]
    return files


def other_tool_hooks(settings: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(event, matcher, command) of every PreToolUse/PostToolUse hook that is not tcg's."""
    out: list[tuple[str, str, str]] = []
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in ("PreToolUse", "PostToolUse"):
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = str(group.get("matcher") or "*")
            for hook in group["hooks"]:
                if not claude.is_tcg_hook(hook):
                    what = hook.get("command") or hook.get("url") or hook.get("type") if isinstance(hook, dict) else hook
                    out.append((event, matcher, str(what)[:80]))
    return out
