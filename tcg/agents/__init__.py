"""Agent tool adapters: tcg inside an agent CLI's own tools, through its hooks.

An agent reads files, searches, fetches URLs and calls MCP tools in-process,
without a shell: `tcg launch` routes its shell commands through the station,
and its hooks are how tcg sees everything else (docs/agents.md).

Modules:
- base: the tool call, the hook's context, and the extension points' base classes;
- pipeline: the protocol-neutral steps every hook event goes through, and the
  registries other features plug into (below);
- tools: what each agent tool touches (files read or written, outbound text);
- checks: the PreToolUse decision steps (files through tcg.policy, command
  lines, outbound text, MCP and sub-agent arguments);
- outputs: the PostToolUse output transforms (strict secret masking);
- adapter: the hook entry shared by every CLI (parse, decide, record, reply;
  every failure a refusal);
- claude: Claude Code's replies (`tcg hook claude EVENT`) and its hook entries;
- qwen: Qwen Code's replies (`tcg hook qwen EVENT`) and its hook entries;
- entry: `tcg hook AGENT EVENT`, routed without click;
- settings: the settings `tcg launch` generates, and what would switch hooks off;
- routes: the names of the helper files `tcg launch` routes shell commands through;
- install: `tcg agents install|uninstall claude`, and what `tcg doctor` reads.

Extension points (registries in tcg.agents.pipeline, base classes in tcg.agents.base):
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
