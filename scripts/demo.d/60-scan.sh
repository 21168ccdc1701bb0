# shellcheck shell=bash
# tcg scan: a token committed and deleted later is still in history; tcg finds it
# and prints where — never the value. Sourced by scripts/demo.sh (uses step/run).
scan_repo="${demo_root:?}/scan-demo"
git init -q -b main "$scan_repo"
(
  cd "$scan_repo" || exit 1
  export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.invalid
  export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.invalid
  printf '# app\n' > README.md
  git add README.md && git commit -qm init
  # A made-up token, assembled at run time so this file holds none.
  printf 'TOKEN = "ghp_%s"\n' "$(printf 'k3Jd9QwXz7LmP2rT5vB8nC4hY6uE1aS0fG3j' | rev)" > settings.py
  git add settings.py && git commit -qm "add settings"
  git rm -q settings.py && git commit -qm "remove the token"
)
step "tcg scan: the deleted token is still in history (exit 1); the output names rule, path, line, commit"
run tcg scan "$scan_repo"
step "Only the working tree: clean (exit 0)"
run tcg scan --no-history "$scan_repo"
step "A budget makes the scan partial, and the output says so (exit 3)"
run tcg scan --max-objects 1 "$scan_repo"
