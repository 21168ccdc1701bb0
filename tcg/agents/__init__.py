"""Agent tool adapters: tcg inside an agent CLI's own tools, through its hooks.

An agent reads files, searches, fetches URLs and calls MCP tools in-process,
without a shell: `tcg launch` routes its shell commands through the station,
and its hooks are how tcg sees everything else (docs/agents.md).

Modules:
- pipeline: the protocol-neutral steps every hook event goes through, and the
  extension points other features plug into (below);
- tools: what each agent tool touches (files read or written, outbound text);
- checks: the PreToolUse decision steps (files through tcg.policy, command
  lines, outbound text, MCP and sub-agent arguments);
- outputs: the PostToolUse output transforms (strict secret masking);
- claude: Claude Code's hook protocol (`tcg hook claude EVENT`) and the
  settings that wire it (`--settings` at launch, `tcg agents install`);
- qwen: Qwen Code's hook protocol (`tcg hook qwen EVENT`) and its settings;
- install: merging tcg's hooks into, and out of, an agent's settings file.

Extension points (tcg.agents.pipeline; each a list other features append to):
- ``OUTPUT_TRANSFORMS`` — PostToolUse: each transform gets the tool's response
  (in the tool's own shape) and returns it changed or unchanged, plus the
  rules it applied and optional context for the model. Today: strict secret
  masking. Planned: business-entity aliasing (real name → alias, before
  masking) and an inbound prompt-injection warning (additional context).
- ``INPUT_TRANSFORMS`` — PreToolUse: each transform gets the complete tool
  input and may return a complete replacement (an agent's `updatedInput`
  replaces the whole input). Planned: alias → real restore in
  Write/Edit/MultiEdit/NotebookEdit.
- ``DECISION_STEPS`` — PreToolUse: each step returns reasons (tcg.policy.model.
  Reason); the worst decision wins. ``OUTBOUND_CHANNELS`` maps a channel name
  to a step that decides content leaving through a tool (planned: the
  file-write channel for Write/Edit content).
"""
