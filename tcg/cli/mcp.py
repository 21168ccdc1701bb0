"""`tcg mcp-proxy [--name N] -- CMD ARG…`: the MCP stdio proxy in front of a server."""

from __future__ import annotations

import click

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@click.command(name="mcp-proxy", context_settings=_PASS_THROUGH)
@click.option("--name", metavar="N", help="Server name for events (default: the command's basename).")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARG]...")
def mcp_proxy(name: str | None, argv: tuple[str, ...]) -> int:
    """Run the MCP stdio server CMD ARG… behind the proxy (docs/mcp.md).

    Requests naming protected resources (.env, .ssh, SSH keys, policy
    mcp.protected_resources) get a JSON-RPC error (code -32051); secrets in
    anything the server sends are masked. Exit code: the server's.
    """
    from tcg.mcp.proxy import run_proxy

    args = list(argv)
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise click.UsageError("missing CMD (usage: tcg mcp-proxy [--name N] -- CMD ARG…)")
    return run_proxy(args, name)
