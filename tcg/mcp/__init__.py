"""MCP stdio proxy (`tcg mcp-proxy`): request check, response masking, never a broken frame.

See docs/mcp.md. Modules: framing (lines, JSON-RPC shapes, error frames),
check_request, mask_response, relay (processes, threads, signals), proxy
(the session handler and ``run_proxy``).
"""
