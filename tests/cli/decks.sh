# Every shipped deck runs to completion at 2 ranks (as doc/running.md promises), writes a run file that
# describes itself (check_described.py), and `tokdyn rerun --check` repeats it bit for bit (rerun.sh does
# it for the default deck at 1 rank). A deck names its command in a "# command: NAME" line (default
# transformer); the long runs are reduced here (common.sh: deck_test_size).
source "$(dirname "$0")/common.sh"
outs=()
# input/lens.ini looks at the train run it names (runs/lens/train.h5): a small one stored at every record.
mkdir -p runs/lens
deck_test_size train
run 2 train "$SRC/input/train.ini" "${extra[@]}" --train.parameters_every=1 --run.output=runs/lens/train.h5 > log.txt \
  || fail "the train run of lens.ini: $(cat log.txt)"
for deck in "$SRC"/input/*.ini; do
  out=$(basename "$deck" .ini).h5
  command=$(deck_command "$deck")
  deck_test_size "$command"
  start=$(date +%s%N)
  run 2 "$command" "$deck" --run.output="$out" "${extra[@]}" > log.txt || fail "$deck: $(cat log.txt)"
  [ "$(status_of "$out")" = complete ] || fail "$deck: $out not complete"
  outs+=("$out")
  run 2 rerun "$out" --check > rerun.txt 2>&1 || fail "$deck: rerun --check: $(cat rerun.txt)"
  grep -q "bit for bit" rerun.txt || fail "$deck: rerun --check said: $(cat rerun.txt)"
  printf 'ok: %-24s %-12s %d ms (with its rerun) %s\n' "$(basename "$deck")" "$command" \
    $(( ($(date +%s%N) - start) / 1000000 )) "${extra[*]}"
done
# Every file describes itself (one Python for all of them).
"$PYTHON" "$SRC/tests/cli/check_described.py" "${outs[@]}" || fail "a run file does not describe itself (above)"
echo "ok: ${#outs[@]} run files describe themselves"
