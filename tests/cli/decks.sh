# Every shipped deck runs to completion at 2 ranks (as the README promises).
source "$(dirname "$0")/common.sh"
for deck in "$SRC"/input/*.ini; do
  out=$(basename "$deck" .ini).h5
  start=$(date +%s%N)
  run 2 transformer "$deck" --run.output="$out" --run.progress_interval=1000 > log.txt || fail "$deck: $(cat log.txt)"
  [ "$(status_of "$out")" = complete ] || fail "$deck: $out not complete"
  printf 'ok: %-28s %d ms\n' "$(basename "$deck")" $(( ($(date +%s%N) - start) / 1000000 ))
done
