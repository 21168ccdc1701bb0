"""The agent launch gate (`tcg launch AGENT`): scan the repository, decide,
wire the agent so its own shell commands reach the station agent, then exec it.

Modules: resolve (find the real agent binary), gate (repo state key, cache,
scan, decision), wiring (per-agent environment and the generated helper files),
claude_prefix (what CLAUDE_CODE_SHELL_PREFIX runs), exec (become the agent).
"""
