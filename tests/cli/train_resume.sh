#!/usr/bin/env bash
# tokdyn train checkpoints for every optimizer x {symmetric, b_Q, b_Q + b_V} x {float, double}: each run is
# stopped at its first record (the charges of a symmetric run are still at round-off there, so the
# checkpoint holds no charge reference yet) and again mid-run, resumed both times, and must equal the
# uninterrupted run bit for bit (timings aside): the parameters stored along the run (records 0, 3 and 4)
# and the running minimum of F = auto (ECD's default, set for ECDSep) included. One rank, a model of a few
# hundred parameters: the matrix is 24 runs of three invocations each.
source "$(dirname "$0")/common.sh"
text="$SRC/input/train.ini"
tiny=(--train.steps=4 --train.eval_every=1 --train.batch=2 --train.context=8 --train.eval_sequences=2
      --model.layers=1 --model.heads=2 --model.channels=8 --train.alignment_null=5 --run.progress_interval=1000
      --train.parameters_every=3 --ecdsep.F0=auto)

checked=0 pairs=()
for optimizer in ecd ecdsep sgdm adamw; do
  for symmetry in symmetric bq bqbv; do
    case $symmetry in
      symmetric) bias=() ;;
      bq) bias=(--bias.query=true) ;;
      bqbv) bias=(--bias.query=true --bias.value=true) ;;
    esac
    for precision in float double; do
      name=$optimizer-$symmetry-$precision
      args=(train "$text" "${tiny[@]}" "${bias[@]}" --train.optimizer=$optimizer --train.precision=$precision)
      run 1 "${args[@]}" --run.output=$name.h5 > $name.log 2>&1 || fail "$name: the uninterrupted run: $(tail -n 3 $name.log)"
      # Stopped at the first record, resumed to record 2 and stopped again, resumed to the end.
      run 1 "${args[@]}" --run.output=stop-$name.h5 --$STOP=1 > stop-$name.log 2>&1 \
        || fail "$name: stopped at record 1: $(tail -n 3 stop-$name.log)"
      [ -f stop-$name.ckpt.h5 ] && [ ! -e stop-$name.ckpt.h5.tmp ] || fail "$name: no checkpoint at record 1"
      [ "$(status_of stop-$name.h5.part)" = checkpointed ] || fail "$name: status after stop_at=1"
      run 1 "${args[@]}" --run.output=stop-$name.h5 --$STOP=2 --resume > resume1-$name.log 2>&1 \
        || fail "$name: resumed at record 1: $(tail -n 3 resume1-$name.log)"
      grep -q "restart from .* at record 1/4" resume1-$name.log || fail "$name: did not restart at record 1"
      run 1 "${args[@]}" --run.output=stop-$name.h5 --resume > resume2-$name.log 2>&1 \
        || fail "$name: resumed at record 2: $(tail -n 3 resume2-$name.log)"
      grep -q "restart from .* at record 2/4" resume2-$name.log || fail "$name: did not restart at record 2"
      pairs+=($name.h5 stop-$name.h5)
      checked=$((checked + 1))
    done
  done
done
# Datasets and result attributes, bit for bit (one interpreter for all 24 pairs).
compare "${pairs[@]}" --tol 0 > compare.log || fail "a resumed run differs from the uninterrupted one: $(tail -n 1 compare.log)"
[ $checked = 24 ] || fail "checked $checked of 24 settings"
echo "ok: $checked optimizer x symmetry x precision settings resume bit for bit at records 1 and 2"
