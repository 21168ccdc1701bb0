"""The agent launch gate (`tcg launch AGENT`): scan the repository, decide,
wire the agent so its own tools reach tcg, then exec it.

Modules, each with one job: launch (the entry point and the order of steps),
resolve (find the real agent binary), state (the repository-state key, with
git), cache (signed gate-cache entries), gate (state key + cache + scan on a
miss), wiring (per-agent environment and the helper files rendered from
``shims/``), claude_prefix (what CLAUDE_CODE_SHELL_PREFIX runs), exec (become
the agent).
"""
