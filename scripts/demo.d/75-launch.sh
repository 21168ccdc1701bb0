# shellcheck shell=bash
# tcg launch: the agent gate. A fake `claude` (prints what it was started with) stands in
# for the real agent. Sourced by scripts/demo.sh (uses step/run; reuses 60-scan's repo).
launch_bin="${demo_root:?}/launch-bin"
mkdir -p "$launch_bin"
cat > "$launch_bin/claude" <<'AGENT'
#!/bin/sh
echo "fake claude: pid $$, args: $*, TCG_ACTOR=$TCG_ACTOR, shell prefix set: ${CLAUDE_CODE_SHELL_PREFIX:+yes}"
AGENT
chmod +x "$launch_bin/claude"
launch_repo="${demo_root:?}/launch-demo"
git init -q -b main "$launch_repo"
(
  cd "$launch_repo" || exit 1
  printf 'print("hi")\n' > app.py
  git add app.py
  git -c user.name=demo -c user.email=demo@example.invalid commit -qm init
)
step "tcg launch: a clean repository is scanned (working tree + history), then the agent replaces tcg"
(cd "$launch_repo" && PATH="$launch_bin:$PATH" run tcg launch claude -p "hello")
step "Relaunch: the gate cache answers (same repository state and policy), no rescan"
(cd "$launch_repo" && PATH="$launch_bin:$PATH" run tcg launch claude)
run tcg events --type launch_gate
if [ -d "${scan_repo-}" ]; then
  step "A token deleted long ago is still in history: the gate refuses (126) and says how to proceed"
  (cd "$scan_repo" && PATH="$launch_bin:$PATH" run tcg launch claude)
fi
step "Unknown agents are refused; a missing agent is 127"
run tcg launch vim
(PATH="$(dirname "$(command -v tcg)"):/usr/bin:/bin" run tcg launch codex)
