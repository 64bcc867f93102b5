# Where a run's time goes: -log_view lists tokdyn's events (TokAttention, TokMLP, ...) with non-zero counts
# under the run's stage, every run ends with a summary (loop time, time per phase, memory, the last
# observables), and its console goes to a log file beside the run file (a resumed run appends to it).
source "$(dirname "$0")/common.sh"

# event_count FILE EVENT: the count column of EVENT's line in -log_view's table (0 when absent).
event_count() { awk -v e="$2" '$1 == e { print $2; found = 1; exit } END { if (!found) print 0 }' "$1"; }
expect_events() {
  local file=$1 e n; shift
  for e in "$@"; do
    n=$(event_count "$file" "$e")
    [ "$n" -gt 0 ] || fail "-log_view: event $e has count '$n': $(grep -E '^(Tok|---)' "$file")"
  done
  echo "ok: -log_view lists $* with counts > 0"
}

# transformer: attention, MLP, diagnostics, output, checkpoint.
run 2 transformer --model.N=128 --model.d=4 --model.L=6 --run.checkpoint_every=3 --run.output=t.h5 -log_view > t.txt \
  || fail "transformer -log_view: $(cat t.txt)"
grep -q "Stage 1: tokdyn transformer" t.txt || fail "-log_view has no stage 'tokdyn transformer': $(grep Stage t.txt)"
expect_events t.txt TokAttention TokMLP TokDiagnostics TokOutput TokCheckpoint
# Each layer's pass (on a diagnostic layer the same pass forms the statistics): at least one count per layer.
[ "$(event_count t.txt TokAttention)" -ge 6 ] || fail "TokAttention counted $(event_count t.txt TokAttention) times for 6 layers"

# The summary: loop time, a row per phase that ran, 'other', memory, the last diagnostics row; percentages of
# the loop time that add up to 100.
grep -qE "^loop time .* on 2 ranks for 6 layers: " t.txt || fail "no loop-time line: $(cat t.txt)"
for p in attention mlp diagnostics output checkpoint other; do
  grep -qE "^  $p +[0-9.]+ " t.txt || fail "summary has no '$p' row: $(cat t.txt)"
done
total=$(awk '/^  phase/ { on = 1; next } on && /^  [a-z]/ { s += ($1 == "other") ? $3 : $4 } /^peak memory/ { on = 0 } END { print s }' t.txt)
awk -v t="$total" 'BEGIN { exit !(t > 99.0 && t < 101.0) }' || fail "the phases' %time add up to $total: $(cat t.txt)"
grep -qE "^layer 6: E_beta [0-9.e+-]+, \|mean x\| " t.txt || fail "summary lacks the last observables: $(cat t.txt)"
echo "ok: summary (phases add up to $total %)"

# The log beside the run file: the banner, progress and summary as on the console.
[ -f t.log ] || fail "no log file t.log"
for line in "tokdyn transformer: N = 128" "complete: 't.h5'" "loop time" "log: 't.log'"; do
  grep -qF "$line" t.log || fail "t.log lacks '$line': $(cat t.log)"
done
echo "ok: t.log has the console"

# A stopped and resumed run appends to its log; a failing run's log ends with its error line.
run 2 transformer --model.N=64 --model.d=4 --model.L=6 --run.stop_at=3 --run.output=r.h5 > /dev/null || fail "stop_at"
run 2 transformer --model.N=64 --model.d=4 --model.L=6 --run.stop_at=3 --run.output=r.h5 --resume > /dev/null || fail "resume"
[ "$(grep -c '^== tokdyn transformer' r.log)" = 2 ] || fail "r.log: expected two run headers: $(cat r.log)"
grep -q "(continued) ==" r.log && grep -q "checkpointed at layer 3/6" r.log && grep -q "complete: 'r.h5'" r.log \
  || fail "r.log does not hold both parts: $(cat r.log)"
TOKDYN_FAULT=input@0:2 run 2 transformer --model.N=64 --model.d=4 --model.L=6 --run.output=f.h5 > /dev/null 2>&1 || true
tail -n 1 f.log | grep -q "tokdyn: error: injected fault (input) at layer 2" || fail "f.log does not end with the error: $(cat f.log)"
echo "ok: logs of a resumed and of a failed run"

# The other commands' phases.
run 2 spectrum "$SRC/input/spectrum.ini" --synthetic.d=64 --run.progress_interval=0 --run.output=s.h5 -log_view > s.txt \
  || fail "spectrum: $(cat s.txt)"
expect_events s.txt TokEigensolve
run 2 markov "$SRC/input/markov.ini" --flow.time=2 --flow.records=2 --run.output=m.h5 -log_view > m.txt || fail "markov: $(cat m.txt)"
expect_events m.txt TokGradient
# A state whose work is its steps (markov: records) gives its rate once, not "10 records/s, 10 records/s".
grep -qE "^loop time .* for 2 records: [0-9.e+-]+ records/s$" m.txt || fail "markov's rate: $(grep '^loop time' m.txt)"
run 2 train "$SRC/input/train.ini" --train.steps=4 --train.eval_every=2 --train.alignment_null=4 --run.output=g.h5 \
  -log_view > g.txt || fail "train: $(cat g.txt)"
expect_events g.txt TokGradient TokOptimizer
run 2 meanfield "$SRC/input/meanfield-circle.ini" --model.L=2 --model.T=0.1 --run.output=mf.h5 -log_view > mf.txt \
  || fail "meanfield: $(cat mf.txt)"
expect_events mf.txt TokMeanfield
run 2 sde "$SRC/input/sde.ini" --model.L=4 --run.output=e.h5 -log_view > e.txt || fail "sde: $(cat e.txt)"
expect_events e.txt TokNoise
