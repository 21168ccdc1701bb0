# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154,SC2296,SC2298,SC2206,SC2299
# The session start for zsh, shared by tcg's hook (hook.zsh) and its early start
# block (early.zsh): tcg/shells/shells.py puts the part between the START markers
# where those files say `# @TCG_START@`. Valid zsh at rest (zsh -n), in the
# bash-compatible subset shellcheck can read.
# --- START (begin) ---
# What the station reads from the environment (its policy, its files, the actor),
# as one string: the session exports the values it started with, and the hook of
# the shell inside compares them with its own once its rc file has run again.
# An rc file that sets one of them below an early start block would otherwise
# leave the station on the values from before (docs/shells.md).
_tcg_envvars=(TCG_HOME TCG_POLICY TCG_PROJECT TCG_ACTOR TCG_AGENT TCG_SESSION_AUTO
  XDG_CONFIG_HOME XDG_STATE_HOME XDG_CACHE_HOME)
_tcg_startenv() {
  local v s=''
  for v in "${_tcg_envvars[@]}"; do
    if [[ -n ${(P)v+x} ]]; then s+="$v=${(P)v}"$'\037'; else s+="$v"$'\037'; fi
  done
  _tcg_env=$s
}

# In the shell inside: say which of them its rc file changed (once, at start).
_tcg_envcheck() {
  local _tcg_env v names='' was=$TCG_SESSION_ENV
  _tcg_startenv
  [[ $_tcg_env == "$was" ]] && return 0
  for v in "${_tcg_envvars[@]}"; do
    if [[ -n ${(P)v+x} ]]; then
      [[ $'\037'$was == *$'\037'"$v=${(P)v}"$'\037'* ]] || names+=" $v"
    else
      [[ $'\037'$was == *$'\037'"$v"$'\037'* ]] || names+=" $v"
    fi
  done
  print -rl -- "tcg: warning: this session's station started with other values of${names:- TCG_*/XDG_* variables}: the rc file changes them below tcg's early start block; the station decides and masks with the old ones" \
    'hint: set them above that block (or in ~/.profile), then open a new terminal' >&2
}

# Outside a session, an interactive shell on a terminal becomes one: exec
# `tcg_shell session`, which starts zsh again on a terminal tcg masks (opt out:
# TCG_SESSION_AUTO=0). Not when the tcg it was generated for is gone, nor in the
# shell a station started (no loop).
_tcg_start() {
  [[ $_tcg_session == 1 && ${TCG_SESSION_AUTO-1} != 0 && -x $_tcg_py && -r $_tcg_pkg/runner/session.py &&
    ${TCG_SESSION_PID-} != "$PPID" ]] || return 0
  local _tcg_env shell=${ZSH_ARGZERO#-}
  local -a args opt
  # A name, not a path: the station looks it up in PATH (here, $commands
  # would hash every PATH directory first, a few ms per new terminal).
  if [[ $shell != /* ]]; then shell=${${shell##*/}:-zsh}; fi
  # The same shell with the same arguments (Linux: /proc; elsewhere none).
  args=()
  if [[ -r /proc/$$/cmdline ]]; then args=(${(0)"$(</proc/$$/cmdline)"}); fi
  opt=(--shell "$shell" --auto)
  if [[ -o login ]]; then opt+=(--login); fi
  _tcg_startenv
  export TCG_SESSION_ENV=$_tcg_env
  # Python starts without site-packages (-S: a third of its start-up); the
  # session adds them once this shell runs again inside it. The trailing
  # comment keeps the process findable as `tcg.shell_entry session` (ps, pgrep).
  exec "$_tcg_py" -I -S -c 'import sys;sys.path.append(sys.argv.pop(1));from tcg.runner.session import lean_main;lean_main()#tcg.shell_entry session' "${_tcg_pkg%/*}" "${opt[@]}" -- "${(@)args[2,-1]}"
}
# --- START (end) ---
