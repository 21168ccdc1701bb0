# shellcheck shell=bash
# Station agent (docs/shells.md, docs/policy.md): an agent's read of a secret store is refused with
# 126 before anything runs; a human's command runs with secrets masked.
# Sourced by scripts/demo.sh (run/step helpers, cwd = the demo project).

# A made-up token shaped like a GitHub PAT; tcg prints only its placeholder.
printf 'deploy token: ghp_%s\n' "Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8" > notes.txt

run env TCG_ACTOR=agent tcg_shell run-line 'cat .env'
run env TCG_ACTOR=agent tcg_shell run-line 'cat notes.txt'
run tcg_shell run-line 'cat .env'
run tcg_shell run-line 'exit 42'
run tcg events --type command_decision
