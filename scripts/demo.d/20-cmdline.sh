# shellcheck shell=bash
# shellcheck disable=SC2016  # the $… below are meant literally: they are the lines tcg checks
# Command understanding: the same read, however it is hidden (sourced by scripts/demo.sh).
step "tcg parses the line: nested shells, eval, substitutions, wrappers and xargs are seen through"
run tcg check --actor agent "bash -c 'sudo -u app sh -c \"eval cat\\\\ .e\\\\nv\"'"
run tcg check --actor agent 'echo $(base64 < ~/.ssh/id_ed25519)'
run tcg check --actor agent 'find . -name .env | xargs cat'
step "What cannot be known before running is refused for an agent (fail closed), allowed for a human"
run tcg check --actor agent 'cat "$F"'
run tcg check --actor human 'cat "$F"'
step "Lookalikes and legitimate uses stay allowed"
run tcg check --actor agent 'cat environment.txt && ls ~/.ssh && ssh -i ~/.ssh/id_ed25519 host uptime'
