"""MCP stdio proxy (`tcg mcp-proxy`): request check, response masking, never a broken frame.

See docs/mcp.md. Modules: fast_parse (a server line screened raw and parsed as Latin-1),
check_request, mask_response, relay (processes, threads, signals), proxy
(the session handler and ``run_proxy``). The JSON-RPC framing is tcg.jsonrpc,
below the stages the proxy runs (entity aliases, the inbound gate).
"""
