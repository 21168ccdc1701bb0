# shellcheck shell=bash
# The terminal session (sourced by scripts/demo.sh): `tcg_shell init` output,
# then a scripted terminal typing into a bash that became a tcg session.
step "The bash hook, appended with \`tcg_shell init bash >> ~/.bashrc\`: absolute paths, no Python per shell"
run sh -c 'tcg_shell init bash | sed -n "16,21p"'
step "A terminal session, typed at by a script (scripts/demo_session.py)"
python3 "$here/demo_session.py" || echo "(the session demo failed: exit $?)"
step "Unsupported shells are refused with the supported list"
run tcg_shell init fish
