# shellcheck shell=bash
# shellcheck disable=SC2154  # bold, plain and step come from scripts/demo.sh
# Streaming masker (docs/masking.md): sourced by scripts/demo.sh; uses its `step` helper.
# The key ids below are made-up fakes with a valid shape.

step "tcg mask: secrets become keyed placeholders; everything else passes through unchanged"
printf '%s$ printf ... | tcg mask%s\n' "$bold" "$plain"
printf 'region=eu-west-1\naws_access_key_id = AKIA%s\nstatus: ok\n' "NLSUWWJL6OX6VRUX" | tcg mask

step "A key split across two writes 0.2 s apart is still masked, in both modes"
for mode in strict terminal; do
  printf '%s$ (printf AKIA; sleep 0.2; printf ...) | tcg mask --mode %s%s\n' "$bold" "$mode" "$plain"
  (printf 'AKIA'; sleep 0.2; printf 'Z7QH3KXALM2PW4RT\n') | tcg mask --mode "$mode"
done

step "grep --color splits the key with escape codes; the masker sees what the screen shows"
printf 'token AKIA%s here\n' "6DITACO2N4V23TSX" > colored.txt
printf '%s$ grep --color=always ACO2 colored.txt | tcg mask | cat -v%s\n' "$bold" "$plain"
grep --color=always ACO2 colored.txt | tcg mask | cat -v
rm -f colored.txt
