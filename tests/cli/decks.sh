# Every shipped deck runs to completion at 2 ranks (as the README promises). A deck names its command in
# a "# command: NAME" line (default transformer); the long studies run at reduced size here.
source "$(dirname "$0")/common.sh"
for deck in "$SRC"/input/*.ini; do
  out=$(basename "$deck" .ini).h5
  command=$(sed -n 's/^# command: *\([a-z]*\).*/\1/p' "$deck" | head -n 1)
  command=${command:-transformer}
  extra=()
  case "$command" in
    converge) extra=(--converge.levels=2 --converge.replicas=2 --model.N=16 --meanfield.points=1024) ;;
    lyapunov) extra=(--lyapunov.replicas=100) ;;
    synchronize) extra=(--synchronize.replicas=2 --model.N=16 --mlp.width=64 --model.L=100 --run.progress_interval=1000) ;;
    transformer | sde) extra=(--run.progress_interval=1000) ;;
    meanfield) extra=(--model.L=4 --model.T=0.2) ;;
    spectrum) extra=(--synthetic.d=256 --run.progress_interval=0) ;;
    markov) extra=(--flow.time=5 --flow.records=5) ;;
    train) extra=(--train.steps=20 --train.eval_every=10 --train.alignment_null=20 --run.progress_interval=1000) ;;
  esac
  start=$(date +%s%N)
  run 2 "$command" "$deck" --run.output="$out" "${extra[@]}" > log.txt || fail "$deck: $(cat log.txt)"
  [ "$(status_of "$out")" = complete ] || fail "$deck: $out not complete"
  printf 'ok: %-24s %-12s %d ms %s\n' "$(basename "$deck")" "$command" $(( ($(date +%s%N) - start) / 1000000 )) "${extra[*]}"
done
