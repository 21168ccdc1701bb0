# shellcheck shell=bash
# tcg clipboard watch: a token copied to the clipboard is replaced by a placeholder in place.
# Needs Xvfb and xclip (skipped otherwise). Sourced by scripts/demo.sh (uses step/run).
if command -v Xvfb >/dev/null 2>&1 && command -v xclip >/dev/null 2>&1; then
  clip_fd_file="${demo_root:?}/xvfb.display"
  Xvfb -displayfd 3 -nolisten tcp 3>"$clip_fd_file" >/dev/null 2>&1 &
  clip_xvfb=$!
  for _ in $(seq 1 100); do [ -s "$clip_fd_file" ] && break; sleep 0.1; done
  DISPLAY=":$(cat "$clip_fd_file")"
  export DISPLAY
  # A made-up token, assembled at run time so this file holds none.
  printf 'export GITHUB_TOKEN=ghp_%s\n' "$(printf 'k3Jd9QwXz7LmP2rT5vB8nC4hY6uE1aS0fG3j' | rev)" \
    | xclip -selection clipboard -i
  sleep 0.3
  step "A token was copied to the clipboard; one pass of the watcher masks it in place"
  run tcg clipboard watch --once
  printf '%s$ xclip -selection clipboard -o%s\n' "${bold:-}" "${plain:-}"
  xclip -selection clipboard -o
  step "The event records rule ids, lengths and keyed hashes — never the content"
  run tcg events --type clipboard_masked
  step "To run it in the background: a systemd user unit (launchd / Task Scheduler on macOS / Windows)"
  run tcg clipboard service --platform systemd
  kill "$clip_xvfb" 2>/dev/null
  wait "$clip_xvfb" 2>/dev/null
  unset DISPLAY
fi
