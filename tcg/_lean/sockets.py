"""Unix sockets from ``_socket`` (see tcg._lean): ``socket`` imports enum and
selectors (7-9 ms cumulative here, against 0.5 ms); the masking fork server's client (every
new terminal) needs only the C socket object and a few constants."""

from __future__ import annotations

import _socket
from _socket import (
    AF_UNIX,
    CMSG_SPACE,
    MSG_CTRUNC,
    SCM_RIGHTS,
    SO_PEERCRED,
    SOCK_CLOEXEC,
    SOCK_SEQPACKET,
    SOL_SOCKET,
    socket,
)

# Received descriptors closed on exec (Linux); elsewhere the receiver clears the flag itself.
MSG_CMSG_CLOEXEC: int = getattr(_socket, "MSG_CMSG_CLOEXEC", 0)

__all__ = ["AF_UNIX", "CMSG_SPACE", "MSG_CMSG_CLOEXEC", "MSG_CTRUNC", "SCM_RIGHTS", "SOCK_CLOEXEC", "SOCK_SEQPACKET", "SOL_SOCKET", "SO_PEERCRED",
           "socket"]
