# shellcheck shell=bash
# The session start for bash, shared by tcg's hook (hook.bash) and its early
# start block (early.bash): tcg/shells/shells.py puts the part between the START
# markers where those files say `# @TCG_START@`. Valid bash at rest.
# shellcheck disable=SC2154  # _tcg_py, _tcg_pkg, _tcg_session: the file it is put in sets them
# --- START (begin) ---
# Outside a session, an interactive shell on a terminal becomes one: exec
# `tcg_shell session`, which starts this shell again on a terminal tcg masks
# (opt out: TCG_SESSION_AUTO=0). Not when the tcg it was generated for is gone,
# nor in the shell a station started (no loop).
_tcg_start() {
  [[ $_tcg_session == 1 && ${TCG_SESSION_AUTO-1} != 0 && -x $_tcg_py && -r $_tcg_pkg/runner/session.py &&
    ${TCG_SESSION_PID-} != "$PPID" ]] || return 0
  # The same shell with the same arguments (Linux: /proc; elsewhere none).
  local -a args=() opt=(--shell "$BASH" --auto)
  if [[ -r /proc/$$/cmdline ]] && ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404)); then
    builtin mapfile -d '' -t args </proc/$$/cmdline
  fi
  if builtin shopt -q login_shell; then opt+=(--login); fi
  # Python starts without site-packages (-S: a third of its start-up); the
  # session adds them once this shell runs again inside it. The trailing
  # comment keeps the process findable as `tcg.shell_entry session` (ps, pgrep).
  exec "$_tcg_py" -I -S -c 'import sys;sys.path.append(sys.argv.pop(1));from tcg.runner.session import lean_main;lean_main()#tcg.shell_entry session' "${_tcg_pkg%/*}" "${opt[@]}" -- "${args[@]:1}"
}
# --- START (end) ---
