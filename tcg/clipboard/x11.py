"""A change hint for X11: XFixes tells us when the CLIPBOARD owner is (re)set.

Starting ``xclip`` twice a second is most of the watcher's idle cost. X has a
cheaper signal: with the XFixes extension a client can ask for a
SelectionNotify event every time any client takes the CLIPBOARD selection —
and every copy does, even from the same window. This module speaks just enough
of the X11 wire protocol (stdlib socket + struct, no dependency) to subscribe
and then count events with a non-blocking read per poll.

The hint only ever *saves* reads: the watcher still reads the clipboard when
an event arrived, when the hint is unavailable (no XFixes, auth refused, the
display went away — it reconnects later), and at least every few seconds
regardless, for an owner that changes its data without re-taking ownership.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from collections.abc import Mapping
from pathlib import Path

SETUP_TIMEOUT = 2.0
RECONNECT_EVERY = 2.0  # seconds between reconnection attempts after a failure
_FAMILY_LOCAL, _FAMILY_WILD = 256, 65535
_SELECTION_EVENT_MASK = 1 | 2 | 4  # SetSelectionOwner | SelectionWindowDestroy | SelectionClientClose


class X11Error(Exception):
    """The hint cannot be set up (the watcher then reads every poll)."""


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def parse_display(display: str) -> tuple[str, int]:
    """``[host]:N[.S]`` -> (host, N); host "" means the local Unix socket."""
    host, sep, rest = display.rpartition(":")
    if not sep:
        raise X11Error(f"cannot parse DISPLAY {display!r}")
    try:
        num = int(rest.split(".", 1)[0])
    except ValueError:
        raise X11Error(f"cannot parse DISPLAY {display!r}") from None
    return ("" if host in ("", "unix") else host), num


def read_xauthority(path: Path, number: int, hostname: str) -> tuple[bytes, bytes]:
    """(auth name, auth data) for display ``number`` from an Xauthority file, else empty."""
    try:
        raw = path.read_bytes()
    except OSError:
        return b"", b""
    entries = []
    pos = 0
    try:
        while pos < len(raw):
            (family,) = struct.unpack_from(">H", raw, pos)
            pos += 2
            fields = []
            for _ in range(4):
                (n,) = struct.unpack_from(">H", raw, pos)
                fields.append(raw[pos + 2: pos + 2 + n])
                pos += 2 + n
            entries.append((family, *fields))
    except struct.error:
        pass  # a truncated file: use what parsed
    want = str(number).encode()
    host = hostname.encode()
    for family, address, num, name, data in entries:
        if num == want and (family == _FAMILY_WILD or (family == _FAMILY_LOCAL and address == host)):
            return name, data
    for _family, _address, num, name, data in entries:
        if num == want:
            return name, data
    return b"", b""


class _Conn:
    """One X connection subscribed to XFixes selection events for CLIPBOARD."""

    def __init__(self, display: str, env: Mapping[str, str]):
        host, num = parse_display(display)
        try:
            if host:
                sock = socket.create_connection((host, 6000 + num), timeout=SETUP_TIMEOUT)
            else:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(SETUP_TIMEOUT)
                try:
                    sock.connect(f"\0/tmp/.X11-unix/X{num}")  # Linux abstract socket
                except OSError:
                    sock.close()
                    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    sock.settimeout(SETUP_TIMEOUT)
                    sock.connect(f"/tmp/.X11-unix/X{num}")
        except OSError as exc:
            raise X11Error(f"cannot connect to {display}: {exc}") from None
        self.sock = sock
        self.seq = 0
        self.first_event = -1
        self._buf = b""
        try:
            self._setup(num, env)
        except (OSError, struct.error, X11Error) as exc:
            self.close()
            raise X11Error(str(exc)) from None

    # -- wire helpers -------------------------------------------------------------
    def _recv_exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise X11Error("connection closed")
            out += chunk
        return out

    def _request(self, data: bytes) -> int:
        self.sock.sendall(data)
        self.seq = (self.seq + 1) & 0xFFFF
        return self.seq

    def _reply(self, seq: int) -> bytes:
        """The reply to request ``seq`` (events before it are noted, errors raise)."""
        while True:
            unit = self._recv_exact(32)
            kind = unit[0]
            if kind == 0:
                raise X11Error(f"X error {unit[1]} for request {struct.unpack_from('<H', unit, 2)[0]}")
            if kind == 1:
                (length,) = struct.unpack_from("<I", unit, 4)
                extra = self._recv_exact(length * 4) if length else b""
                if struct.unpack_from("<H", unit, 2)[0] == seq:
                    return unit + extra
                continue
            # an event arriving during setup: nothing to do, the first poll reads anyway

    # -- setup ----------------------------------------------------------------------
    def _setup(self, num: int, env: Mapping[str, str]) -> None:
        xauth = env.get("XAUTHORITY") or os.path.join(env.get("HOME", ""), ".Xauthority")
        name, data = read_xauthority(Path(xauth), num, socket.gethostname())
        self.sock.sendall(struct.pack("<BxHHHHxx", ord("l"), 11, 0, len(name), len(data))
                          + _pad(name) + _pad(data))
        head = self._recv_exact(8)
        (extra_len,) = struct.unpack_from("<H", head, 6)
        body = self._recv_exact(extra_len * 4)
        if head[0] != 1:
            reason = body[: head[1]].decode("latin-1", "replace") if head[0] == 0 else "authenticate"
            raise X11Error(f"X server refused the connection: {reason.strip()}")
        (vendor_len,) = struct.unpack_from("<H", body, 16)
        n_formats = body[21]
        screen_at = 32 + vendor_len + (-vendor_len % 4) + 8 * n_formats
        (root,) = struct.unpack_from("<I", body, screen_at)
        clipboard = self._intern(b"CLIPBOARD")
        ext = b"XFIXES"
        seq = self._request(struct.pack("<BxHHxx", 98, 2 + len(_pad(ext)) // 4, len(ext)) + _pad(ext))
        r = self._reply(seq)
        present, major, first_event = r[8], r[9], r[10]
        if not present:
            raise X11Error("the X server has no XFIXES extension")
        self.first_event = first_event
        # XFixesQueryVersion must precede any other XFixes request
        self._reply(self._request(struct.pack("<BBHII", major, 0, 3, 5, 0)))
        self._request(struct.pack("<BBHIII", major, 2, 4, root, clipboard, _SELECTION_EVENT_MASK))
        self._reply(self._request(struct.pack("<BxH", 43, 1)))  # GetInputFocus: a round trip
        self.sock.setblocking(False)

    def _intern(self, name: bytes) -> int:
        seq = self._request(struct.pack("<BBHHxx", 16, 0, 2 + len(_pad(name)) // 4, len(name))
                            + _pad(name))
        (atom,) = struct.unpack_from("<I", self._reply(seq), 8)
        return int(atom)

    # -- polling ----------------------------------------------------------------------
    def pending_changes(self) -> int:
        """Number of selection events received since the last call (non-blocking)."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                raise X11Error(f"connection lost: {exc}") from None
            if not chunk:
                raise X11Error("connection closed")
            self._buf += chunk
        count = 0
        while len(self._buf) >= 32:
            unit, self._buf = self._buf[:32], self._buf[32:]
            if unit[0] == 1:  # a late reply (none expected): skip its extra data
                (length,) = struct.unpack_from("<I", unit, 4)
                self._buf = self._buf[length * 4:]
            elif (unit[0] & 0x7F) == self.first_event:
                count += 1
        return count

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class SelectionHint:
    """``changed()`` -> True (an owner change was seen, or unknown after a reconnect),
    False (no change since the last call), None (no hint available right now)."""

    def __init__(self, display: str, env: Mapping[str, str] | None = None):
        self.display = display
        self.env = dict(os.environ if env is None else env)
        self._conn: _Conn | None = None
        self._next_try = 0.0
        self.error: str | None = None

    def changed(self) -> bool | None:
        if self._conn is None:
            now = time.monotonic()
            if now < self._next_try:
                return None
            try:
                self._conn = _Conn(self.display, self.env)
                self.error = None
            except X11Error as exc:
                self.error = str(exc)
                self._next_try = now + RECONNECT_EVERY
                return None
            return True  # whatever happened while unconnected is unknown
        try:
            return self._conn.pending_changes() > 0
        except X11Error as exc:
            self.error = str(exc)
            self.close()
            self._next_try = time.monotonic() + RECONNECT_EVERY
            return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
