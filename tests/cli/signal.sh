# SIGTERM (what Slurm sends at the time limit) and SIGUSR1 (--signal) make a running job checkpoint at
# the next layer and exit 0 with status checkpointed; --resume then finishes it, bitwise equal to an
# uninterrupted run. The ranks are signalled at the first progress line; L is long enough (several
# seconds of layers) that the run cannot finish first on a fast machine.
source "$(dirname "$0")/common.sh"
deck=(transformer --model.N=256 --model.d=8 --model.L=8000 --model.T=10 --mlp.width=512
      --diagnostics.every=10 --run.progress_interval=0.2)

# signal_run SIGNAL OUTPUT: starts a 2-rank run, signals its ranks once it is under way, waits for it.
signal_run() {
  local sig=$1 out=$2
  "$MPIEXEC" -n 2 "$TOKDYN" "${deck[@]}" --run.output="$out" > "$out.log" 2>&1 &
  local launcher=$!
  for _ in $(seq 200); do grep -q "^layer" "$out.log" 2>/dev/null && break; sleep 0.05; done
  # The ranks, not the launcher: Slurm signals every process of the job step.
  pkill "-$sig" -f "^$TOKDYN transformer.*--run.output=$out" || fail "no rank process found for $out"
  wait "$launcher" || fail "$sig: run exited with $?: $(cat "$out.log")"
  grep -q "checkpointed at layer .* (signal)" "$out.log" || fail "$sig: no checkpoint message: $(cat "$out.log")"
  [ "$(status_of "$out.part")" = checkpointed ] || fail "$sig: status should be checkpointed"
  echo "$sig: $(grep checkpointed "$out.log")"
}

signal_run TERM term.h5
signal_run USR1 usr1.h5
run 2 "${deck[@]}" --run.output=term.h5 --resume > /dev/null
run 2 "${deck[@]}" --run.output=usr1.h5 --resume > /dev/null
run 2 "${deck[@]}" --run.output=full.h5 --run.progress_interval=100 > /dev/null
compare full.h5 term.h5 --tol 0
compare full.h5 usr1.h5 --tol 0
