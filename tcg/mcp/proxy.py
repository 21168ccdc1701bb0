"""`tcg mcp-proxy`: one MCP session — policy, request check, response masking, events.

``McpSession`` is the relay's handler: it turns each whole line from one side
into the frames to write (to the other side, or an error reply back). Every
path fails closed: a line that cannot be parsed, checked or masked is never
forwarded as it was.

Frame handling (docs/mcp.md has the table):
- client request: checked; blocked → JSON-RPC error (code -32051, same id) to
  the client, never forwarded;
- client notification: checked; blocked → dropped;
- client response (to a server request): relayed; ``roots/list`` answers
  update the roots relative paths are resolved against;
- server request/notification/response: every string masked; re-serialised
  only when something was masked, then re-validated; an invalid result →
  error for that id instead;
- invalid line or batch (either side): never forwarded; an element with a
  readable id gets a JSON-RPC error (a request → back to its sender, a
  response → to the peer waiting for it); the rest is dropped and counted.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tcg import jsonrpc
from tcg.errors import TcgError, debug_enabled
from tcg.jsonrpc import (
    BATCH,
    INVALID,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
    Frame,
    classify,
    error_frame,
    parse_line,
    readable_id,
)
from tcg.mcp import fast_parse
from tcg.mcp.check_request import RequestChecker
from tcg.mcp.mask_response import MaskStats, ResponseMasker
from tcg.mcp.relay import CLIENT, SERVER, Output, StdioRelay

SURFACE = "mcp"
ACTOR = "agent"
MAX_NOTES = 20  # stderr notes about dropped lines; the rest is counted in the stop event
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,64}")

MSG_BLOCKED = "tcg: request refused by policy (protected resource)"
MSG_INVALID = "tcg: invalid JSON-RPC frame"
MSG_BATCH = "tcg: JSON-RPC batches are not supported"
MSG_MASK_FAILED = "tcg: response withheld (secret could not be masked into a valid frame)"
MSG_INTERNAL = "tcg: internal error while checking the message; refused"
MSG_SERVER_GONE = "tcg: the MCP server exited before answering this request"


def _id_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)




class McpSession:
    """Handler for one proxied MCP session (thread-safe counters)."""

    def __init__(self, checker: RequestChecker, masker: ResponseMasker, *, emit: Any = None,
                 note: Any = None, fast_path: bool = True, inbound: Any = None):
        self.checker = checker
        self.masker = masker
        self.inbound = inbound  # tcg.inbound.mcp.McpInboundGate: results checked after masking
        screen = fast_parse.RawScreen() if fast_path else None
        self._screen = screen if screen is not None and screen.available else None
        self._emit = emit or (lambda event, **kw: None)
        self._note = note or (lambda msg: None)
        self._lock = threading.Lock()
        self._roots_requests: set[tuple[str, Any]] = set()
        # ids of client requests forwarded to the server and not answered yet: if the
        # server dies (even mid-frame) each gets an error instead of waiting forever
        self._unanswered: dict[tuple[str, Any], Any] = {}
        self.counts = {"client_requests": 0, "client_notifications": 0, "blocked": 0,
                       "server_messages": 0, "masked_messages": 0, "masked_spans": 0,
                       "withheld": 0, "invalid_client": 0, "invalid_server": 0, "internal_errors": 0,
                       "entity_spans": 0}
        self._notes = 0
        #: business-entity aliasing of server lines (tcg.entities.objects), when registered
        self.entity_filter: Any = None

    # ------------------------------------------------------------ helpers

    def _label(self, value: Any) -> str | None:
        """A method/tool name for an event: short plain names only, and masked
        (a client may put anything in a tool name)."""
        if not (isinstance(value, str) and _SAFE_NAME.fullmatch(value)):
            return None
        return self.masker.mask_string(value, MaskStats())

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def note(self, msg: str) -> None:
        with self._lock:
            self._notes += 1
            show = self._notes <= MAX_NOTES
        if show:
            self._note(msg)

    def _invalid(self, side: str, frame: Frame, line_len: int) -> Output:
        """An invalid line or batch from ``side``: errors for readable ids, drop the rest."""
        peer = SERVER if side == CLIENT else CLIENT
        self._count("invalid_client" if side == CLIENT else "invalid_server")
        elements = frame.obj if frame.kind == BATCH else [frame.obj]
        message = MSG_BATCH if frame.kind == BATCH else MSG_INVALID
        out: Output = []
        for el in elements:
            mid = readable_id(el)
            if mid is None:
                continue
            if isinstance(el, dict) and "method" in el:
                out.append((side, error_frame(mid, "invalid-frame", message)))
            else:
                out.append((peer, error_frame(mid, "invalid-frame", message)))
                if side == SERVER:
                    self._answered(mid)
        what = "batch" if frame.kind == BATCH else f"line ({frame.problem})"
        self.note(f"refused an invalid {what} from the {side}, {line_len} bytes; "
                  f"{len(out)} error repl{'y' if len(out) == 1 else 'ies'} sent")
        if side == CLIENT:
            self._emit("mcp_request_blocked", decision="block", reason="invalid-frame",
                       kind=frame.kind, length=line_len, replies=len(out))
        return out

    # ------------------------------------------------------------ client → server

    def from_client(self, line: bytes) -> Output:
        if not line.strip():
            return []
        try:
            return self._from_client(line)
        except Exception as exc:  # noqa: BLE001 - fail closed, never forward unchecked
            self._count("internal_errors")
            self.note(f"internal error on a client line: {type(exc).__name__}")
            if debug_enabled():
                raise
            obj, mid = _best_effort_id(line)
            if mid is not None and isinstance(obj, dict) and "method" in obj:
                return [(CLIENT, error_frame(mid, "internal-error", MSG_INTERNAL))]
            return []

    def _from_client(self, line: bytes) -> Output:
        frame = parse_line(line)
        if frame.kind in (INVALID, BATCH):
            return self._invalid(CLIENT, frame, len(line))
        obj = frame.obj
        if frame.kind == RESPONSE:
            key = _id_key(obj["id"])
            with self._lock:
                is_roots = key in self._roots_requests
                self._roots_requests.discard(key)
            if is_roots:
                self._take_roots(obj)
            return [(SERVER, line + b"\n")]
        self._count("client_requests" if frame.kind == REQUEST else "client_notifications")
        blocked = self.checker.check(obj)
        if blocked is None:
            if frame.kind == REQUEST:
                with self._lock:
                    self._unanswered[_id_key(obj["id"])] = obj["id"]
            return [(SERVER, line + b"\n")]
        self._count("blocked")
        params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
        self._emit("mcp_request_blocked", decision="block", reason=blocked.reason,
                   rules=[blocked.rule], method=self._label(frame.method), tool=self._label(params.get("name")),
                   kind=frame.kind)
        if frame.kind == NOTIFICATION:
            return []  # notifications are never answered
        return [(CLIENT, error_frame(obj["id"], blocked.reason, MSG_BLOCKED, blocked.rule))]

    def _take_roots(self, obj: dict[str, Any]) -> None:
        result = obj.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
        if isinstance(roots, list):
            uris = [r["uri"] for r in roots if isinstance(r, dict) and isinstance(r.get("uri"), str)]
            self.checker.set_client_roots(uris)

    # ------------------------------------------------------------ server → client

    def from_server(self, line: bytes) -> Output:
        if not line.strip():
            return []
        try:
            out = self._from_server(line)
            return self.inbound.gate(out) if self.inbound is not None else out
        except Exception as exc:  # noqa: BLE001 - fail closed: withhold, answer the id
            self._count("internal_errors")
            self.note(f"internal error on a server line: {type(exc).__name__}")
            if debug_enabled():
                raise
            obj, mid = _best_effort_id(line)
            if mid is None:
                return []
            dest = SERVER if isinstance(obj, dict) and "method" in obj else CLIENT
            if dest == CLIENT:
                self._answered(mid)
            return [(dest, error_frame(mid, "internal-error", MSG_INTERNAL))]

    def _fast_path(self, line: bytes) -> bool | tuple[Frame, bool] | None:
        """The fast path for a server line: screened raw (strict UTF-8, no ``\\u``
        escape), parsed as Latin-1 (fast_parse.parse_latin1) and scanned without
        re-encoding. True: valid and clean, forward the original bytes, exactly as
        the ordinary path would. ``(frame, scanned)``: valid but not proven clean,
        the frame with its real strings for the masking below (``scanned``: the
        scan found a candidate, so the masker need not look for one again). None:
        take the ordinary path (no hyperscan, a ``\\u`` escape, or an invalid line,
        whose exact verdict parse_line gives)."""
        facts = self._screen.scan(line) if self._screen is not None else None
        if facts is None or not facts.utf8 or facts.u_escape:
            return None
        frame = fast_parse.parse_latin1(line)
        if frame is None:
            return None
        scanned = not facts.triple_eq
        if scanned and self.masker.is_clean_latin1(frame.obj, facts):
            self._seen(frame, fast_parse.from_latin1(frame.obj.get("id")))
            return True
        return Frame(frame.kind, fast_parse.from_latin1(frame.obj)), scanned

    def _seen(self, frame: Frame, real_id: Any) -> None:
        """Count a valid server message; remember the id of a roots/list request,
        forget a client request once it is answered."""
        self._count("server_messages")
        if frame.kind == REQUEST and frame.method == "roots/list":
            with self._lock:
                self._roots_requests.add(_id_key(real_id))
        elif frame.kind == RESPONSE:
            self._answered(real_id)

    def _answered(self, mid: Any) -> None:
        with self._lock:
            self._unanswered.pop(_id_key(mid), None)

    def server_gone(self) -> Output:
        """The server exited: an error reply for every request it left unanswered
        (a half-written last frame is never forwarded; its id is answered here)."""
        with self._lock:
            ids = list(self._unanswered.values())
            self._unanswered.clear()
        if ids:
            self.note(f"the server exited with {len(ids)} request(s) unanswered; error replies sent")
        return [(CLIENT, error_frame(mid, "server-exited", MSG_SERVER_GONE)) for mid in ids]

    def _from_server(self, line: bytes) -> Output:
        if self.entity_filter is not None:
            line, n = self.entity_filter(line)
            if n:
                self._count("entity_spans", n)
        fast = self._fast_path(line)
        if fast is True:
            return [(CLIENT, line + b"\n")]  # nothing to mask: the original bytes
        frame, scanned = fast if isinstance(fast, tuple) else (parse_line(line), False)
        if frame.kind in (INVALID, BATCH):
            return self._invalid(SERVER, frame, len(line))
        self._seen(frame, frame.obj.get("id"))
        masked, stats = self.masker.mask_message(frame.obj, scanned=scanned)
        obj = frame.obj
        if not stats.spans:
            return [(CLIENT, line + b"\n")]  # nothing to mask: the original bytes
        data = jsonrpc.dumps(masked)
        check = parse_line(data[:-1])
        valid = (check.kind == frame.kind and b"\n" not in data[:-1]
                 and (frame.kind == NOTIFICATION or check.obj.get("id") == obj["id"]))
        self._count("masked_messages")
        self._count("masked_spans", stats.spans)
        self._emit("mcp_response_masked", decision="sanitize", reason="secret-in-response",
                   rules=sorted(stats.rules), count=stats.spans, kind=frame.kind,
                   method=self._label(frame.method), length=len(line), withheld=not valid)
        if valid:
            return [(CLIENT, data)]
        self._count("withheld")
        if frame.kind == RESPONSE:
            return [(CLIENT, error_frame(obj["id"], "secret-in-response", MSG_MASK_FAILED))]
        if frame.kind == REQUEST:
            return [(SERVER, error_frame(obj["id"], "secret-in-response", MSG_MASK_FAILED))]
        return []


def _best_effort_id(line: bytes) -> tuple[Any, Any]:
    """(parsed object or None, its readable id or None) of a line that failed processing."""
    try:
        obj = jsonrpc.loads(line.decode("utf-8"))
    except Exception:  # noqa: BLE001 - any failure: there is just no id to answer
        obj = None
    return obj, readable_id(obj)


_LAUNCHERS = frozenset({"python", "node", "npx", "uvx", "uv", "bunx", "bun", "deno", "pipx", "docker", "npm", "pnpm"})


def default_name(argv: list[str]) -> str:
    """The server's name for events: the command's basename, or for a launcher
    (``npx -y @scope/server-x``, ``python server.py``) the first non-option argument's."""
    base = os.path.basename(argv[0])
    if re.sub(r"[0-9.]+$", "", base.lower()).removesuffix(".exe") in _LAUNCHERS:
        for arg in argv[1:]:
            if not arg.startswith("-") and arg not in ("run", "exec", "x", "dlx"):
                return os.path.basename(arg.rstrip("/")).removesuffix(".py") or base
    return base


def _static_roots(argv: list[str]) -> list[str]:
    """Absolute directories named on the server's command line (e.g. the allowed
    directories of a filesystem server): relative paths are resolved against them."""
    return [a for a in argv[1:] if os.path.isabs(a) and os.path.isdir(a)]


def _stderr_note(msg: str) -> None:
    try:
        os.write(2, f"tcg mcp-proxy: {msg}\n".encode("utf-8", "replace"))
    except OSError:
        pass


def run_proxy(argv: list[str], name: str | None = None, *, client_in: int = 0,
              client_out: int = 1) -> int:
    """Proxy the MCP server ``argv`` over our stdio; return the server's exit status."""
    from tcg.detect.engine import load_detector
    from tcg.events import EventLog, current_session
    from tcg.keyhash import KeyedHasher
    from tcg.policy.load import load_policy

    policy = load_policy()  # PolicyError propagates: the server is never started unchecked
    checker = RequestChecker.for_policy(policy, cwd=Path.cwd(), roots=_static_roots(argv))
    masker = ResponseMasker(load_detector(policy), KeyedHasher.for_install())
    log = EventLog()
    session = current_session()
    server_name = masker.mask_string(name or default_name(argv), MaskStats())  # events hold no secret
    warned = [False]

    def emit(event: str, **fields: Any) -> None:
        try:
            log.emit(event, surface=SURFACE, actor=ACTOR, policy=policy.ref(), session=session,
                     name=server_name, **fields)
        except (TcgError, OSError, ValueError) as exc:
            if not warned[0]:
                warned[0] = True
                _stderr_note(f"cannot write the event log ({type(exc).__name__}); continuing")

    from tcg.inbound.engine import load_engine
    from tcg.inbound.mcp import McpInboundGate

    inbound = McpInboundGate(policy, engine=load_engine(), emit=emit)
    handler = McpSession(checker, masker, emit=emit, note=_stderr_note, inbound=inbound)
    from tcg.entities.stream import entities_for

    ents = entities_for()  # RegistryError propagates: the server is never started unmasked
    if ents is not None and ents.matcher:
        from tcg.entities.objects import mcp_line_filter

        handler.entity_filter = mcp_line_filter(ents.matcher)
    relay = StdioRelay(argv, handler, client_in=client_in, client_out=client_out,
                       on_note=_stderr_note)
    started = time.monotonic()
    emit("mcp_session_status", status="start", command=masker.mask_string(os.path.basename(argv[0]), MaskStats()),
         args=len(argv) - 1, roots=len(checker.roots))
    status = "error"
    rc = 1
    try:
        rc = relay.run()
        status = "stop"
        return rc
    finally:
        emit("mcp_session_status", status=status, exit_code=rc,
             signal=relay.signal_received, duration_ms=int((time.monotonic() - started) * 1000),
             **handler.counts)
        sys.stderr.flush()


__all__ = ["McpSession", "classify", "default_name", "run_proxy"]
