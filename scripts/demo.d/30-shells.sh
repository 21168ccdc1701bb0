# shellcheck shell=bash
# Shell hooks (sourced by scripts/demo.sh): what `tcg_shell init` prints and how a line is routed.
step "The bash hook: absolute interpreter path, reader aliases, agent functions, Enter handler"
run sh -c 'tcg_shell init bash | sed -n "9,14p"'
step "Which lines run in the station agent and which must run in your shell (parser, not first word)"
run tcg_shell classify 'make test | tail -3'
run tcg_shell classify 'cd /tmp && rm -rf build'
run tcg_shell classify '(cd sub && make)'
step "Unsupported shells are refused with the supported list"
run tcg_shell init fish
