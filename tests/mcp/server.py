"""A real MCP server (the SDK's MCPServer, formerly FastMCP) for the proxy tests.

Run as a script: ``python tests/mcp/server.py``. It reads files, dumps its
environment, returns large payloads, base64 blobs, structured content, reports
progress, asks the client to sample, sleeps (for cancellation) and, with
TEST_GARBAGE=1, prints non-JSON lines on stdout. The planted secrets come from
the test through the environment and files; nothing secret lives here.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

import mcp_types as types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

if os.environ.get("TEST_GARBAGE") == "1":
    os.write(1, b"this server prints garbage on stdout before speaking MCP\n")

mcp = MCPServer("tcg-test")


@mcp.tool()
def read_file(path: str) -> str:
    """Return a file's text."""
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        return fh.read()


@mcp.tool()
def echo(text: str) -> str:
    """Return the argument unchanged."""
    return text


@mcp.tool()
def env_dump() -> str:
    """Every environment variable, NAME=value per line."""
    return "\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))


@mcp.tool()
def structured() -> types.CallToolResult:
    """A secret inside structuredContent (and a key that is one)."""
    secret = os.environ.get("TEST_SECRET_A", "")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="see structuredContent")],
        structured_content={"config": {"token": secret, "nested": [secret]}, secret: "as a key"})


@mcp.tool()
def blob(path: str) -> list:
    """A file as an image (base64 data) and as an embedded blob resource."""
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return [
        types.ImageContent(type="image", data=data, mime_type="image/png"),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///blob.bin", blob=data, mime_type="application/octet-stream")),
    ]


BIG_BLOCK = ("lorem ipsum dolor sit amet, consectetur adipiscing elit 0123\n" * 999
             + "multi-byte: \u2014 \u2713 \u6f22\u5b57 \u2028 \u0085 end\n")


@mcp.tool()
def big(size: int, tail: str = "") -> types.CallToolResult:
    """``size`` bytes of text (mostly ASCII; multi-byte UTF-8, U+2028 and U+0085 in it), then ``tail``."""
    data = (BIG_BLOCK * (size // len(BIG_BLOCK) + 1)).encode("utf-8")[:size]
    text = data.decode("utf-8", "ignore") + tail
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


@mcp.tool()
async def prog(steps: int, ctx: Context) -> str:
    """Report progress ``steps`` times."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return "done"


@mcp.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Ask the client's model (sampling/createMessage) and return its answer."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
            max_tokens=16)
    return r.content.text


@mcp.tool()
async def sleep(seconds: float) -> str:
    """Sleep (a call to cancel)."""
    await asyncio.sleep(seconds)
    return "slept"


@mcp.tool()
def garbage() -> str:
    """Write a non-JSON line to fd 1, then answer (the SDK server maps fd 1 to stderr
    while serving, so only the TEST_GARBAGE startup line reaches the real stdout)."""
    sys.stdout.flush()
    os.write(1, b"garbage from inside a tool {not json\n")
    return "ok"


@mcp.tool()
def pid() -> int:
    """The server's process id (for the orphan check)."""
    return os.getpid()


@mcp.tool()
async def roots(ctx: Context) -> int:
    """Ask the client for its roots (roots/list); return how many."""
    result = await ctx.session.list_roots()
    return len(result.roots)


def deploy() -> str:
    return "deployed"


mcp.tool(name="deploy", description="deploy with key " + os.environ.get("TEST_SECRET_D", ""))(deploy)


@mcp.resource("config://secret")
def secret_resource() -> str:
    """A resource whose text holds a secret."""
    return "token=" + os.environ.get("TEST_SECRET_B", "")


@mcp.prompt()
def leaky_prompt() -> str:
    """A prompt whose text holds a secret."""
    return "use this key: " + os.environ.get("TEST_SECRET_C", "")


if __name__ == "__main__":
    mcp.run()
