#!/usr/bin/env bash
# A short scripted demonstration of tcg on the built-in default policy.
# Runs in a throw-away TCG_HOME and work directory; touches nothing else.
# Later issues add snippets in scripts/demo.d/NN-area.sh, sourced in order;
# they use the `step` and `run` helpers below.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if ! command -v tcg >/dev/null 2>&1; then
  echo "demo: tcg is not on PATH (run it through 'make demo')" >&2
  exit 1
fi

demo_root=$(mktemp -d "${TMPDIR:-/tmp}/tcg-demo.XXXXXX")
trap 'rm -rf "$demo_root"' EXIT
export TCG_HOME="$demo_root/tcg-home"
unset TCG_POLICY
work="$demo_root/project"
mkdir -p "$work" && cd "$work" || exit 1

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi

# Quote an argument only when it needs it, so the echoed command reads like what you would type.
quote() {
  case $1 in
    *[\"\$\`\\!]*\'* | *\'*[\"\$\`\\!]*) printf "'%s'" "${1//\'/\'\\\'\'}" ;;
    *\'*) printf '"%s"' "$1" ;;
    *[!A-Za-z0-9_./:=@%+,-]* | '') printf "'%s'" "$1" ;;
    *) printf '%s' "$1" ;;
  esac
}
step() { printf '\n%s# %s%s\n' "$bold" "$*" "$plain"; }
run() {
  local line='$' arg
  for arg in "$@"; do line+=" $(quote "$arg")"; done
  printf '%s%s%s\n' "$bold" "$line" "$plain"
  "$@"
  printf '(exit %s)\n' "$?"
}

# A project with a secret store and an ordinary file. The value is made up;
# tcg never prints it.
printf 'DATABASE_URL=postgres://app:%s@db.internal/app\n' "hunter2-$(date +%s)" > .env
printf '# Notes\nRun make test.\n' > README.md

step "The built-in policy: snapshot id and fingerprint (tcg policy show prints all of it)"
printf '%s$ tcg policy show | head -n 3%s\n' "$bold" "$plain"
tcg policy show | head -n 3
step "An agent reading .env is blocked (exit 2); so is the same read hidden in Claude Code's wrapper"
run tcg check --actor agent 'cat .env'
run tcg check --actor agent "source ~/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && eval 'cat .env' < /dev/null && pwd -P >| /tmp/claude-1-cwd"
step "A human at a terminal may read it, masked (sanitize, exit 0); ordinary files are allowed"
run tcg check --actor human 'cat .env'
run tcg check --actor agent 'cat README.md'
run tcg check --actor agent 'printenv'
step "A repository policy cannot loosen the rules: this one tries, and is ignored with a notice"
mkdir -p .tcg && printf '[decisions.agent]\nsecret-store-read = "allow"\n' > .tcg/policy.toml
run tcg policy check .tcg/policy.toml
run tcg check --actor agent 'cat .env'
rm -r .tcg
step "Self-check"
run tcg doctor

for extra in "$here"/demo.d/*.sh; do
  [ -f "$extra" ] || continue
  # shellcheck source=/dev/null
  . "$extra"
done

step "The security-event log: what was decided, never a secret value (tcg check only evaluates)"
run tcg events
printf '\nDemo finished. Everything above ran in %s (now removed).\n' "$demo_root"
