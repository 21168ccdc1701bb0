"""ASK for an agent: a human channel the agent cannot reach.

An agent has no terminal of its own to ask on, and whatever it prints goes to
the model, so "are you sure?" would be answered by the model. Instead the
station refuses the line (126) with a single-use code; the person runs
``tcg approve CODE`` in their own terminal, and the agent's next run of the
very same line (same working directory) is let through once.

`tcg approve` refuses when it is not on a terminal, or when it runs inside an
agent's process tree (an ancestor carries the agent marker TCG_AGENT /
TCG_ACTOR=agent in its environment, or is the agent process recorded with the
request), and the policy refuses ``tcg approve`` for an agent
(``self-approval``). Codes expire after ``TTL_S`` and are consumed by one run.

The request and the approval are files in the state directory signed with the
install key; the masked command line is stored so the person sees what they
approve — never a secret value.

Sessions (`tcg_shell session`) own a terminal and ask there instead; they can
use :class:`AskRequest` to show the same facts.
"""

from __future__ import annotations

import json
import os
import secrets
import time

from tcg.errors import TcgError
from tcg.events import actor_from_env
from tcg.signed import read_signed_json, signed_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

TTL_S = 600
AGENT_MARKERS = (b"TCG_AGENT=", b"TCG_ACTOR=agent")


class ApprovalError(TcgError):
    pass


class AskRequest:
    """What a person is asked to approve: the masked line, where, and why."""

    def __init__(self, *, command: str, cwd: str, reason: str, detail: str, line_hash: str) -> None:
        self.command = command
        self.cwd = cwd
        self.reason = reason
        self.detail = detail
        self.line_hash = line_hash

    def as_dict(self) -> dict[str, Any]:
        return {"command": self.command, "cwd": self.cwd, "reason": self.reason, "detail": self.detail,
                "line_hash": self.line_hash}

    def prompt(self) -> str:
        return (f"tcg: the agent asks to run:\n  {self.command}\n  in {self.cwd}\n"
                f"  why it needs you: {self.reason}: {self.detail}\n")


def _dir(env: Mapping[str, str] | None = None) -> str:
    from tcg.paths import get_paths

    return os.path.join(get_paths(env).state_dir, "approvals")


def _key(env: Mapping[str, str] | None = None) -> bytes:
    from tcg.keyhash import load_or_create_key
    from tcg.paths import get_paths

    return load_or_create_key(get_paths(env))


def line_hash(line: str, cwd: str, key: bytes) -> str:
    from tcg.digest import hmac_sha256

    return hmac_sha256(key, f"approval\0{cwd}\0{line}".encode("utf-8", "surrogateescape"))[:32]


def _read(path: str, key: bytes, tag: str) -> dict[str, Any] | None:
    return read_signed_json(path, key, tag, legacy=True)  # records written before an upgrade


def _write(path: str, key: bytes, tag: str, doc: dict[str, Any]) -> None:
    from tcg.guard.fsops import write_new
    from tcg.paths import ensure_private_dir

    ensure_private_dir(os.path.dirname(path))
    write_new(path, signed_bytes(key, tag, json.dumps(doc, sort_keys=True).encode("ascii")))


def _prune(directory: str, now: float) -> None:
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            if now - os.stat(path).st_mtime > 2 * TTL_S:
                os.unlink(path)
        except OSError:
            pass


# ----------------------------------------------------------------- agent side


def request(ask: AskRequest, env: Mapping[str, str] | None = None) -> str:
    """File a request for ``ask`` (or find the open one for the same line) and
    return its code."""
    key = _key(env)
    directory = _dir(env)
    now = time.time()
    _prune(directory, now)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        names = []
    for name in names:
        if name.endswith(".request"):
            doc = _read(os.path.join(directory, name), key, "approval/request")
            if doc and doc.get("line_hash") == ask.line_hash and doc.get("expires", 0) > now \
                    and not os.path.exists(os.path.join(directory, name[:-8] + ".used")):
                return str(doc["code"])
    for _ in range(8):
        n = secrets.randbelow(10**8)
        code = f"{n // 10**4:04d}-{n % 10**4:04d}"
        doc = {**ask.as_dict(), "code": code, "created": now, "expires": now + TTL_S,
               "agent": agent_root(), "requester": os.getpid()}
        try:
            _write(os.path.join(directory, code + ".request"), key, "approval/request", doc)
        except FileExistsError:
            continue
        return code
    raise ApprovalError("could not file an approval request", hint="retry the command")


def refusal_text(reason: str, detail: str, code: str) -> str:
    """What an agent reads when an ASK is refused pending a person's approval (the
    station and the agents' hooks say it the same way)."""
    return (f"tcg: needs a person's approval ({reason}): {detail}\n"
            f"hint: ask the user to run `tcg approve {code}` in their own terminal, then run the "
            f"same command again (the code works once, for {TTL_S // 60} minutes)")


def consume(line: str, cwd: str, env: Mapping[str, str] | None = None, *, use: bool = True) -> str | None:
    """If a person approved this exact line in this directory, use the approval up
    (single use) and return its code; else None. ``use=False`` only looks (an agent's
    hook lets the line through to the station, which uses it)."""
    directory = _dir(env)
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    key = _key(env)
    want = line_hash(line, cwd, key)
    now = time.time()
    for name in sorted(names):
        if not name.endswith(".approved"):
            continue
        code = name[:-9]
        req = _read(os.path.join(directory, code + ".request"), key, "approval/request")
        grant = _read(os.path.join(directory, name), key, "approval/grant")
        if not req or not grant or req.get("line_hash") != want or grant.get("code") != code:
            continue
        if req.get("expires", 0) < now:
            continue
        if not use:
            return code
        try:  # the rename succeeds for exactly one consumer
            os.rename(os.path.join(directory, name), os.path.join(directory, code + ".used"))
        except OSError:
            continue
        return code
    return None


def agent_root() -> list[Any] | None:
    """[pid, start] of the topmost ancestor carrying the agent marker."""
    from tcg.guard.trash import process_start

    found = None
    for pid in ancestors(os.getpid()):
        if _marked(pid):
            found = [pid, process_start(pid)]
    return found


# ----------------------------------------------------------------- human side


def ancestors(pid: int) -> list[int]:
    """``pid``'s parent, grandparent, … (Linux /proc; empty elsewhere)."""
    out = []
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            break
        fields = data[data.rfind(b")") + 2 :].split()
        pid = int(fields[1]) if len(fields) > 1 else 0
        if pid > 1:
            out.append(pid)
    return out


def _marked(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            entries = fh.read().split(b"\0")
    except OSError:
        return False
    return any(e.startswith(AGENT_MARKERS[0]) or e == AGENT_MARKERS[1] for e in entries)


def caller_problem(environ: Mapping[str, str] | None = None, stdin_tty: bool | None = None) -> str | None:
    """Why the current process may not approve, or None."""
    env = os.environ if environ is None else environ
    tty = (os.isatty(0) and os.isatty(1)) if stdin_tty is None else stdin_tty
    if not tty:
        return "tcg approve needs a terminal (stdin and stdout); run it yourself, not through a tool"
    if actor_from_env(env) == "agent" or env.get("TCG_MEDIATED"):
        return "tcg approve cannot run inside an agent or a mediated command"
    for pid in ancestors(os.getpid()):
        if _marked(pid):
            return "tcg approve cannot run inside an agent's process tree"
    return None


def load(code: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    if len(code) != 9 or code[4] != "-" or not (code[:4] + code[5:]).isdigit():
        raise ApprovalError(f"not an approval code: {code!r}", hint="codes look like 1234-5678")
    directory = _dir(env)
    doc = _read(os.path.join(directory, code + ".request"), _key(env), "approval/request")
    if doc is None or doc.get("code") != code:
        raise ApprovalError(f"no approval request {code}", hint="the agent prints the code when it is refused")
    if os.path.exists(os.path.join(directory, code + ".used")):
        raise ApprovalError(f"approval {code} was already used", hint="codes are single-use")
    if doc.get("expires", 0) < time.time():
        raise ApprovalError(f"approval request {code} has expired", hint="let the agent run the command again")
    root = doc.get("agent")
    if isinstance(root, list) and len(root) == 2:
        from tcg.guard.trash import process_alive

        mine = ancestors(os.getpid())
        if root[0] in mine and process_alive(int(root[0]), root[1]):
            raise ApprovalError("tcg approve cannot run inside the agent that asked",
                                hint="run it in a terminal of your own")
    return doc


def grant(code: str, env: Mapping[str, str] | None = None) -> None:
    directory = _dir(env)
    try:
        _write(os.path.join(directory, code + ".approved"), _key(env), "approval/grant",
               {"code": code, "time": time.time()})
    except FileExistsError:
        pass
