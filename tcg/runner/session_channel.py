"""The verdict channel between a hooked shell and its session station.

A pipe pair opened once, when ``tcg_shell session`` starts the shell: the shell
writes requests into one pipe and reads verdicts from the other with its own
builtins (bash ``printf``/``read -u``, zsh ``print``/``read -u``), so deciding a
line starts no process. The shell finds the two descriptors in
``TCG_SESSION_CHANNEL`` ("WRITE_FD,READ_FD", as the shell sees them).

Wire format (docs/shells.md, "The verdict channel"):

request   ``\\x01TCG1 KIND SEQ FLAGS`` NUL ``PWD`` NUL ``LINE`` NUL
          KIND: ``H`` hello (LINE: the values of the settings TCG_SESSION_ENV
          names, tcg.runner.session_env), ``L`` a whole interactive line,
          ``C`` one simple command (fallback and agent mode), ``D`` a line that
          ran no command (function definitions: recorded after the fact).
          FLAGS: letters; ``a`` the shell's environment names an agent actor,
          ``h`` LINE is bash ``history 1`` output (number prefix to strip),
          ``c`` a bash subshell that reads the children's pipe, ``k`` which
          holds the writers' token until it has read its answer (see below).
response  ``SEQ US VERDICT US FAILMODE US MESSAGE US HINT`` LF (US: \\x1f, the
          unit separator: not white space to ``read``, so empty fields stay)
          VERDICT: ``ok`` run it, ``refuse`` do not, ``wait`` keep waiting
          (a question is being asked on the terminal), ``hello`` (MESSAGE:
          the session's id; HINT: the settings the shell has otherwise).
          FAILMODE: ``warn`` or ``block``, what the hook does when a later
          request gets no answer (policy ``session.on-station-gone``), with
          the timeout in ms: ``warn:2000``.

Fields cannot hold NUL (no bash string can; the zsh hook takes NULs out of what
it sends), so NUL framing is exact; a
record that does not start with the magic is skipped up to the next one, so
a torn write cannot shift every later request. Pure: no policy here.
"""

from __future__ import annotations

import os
import sys

MAGIC = b"\x01TCG1 "
KINDS = frozenset("HLCD")
MAX_FIELD = 4 << 20  # a pasted line larger than this is refused, not buffered forever
ENV_CHANNEL = "TCG_SESSION_CHANNEL"
ENV_STATION_PID = "TCG_SESSION_PID"
# bash only, "CHILD_READ,TOKEN_READ,TOKEN_WRITE": a line that starts in a child (a subshell, an
# async list) is asked about from there while the shell asks too. Two processes
# reading one pipe a byte at a time, as `read` does, split each other's answers: the
# children read a pipe of their own. And a request is three writes (`history 1` cannot
# be put in a variable without a process), which two writers interleave: a writer
# first takes the one token byte from the token pipe, and the station puts it back
# once it has read the request; a subshell keeps it until it has read its answer
# (flag ``k``) and puts it back itself, so subshells take turns on their pipe.
ENV_CHILD_CHANNEL = "TCG_SESSION_CHILD_CHANNEL"
TOKEN = b"t"
LOW_FD = 10  # above the 3-9 users redirect by hand (exec 3>file)
MAX_RESPONSE = 2048  # bytes per answer line: two fit in one atomic pipe write (PIPE_BUF 4096)

OK = "ok"
REFUSE = "refuse"
WAIT = "wait"
HELLO = "hello"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Protocol

    class Decider(Protocol):
        """What answers the requests (tcg.runner.session_decide.SessionDecider)."""

        failmode: str

        def answer(self, req: Request, send: Callable[[bytes], None],
                   sibling: Callable[[bytes], None] | None = None) -> None: ...


class Request:
    """One request from the shell. ``line`` is text (surrogate-escaped bytes)."""

    __slots__ = ("kind", "seq", "flags", "pwd", "line", "error", "history")

    def __init__(self, kind: str, seq: str, flags: str, pwd: str, line: str,
                 error: str | None = None, history: str = ""):
        self.kind = kind
        self.seq = seq
        self.flags = flags
        self.pwd = pwd
        self.line = line
        self.error = error  # set when the request is malformed or too large
        self.history = history  # bash: the line's history number ("" otherwise)

    @property
    def agent(self) -> bool:
        return "a" in self.flags

    def __repr__(self) -> str:  # never the line itself: it may hold a secret
        return f"<Request {self.kind} {self.seq} flags={self.flags!r} len={len(self.line)}>"


def strip_history_number(text: str) -> str:
    """The command of bash ``history 1`` output: ``%5d`` then ``*`` or a space,
    a space, the line, a newline (bash's builtins/history.def)."""
    body = text.lstrip(" ")
    i = 0
    while i < len(body) and body[i].isdigit():
        i += 1
    if i == 0 or len(body) < i + 2 or body[i] not in " *" or body[i + 1] != " ":
        return text.rstrip("\n")
    return body[i + 2:].removesuffix("\n")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


class RequestReader:
    """Incremental NUL-framed parser of the request pipe."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._skipping = False  # an oversized field is being dropped up to its end

    def feed(self, data: bytes) -> Iterator[Request]:
        self._buf += data
        while True:
            if self._skipping:
                end = self._buf.find(MAGIC)
                if end < 0:
                    del self._buf[: max(0, len(self._buf) - len(MAGIC))]
                    return
                del self._buf[:end]
                self._skipping = False
            start = self._buf.find(MAGIC)
            if start < 0:
                del self._buf[: max(0, len(self._buf) - len(MAGIC))]
                return
            if start:
                del self._buf[:start]  # a torn record: resynchronise on the magic
            fields, end = self._fields(3)
            if fields is None:
                if len(self._buf) > 3 * MAX_FIELD:
                    yield self._oversized()
                return
            del self._buf[:end]
            yield self._request(fields)

    def _fields(self, count: int) -> tuple[list[bytes] | None, int]:
        out: list[bytes] = []
        pos = 0
        for _ in range(count):
            end = self._buf.find(b"\0", pos)
            if end < 0:
                return None, 0
            out.append(bytes(self._buf[pos:end]))
            pos = end + 1
        nxt = self._buf.find(MAGIC, len(MAGIC))
        if 0 < nxt < pos:  # a new record starts inside this one: the earlier was torn
            del self._buf[:nxt]
            return self._fields(count)
        return out, pos

    def _oversized(self) -> Request:
        header = bytes(self._buf[: self._buf.find(b"\0")] if b"\0" in self._buf else b"")
        kind, seq, _flags = _header(header)
        self._buf.clear()
        self._skipping = True
        return Request(kind or "L", seq, "", "", "", error="the line is too long to check")

    @staticmethod
    def _request(fields: list[bytes]) -> Request:
        kind, seq, flags = _header(fields[0])
        if kind not in KINDS or not seq:
            return Request(kind or "?", seq, flags, "", "", error="malformed request")
        pwd, line = _text(fields[1]), _text(fields[2])
        number = ""
        if "h" in flags:
            number = line.lstrip(" ").split(" ", 1)[0].rstrip("*")
            line = strip_history_number(line)
        return Request(kind, seq, flags, pwd, line, history=number if number.isdigit() else "")


def _header(raw: bytes) -> tuple[str, str, str]:
    words = _text(raw[len(MAGIC):]).split(" ") if raw.startswith(MAGIC) else []
    words += [""] * (3 - len(words))
    return words[0], words[1], words[2]


def _clean(text: str) -> str:
    """One field: no control character (the hook reads with ``IFS=$'\\037' read
    -r``, so neither US nor a newline may appear); runs of white space become one
    space."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def response(seq: str, verdict: str, failmode: str, message: str = "", hint: str = "") -> bytes:
    """One response line, at most MAX_RESPONSE bytes: a refusal's message and hint
    are cut to fit (with "…"). Two of them in one write stay under PIPE_BUF, so
    every write of answers is atomic: a hook that has the first byte of an answer
    has all of it (the bash hook's timeout covers only that first byte)."""
    head = "\x1f".join((_clean(seq), verdict, failmode)).encode("utf-8", "surrogateescape")
    room = MAX_RESPONSE - len(head) - 3  # two separators and the newline
    text = [_clean(message).encode("utf-8", "surrogateescape"),
            _clean(hint).encode("utf-8", "surrogateescape")]
    if len(text[0]) + len(text[1]) > room:
        shorter = min(len(t) for t in text)
        # both long: half each; else the longer one gets what the shorter leaves
        limit = room // 2 if shorter > room // 2 else room - shorter
        text = [_cut(t, limit) for t in text]
    return b"\x1f".join((head, *text)) + b"\n"


def _cut(text: bytes, limit: int) -> bytes:
    """``text`` in at most ``limit`` bytes, ending in "…" when cut (never mid-character)."""
    if len(text) <= limit:
        return text
    ellipsis = "…".encode()
    return text[: max(0, limit - len(ellipsis))].decode("utf-8", "ignore").encode("utf-8") + ellipsis


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe of either end ``fd`` (FIONREAD); -1 if unknown."""
    import fcntl
    import termios

    waiting = bytearray(4)
    try:
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
    except OSError:
        return -1
    return int.from_bytes(waiting, sys.byteorder)


def _nonblocking_copy(fd: int) -> int:
    """A second open file of the pipe end ``fd``, non-blocking and close-on-exec, the
    original left blocking (Linux: /proc/self/fd); -1 where there is none."""
    try:
        return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return -1


class ChannelPipes:
    """The pipes. The shell's ends are inheritable and numbered >= 10; the
    station's are close-on-exec (so neither the masking process nor the
    commands the shell runs get them). ``children`` (bash): two more, the
    answers to the shell's subshells and the writers' token (see ENV_CHILD_CHANNEL)."""

    def __init__(self, children: bool = False) -> None:
        import fcntl

        self.shell_write = self.shell_read = self.shell_child_read = -1
        self.shell_token = self.shell_token_back = -1
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        child_r, child_w = os.pipe() if children else (-1, -1)
        token_r, token_w = os.pipe() if children else (-1, -1)
        self.requests, self.responses, self.child_responses = req_r, resp_w, child_w
        # the station's ends of the token pipe: to put the token in, to take extras out
        self.token, self.token_drain = token_w, -1
        try:
            self.shell_write = fcntl.fcntl(req_w, fcntl.F_DUPFD, LOW_FD)
            self.shell_read = fcntl.fcntl(resp_r, fcntl.F_DUPFD, LOW_FD)
            if children:
                self.shell_child_read = fcntl.fcntl(child_r, fcntl.F_DUPFD, LOW_FD)
                self.shell_token = fcntl.fcntl(token_r, fcntl.F_DUPFD, LOW_FD)
                self.shell_token_back = fcntl.fcntl(token_w, fcntl.F_DUPFD, LOW_FD)
        except OSError:
            self.close()
            raise
        finally:
            if token_r >= 0:
                self.token_drain = _nonblocking_copy(token_r)
            for fd in (req_w, resp_r, child_r, token_r):
                if fd >= 0:
                    os.close(fd)
        for fd in (self.shell_write, self.shell_read, self.shell_child_read, self.shell_token,
                   self.shell_token_back):
            if fd >= 0:
                os.set_inheritable(fd, True)
        # Never wait on a shell. O_NONBLOCK belongs to the open file, which a dup shares:
        # only ends the shell does not get a dup of (its `read -t` on a non-blocking end
        # fails at once when another process took the byte it woke up for).
        for fd in (self.requests, self.responses, self.child_responses):
            if fd >= 0:
                os.set_blocking(fd, False)
        self.put_token()

    def children_waiting(self) -> int:
        """Bytes unread in the children's pipe (-1: none, or unknown)."""
        return _unread(self.child_responses) if self.child_responses >= 0 else -1

    def put_token(self, flags: str = "") -> None:
        """After each request read: the writers' token back into its pipe, exactly
        one. Not for a subshell that kept it (``flags`` with ``k``: it gives it back
        itself once it has read its answer). One there already (a writer that gave up
        waiting wrote without it, and the one it waited for came back later): the
        extra is taken out. None there (lost with a process killed holding it): one
        is put in, so a lost token costs one wait."""
        if self.token < 0 or "k" in flags:
            return
        count = _unread(self.token)
        try:
            if count > 1 and self.token_drain >= 0:
                os.read(self.token_drain, count - 1)
            elif count == 0:
                os.write(self.token, TOKEN)
        except OSError:
            pass

    def env_value(self) -> str:
        return f"{self.shell_write},{self.shell_read}"

    def env(self) -> dict[str, str]:
        """The variables that name the shell's ends to it, and the settings its hello
        sends the values of (tcg.runner.session_env)."""
        from tcg.runner.session_env import ENV_WATCHED, watched_names

        env = {ENV_CHANNEL: self.env_value(), ENV_WATCHED: watched_names()}
        if self.shell_child_read >= 0:
            env[ENV_CHILD_CHANNEL] = f"{self.shell_child_read},{self.shell_token},{self.shell_token_back}"
        return env

    def close_shell_ends(self) -> None:
        """After the shell is started: the station must not hold them (EOF on the
        request pipe then means every shell process has gone)."""
        for name in ("shell_write", "shell_read", "shell_child_read", "shell_token", "shell_token_back"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def close(self) -> None:
        self.close_shell_ends()
        for name in ("requests", "responses", "child_responses", "token", "token_drain"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)


class ChannelService:
    """The copy loop's service (tcg.runner.loop.LoopService) for the request pipe:
    reads the shell's requests and routes each one's answer from ``decider``
    (tcg.runner.session_decide.SessionDecider, or tcg.runner.session_hello's
    LazyDecider, which answers a hello before the decision code is loaded).
    A decision that raises refuses its line."""

    def __init__(self, pipes: ChannelPipes, decider: Decider):
        self.pipes = pipes
        self.decider = decider
        self.reader = RequestReader()
        self.fd = pipes.requests
        self.dropped = 0  # responses nobody read (the shell timed out or went away)

    def ready(self) -> None:
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.fd = -1  # every process holding the shell's end has gone
            return
        for req in self.reader.feed(data):
            self.pipes.put_token(req.flags)  # read: the next writer may go (before a question)
            send, sibling = self._routes(req)
            try:
                self.decider.answer(req, send, sibling)
            except Exception as exc:  # noqa: BLE001 - a failed decision refuses the line
                if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                    import traceback

                    traceback.print_exc(file=sys.stderr)
                send(response(req.seq, REFUSE, self.decider.failmode,
                                 f"tcg: blocked (internal-error): the session station failed "
                                 f"({type(exc).__name__})",
                                 "hint: rerun with TCG_DEBUG=1 for a traceback and report it"))

    def _routes(self, req: Request) -> tuple[Callable[[bytes], None], Callable[[bytes], None] | None]:
        """(the requester's pipe, the other reader's) for ``req``: a subshell that says
        it reads the children's pipe (flag ``c``, bash) is answered there; a hook
        without the flag (an older one pasted into an rc file) on the shell's pipe."""
        if self.pipes.child_responses < 0:
            return self.send, None
        if "c" in req.flags:
            return self.send_child, self.send
        return self.send, self.wait_to_children

    def wait_to_children(self, data: bytes) -> None:
        """A ``wait`` for a subshell that may be asking about the same line, unless
        the children's pipe holds unread bytes already: sent on every question and
        read only when a subshell asks, it would fill the pipe over a long session
        (and then an answer to a subshell would be dropped)."""
        if self.pipes.children_waiting() == 0:
            self.send_child(data)

    def send(self, data: bytes) -> None:
        self._write(self.pipes.responses, data)

    def send_child(self, data: bytes) -> None:
        self._write(self.pipes.child_responses, data)

    def _write(self, fd: int, data: bytes) -> None:
        try:
            os.write(fd, data)
        except OSError:  # full (BlockingIOError), closed (BrokenPipeError) or gone
            self.dropped += 1
