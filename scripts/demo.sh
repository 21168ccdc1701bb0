#!/usr/bin/env bash
# A short scripted demonstration of tcg on the built-in default policy.
# Runs in a throw-away TCG_HOME and work directory; touches nothing else.
set -uo pipefail

demo_root=$(mktemp -d "${TMPDIR:-/tmp}/tcg-demo.XXXXXX")
trap 'rm -rf "$demo_root"' EXIT
export TCG_HOME="$demo_root/tcg-home"
work="$demo_root/project"
mkdir -p "$work" && cd "$work" || exit 1

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { step "$*"; "$@"; printf '(exit %s)\n' "$?"; }

# A project with a secret store and an ordinary file. The "secret" is a
# made-up value shaped like a GitHub token; it is never printed by tcg.
printf 'DATABASE_URL=postgres://app:%s@db.internal/app\n' "hunter2-$(date +%s)" > .env
printf '# Notes\nRun make test.\n' > README.md

run tcg policy show
run tcg check --actor agent 'cat .env'
run tcg check --actor agent "source ~/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && eval 'cat .env' < /dev/null && pwd -P >| /tmp/claude-1-cwd"
run tcg check --actor human 'cat .env'
run tcg check --actor agent 'cat README.md'
run tcg check --actor agent 'printenv'
run tcg events

for extra in "$(dirname "$0")"/demo.d/*.sh; do
  [ -f "$extra" ] || continue
  # shellcheck source=/dev/null
  . "$extra"
done
printf '\nDemo finished. Everything above ran in %s (now removed).\n' "$demo_root"
