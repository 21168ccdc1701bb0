# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154,SC2296,SC2298,SC2206,SC2299
# The session start for zsh, shared by tcg's hook (hook.zsh) and its early start
# block (early.zsh): tcg/shells/shells.py puts the part between the START markers
# where those files say `# @TCG_START@`. Valid zsh at rest (zsh -n), in the
# bash-compatible subset shellcheck can read.
# --- START (begin) ---
# Outside a session, an interactive shell on a terminal becomes one: exec
# `tcg_shell session`, which starts zsh again on a terminal tcg masks (opt out:
# TCG_SESSION_AUTO=0). Not when the tcg it was generated for is gone, nor in the
# shell a station started (no loop).
_tcg_start() {
  emulate -L zsh # whatever options the rc file set (KSH_ARRAYS, WARN_NESTED_VAR …)
  [[ $_tcg_session == 1 && ${TCG_SESSION_AUTO-1} != 0 && -x $_tcg_py && -r $_tcg_pkg/runner/session.py &&
    ${TCG_SESSION_PID-} != "$PPID" ]] || return 0
  local shell=${ZSH_ARGZERO#-}
  local -a args opt
  # A name, not a path: the station looks it up in PATH (here, $commands
  # would hash every PATH directory first, a few ms per new terminal).
  if [[ $shell != /* ]]; then shell=${${shell##*/}:-zsh}; fi
  # The same shell with the same arguments (Linux: /proc; elsewhere none).
  args=()
  if [[ -r /proc/$$/cmdline ]]; then args=(${(0)"$(</proc/$$/cmdline)"}); fi
  opt=(--shell "$shell" --auto)
  if [[ -o login ]]; then opt+=(--login); fi
  # Python starts without site-packages (-S: a third of its start-up); the
  # session adds them once this shell runs again inside it. The trailing
  # comment keeps the process findable as `tcg.shell_entry session` (ps, pgrep).
  exec "$_tcg_py" -I -S -c 'import sys;sys.path.append(sys.argv.pop(1));from tcg.runner.session import lean_main;lean_main()#tcg.shell_entry session' "${_tcg_pkg%/*}" "${opt[@]}" -- "${(@)args[2,-1]}"
}
# --- START (end) ---
