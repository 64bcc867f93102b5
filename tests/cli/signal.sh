# SIGTERM (what Slurm sends at the time limit), SIGUSR1 (--signal) and SIGINT make a running job
# checkpoint at the next layer and exit 0 with status checkpointed; a second signal does not cut that
# short; a signal at start-up leaves a checkpoint of the first layer boundary it reaches (0 or 1: the
# O(N^2) diagnostics of layer 0 are formed in the first step). --resume then finishes each run, bitwise equal to an uninterrupted run. The ranks are signalled at
# the first progress line; L is long enough (several seconds of layers) that the run cannot finish first.
source "$(dirname "$0")/common.sh"
deck=(transformer --model.N=256 --model.d=8 --model.L=3000 --model.T=10 --mlp.width=512
      --diagnostics.every=10 --run.progress_interval=0.2)

# signal_run OUTPUT WHEN SIGNAL...: starts a 2-rank run, sends the signals to its ranks (back to back: a
# second one lands while the first is handled) once a line matching WHEN appears, waits for it; it must
# have checkpointed.
signal_run() {
  local out=$1 when=$2 sig; shift 2
  "$MPIEXEC" -n 2 "$TOKDYN" "${deck[@]}" --run.output="$out" > "$out.log" 2>&1 &
  local launcher=$!
  wait_for "$out.log" "$when"
  # The ranks, not the launcher: Slurm signals every process of the job step.
  signal_ranks "$1" ".*--run.output=$out"
  for sig in "${@:2}"; do pkill "-$sig" -f "^$TOKDYN .*--run.output=$out" || true; done
  wait "$launcher" || fail "$*: run exited with $?: $(cat "$out.log")"
  grep -q "checkpointed at layer .* (signal)" "$out.log" || fail "$*: no checkpoint message: $(cat "$out.log")"
  [ "$(status_of "$out.part")" = checkpointed ] || fail "$*: status should be checkpointed"
  echo "$*: $(grep checkpointed "$out.log")"
}

signal_run term.h5 "^layer" TERM
signal_run usr1.h5 "^layer" USR1
signal_run int.h5 "^layer" INT
signal_run twice.h5 "^layer" TERM TERM
for out in term usr1 int twice; do run 2 "${deck[@]}" --run.output=$out.h5 --resume > /dev/null; done
run 2 "${deck[@]}" --run.output=full.h5 --run.progress_interval=100 > /dev/null
for out in term usr1 int twice; do compare full.h5 $out.h5 --tol 0; done

# Start-up: 20000 tokens make the layer-0 pair statistics, formed by the first step, take about a second; the
# signal comes with the banner line, during the set-up or that step: a checkpoint at layer 0 or 1.
deck=(transformer --model.N=20000 --model.d=3 --model.L=4 --mlp.width=16 --attention.enabled=false
      --diagnostics.every=4 --run.progress_interval=100)
signal_run startup.h5 "^tokdyn transformer" TERM
grep -Eq "checkpointed at layer [01]/4" startup.h5.log || fail "start-up: $(cat startup.h5.log)"
run 2 "${deck[@]}" --run.output=startup.h5 --resume > /dev/null
run 2 "${deck[@]}" --run.output=startup-full.h5 > /dev/null
compare startup-full.h5 startup.h5 --tol 0
echo "signal: all checks passed"
