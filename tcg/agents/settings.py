"""The agent settings tcg generates at launch, and what in an agent's own
settings would switch tcg's hooks off.

Claude Code (2.1.328, measured): ``--settings FILE`` adds a settings layer for
one session; its hooks run *together with* the user's and project's hooks,
and its ``disableAllHooks: false`` overrides a user or project ``true``. A
second ``--settings`` replaces the first, so a user's own ``--settings`` value
is merged into tcg's file and removed from the command line. Managed settings
(``/etc/claude-code/managed-settings.json`` and ``managed-settings.d/*.json``)
outrank it: ``disableAllHooks`` or ``allowManagedHooksOnly`` there switch tcg's
hooks off, and so do ``--bare``, ``--safe-mode``, ``CLAUDE_CODE_SIMPLE`` and
``CLAUDE_CODE_SAFE_MODE``.

Qwen Code (0.24.4): ``QWEN_CODE_SYSTEM_SETTINGS_PATH`` names the system
settings file, the highest-precedence layer; tcg's file is the system file
that was there plus tcg's hooks and ``disableAllHooks: false``. ``--safe-mode``
switches hooks off.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

CLAUDE_MANAGED_DIR = "/etc/claude-code"
QWEN_SYSTEM_SETTINGS = "/etc/qwen-code/settings.json"
TRUE_VALUES = ("1", "true", "yes", "on")


class SettingsError(ValueError):
    """A settings value tcg must merge cannot be read (the message says which)."""


def merge_hooks(ours: dict[str, list[Any]], theirs: object) -> dict[str, list[Any]]:
    """Their hooks block with ours added first for each event (a hooks block is
    event → list of matcher groups; all groups run)."""
    merged: dict[str, list[Any]] = {k: list(v) for k, v in ours.items()}
    if isinstance(theirs, dict):
        for event, groups in theirs.items():
            if isinstance(groups, list):
                merged.setdefault(event, [])
                merged[event] = merged[event] + groups
    return merged


def with_hooks(base: Mapping[str, Any], hooks: dict[str, list[Any]]) -> dict[str, Any]:
    """``base`` settings plus tcg's hooks, with hooks switched on."""
    out = dict(base)
    out["hooks"] = merge_hooks(hooks, base.get("hooks"))
    out["disableAllHooks"] = False
    return out


def load_settings_value(value: str, cwd: str) -> dict[str, Any]:
    """A ``--settings`` value: a JSON object, or the path of a file holding one."""
    text = value.strip()
    if not text.startswith("{"):
        path = value if os.path.isabs(value) else os.path.join(cwd, os.path.expanduser(value))
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise SettingsError(f"cannot read the --settings file {value}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise SettingsError(f"the --settings value {value[:60]!r} is not a JSON object") from None
    if not isinstance(data, dict):
        raise SettingsError(f"the --settings value {value[:60]!r} is not a JSON object")
    return data


def split_option(args: list[str], option: str) -> tuple[list[str], list[str]]:
    """(args without every ``option VALUE`` / ``option=VALUE`` before ``--``, the values)."""
    out: list[str] = []
    values: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i:])
            break
        if arg == option:
            if i + 1 >= len(args):
                raise SettingsError(f"{option} needs a value")
            values.append(args[i + 1])
            i += 2
            continue
        if arg.startswith(option + "="):
            values.append(arg[len(option) + 1:])
            i += 1
            continue
        out.append(arg)
        i += 1
    return out, values


def options_before_dashdash(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else list(args)


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in TRUE_VALUES


def _json_files(directory: str, main: str) -> list[str]:
    files = [os.path.join(directory, main)]
    drop_in = os.path.join(directory, main.replace(".json", ".d"))
    try:
        files += sorted(os.path.join(drop_in, n) for n in os.listdir(drop_in) if n.endswith(".json"))
    except OSError:
        pass
    return [f for f in files if os.path.isfile(f)]


def claude_hooks_switched_off(args: list[str], env: Mapping[str, str],
                              managed_dir: str = CLAUDE_MANAGED_DIR) -> str | None:
    """Why tcg's hooks would not run in this Claude Code session, or None."""
    opts = options_before_dashdash(args)
    for flag in ("--bare", "--safe-mode"):
        if flag in opts:
            return f"`claude {flag}` runs without hooks"
    for var in ("CLAUDE_CODE_SIMPLE", "CLAUDE_CODE_SAFE_MODE"):
        if truthy(env.get(var)):
            return f"{var} is set: Claude Code then runs without hooks"
    for path in _json_files(managed_dir, "managed-settings.json"):
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return f"the managed settings file {path} cannot be read, so tcg cannot tell whether it allows hooks"
        if isinstance(data, dict):
            for key in ("disableAllHooks", "allowManagedHooksOnly"):
                if data.get(key) is True:
                    return f"the managed settings file {path} sets {key}"
    return None


def qwen_hooks_switched_off(args: list[str], env: Mapping[str, str]) -> str | None:
    """Why tcg's hooks would not run in this Qwen Code session, or None."""
    if "--safe-mode" in options_before_dashdash(args):
        return "`qwen --safe-mode` runs without hooks"
    return None


def qwen_system_base(env: Mapping[str, str]) -> tuple[str | None, dict[str, Any]]:
    """(path, settings) of the system settings Qwen Code would read without tcg."""
    path = env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or QWEN_SYSTEM_SETTINGS
    if not os.path.isfile(path):
        return None, {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise SettingsError(f"cannot read Qwen Code's system settings {path}: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"Qwen Code's system settings {path} is not a JSON object")
    return path, data
