"""Shared pieces of the MCP proxy tests: planted secrets, the proxied SDK client, leak checks."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import string
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "server.py")
TAP = str(HERE / "tap.py")
TCG_ERROR_CODE = -32051

_rng = random.SystemRandom()
_ALNUM = string.ascii_letters + string.digits


def _rnd(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def planted_secrets() -> dict[str, str]:
    """Fresh fake, realistically shaped credentials (random per test run)."""
    return {
        "TEST_SECRET_A": "ghp_" + _rnd(36),
        "TEST_SECRET_B": "sk_live_" + _rnd(24),
        "TEST_SECRET_C": "xoxb-" + _rnd(11, string.digits) + "-" + _rnd(12, string.digits) + "-" + _rnd(24),
        "TEST_SECRET_D": "npm_" + _rnd(36),
    }


def proxy_argv(tap_log: Path | None = None, server_args: list[str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", "tcg", "mcp-proxy", "--", sys.executable, SERVER, *(server_args or [])]
    if tap_log is not None:
        argv = [sys.executable, TAP, str(tap_log), "--", *argv]
    return argv


def run_client(body: Callable[[Any], Awaitable[Any]], *, tap_log: Path | None = None,
               env: dict[str, str] | None = None, cwd: Path | None = None,
               direct: bool = False, mode: str = "legacy", **client_kw: Any) -> Any:
    """Run ``body(client)`` with the official SDK client over stdio through the proxy."""
    import anyio
    import mcp_types as types
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def sampling(ctx: Any, params: Any) -> Any:
        return types.CreateMessageResult(
            role="assistant", model="test",
            content=types.TextContent(type="text", text="sampled:" + params.messages[0].content.text))

    argv = [sys.executable, SERVER] if direct else proxy_argv(tap_log)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **(env or {})},
                                   cwd=str(cwd) if cwd else None)

    async def main() -> Any:
        async with Client(params, sampling_callback=sampling, mode=mode, **client_kw) as client:
            return await body(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


_B64_RUN = re.compile(rb"[A-Za-z0-9+/_\-]{16,}={0,2}")


def _decodings(data: bytes) -> list[bytes]:
    out = []
    for m in _B64_RUN.finditer(data):
        run = m.group(0).rstrip(b"=")
        for shift in range(4):  # a run may start mid-quantum inside a larger token
            body = run[shift:]
            body = body[: len(body) - len(body) % 4]
            for alt in (b"+/", b"-_"):
                try:
                    out.append(base64.b64decode(body, altchars=alt, validate=False))
                except ValueError:
                    pass
    return out


def leak_forms(secret: str) -> list[bytes]:
    """The secret verbatim, JSON-escaped (\\uXXXX every char), percent-encoded (every char)."""
    return [
        secret.encode(),
        json.dumps(secret)[1:-1].encode(),
        "".join(f"\\u{ord(c):04x}" for c in secret).encode(),
        quote(secret, safe="").encode(),
        "".join(f"%{b:02X}" for b in secret.encode()).encode(),
        "".join(f"%{b:02x}" for b in secret.encode()).encode(),
    ]


def assert_no_leak(data: bytes, secrets: list[str]) -> None:
    """No planted secret in ``data`` in any form, nor inside any base64 run of it."""
    decoded = _decodings(data)
    for s in secrets:
        for form in leak_forms(s):
            assert form not in data, "planted secret reached the client"
        needle = s.encode()
        for raw in decoded:
            assert needle not in raw, "planted secret reached the client inside base64"
