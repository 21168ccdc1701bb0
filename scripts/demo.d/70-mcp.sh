# shellcheck shell=bash
# MCP proxy: protected resources refused, secrets in server output masked (sourced by scripts/demo.sh).
# The server is the scripted test server (stdlib only); the token is made up at run time.
# shellcheck disable=SC2154  # $here is set by scripts/demo.sh
mcp_server="$here/../tests/mcp/raw_server.py"
step "tcg mcp-proxy in front of an MCP server: a read of .env spelled %2Eenv never reaches it (error -32051, same id)"
printf '%s\n' '{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"read_file","arguments":{"path":"%2Eenv"}}}' \
  | run tcg mcp-proxy --name demo -- python3 "$mcp_server"
step "A secret in what the server sends back is masked before the client sees it"
demo_token="ghp_$(LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 36)"
printf '{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"deploy key %s"}}\n' "$demo_token" \
  | run tcg mcp-proxy --name demo -- python3 "$mcp_server"
unset demo_token mcp_server
