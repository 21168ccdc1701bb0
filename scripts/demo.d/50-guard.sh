# shellcheck shell=bash
# shellcheck disable=SC2016  # the $… below are meant literally: they are the lines tcg checks
# Delete-guard (docs/guard.md): a delete is moved to the trash and given back; git work is
# snapshotted; what cannot be made reversible is refused. Sourced by scripts/demo.sh (step/run).
guard_repo="${demo_root:?}/guard-demo"
git init -q -b main "$guard_repo"
(
  cd "$guard_repo" || exit 1
  export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.invalid
  export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.invalid
  printf 'print("hi")\n' > app.py && git add app.py && git commit -qm init
  mkdir -p build/assets && printf 'bundle\n' > build/app.js && printf 'logo\n' > build/assets/logo.svg
  printf 'new, staged, never committed\n' > staged.txt && git add staged.txt
)
cd "$guard_repo" || exit 1
step "rm -rf build/ by an agent: decided RELOCATE, then moved to the trash before rm runs (rm behaves as usual)"
run tcg check --actor agent 'rm -rf build/'
run env TCG_ACTOR=agent tcg_shell run-line 'rm -rf build/'
run ls
run tcg trash list
guard_tx=$(tcg trash list --json | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["txid"])')
step "tcg restore brings the directory back, byte for byte"
run tcg restore "$guard_tx"
run cat build/assets/logo.svg
step "git reset --hard would delete a staged file that was never committed: snapshotted under refs/tcg/ first"
run env TCG_ACTOR=agent tcg_shell run-line 'git reset --hard'
run ls
guard_tx=$(tcg trash list --json | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["txid"])')
run tcg restore "$guard_tx"
run git status --short
step "What cannot be made reversible is refused (exit 2 here, 126 when run): globs, variables, force pushes"
run tcg check --actor agent 'rm -f *.log'
run tcg check --actor agent 'rm -rf "$DIR"/'
run tcg check --actor agent 'git push --force origin main'
step "An outbound channel decides a secret by where it goes: masked for the model, blocked for a commit"
demo_token="ghp_$(LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 36)"
printf 'use %s\n' "$demo_token" | run tcg check-span --channel llm-request --sanitize
printf 'use %s\n' "$demo_token" | run tcg check-span --channel git-commit-message
unset demo_token guard_tx
cd "${work:?}" || exit 1
