# kill -9 at random moments (a checkpoint every layer): whatever moment the ranks die at (in a layer, in
# the run file's flush, in the checkpoint's write or rename), the next --resume continues, and the run
# ends bitwise equal to the uninterrupted one. The moments come from a fixed seed.
source "$(dirname "$0")/common.sh"
d=(transformer "$SRC/input/default.ini" --model.L=600 --diagnostics.snapshot_every=10 --run.checkpoint_every=1
   --run.progress_interval=100)
run 2 "${d[@]}" --run.output=full.h5 > /dev/null
ranks="^$TOKDYN transformer.*--run.output=run.h5"
RANDOM=${KILL_LOOP_SEED:-2024}
kills=0
for attempt in $(seq 100); do
  "$MPIEXEC" -n 2 "$TOKDYN" "${d[@]}" --run.output=run.h5 --resume > "log-$attempt.txt" 2>&1 &
  launcher=$!
  # The moment is counted from the banner, printed once MPI is up: a rank killed inside MPI_Init can leave
  # Open MPI's launcher waiting forever (PMIx "UNREACHABLE"), and mpiexec may take seconds to start the ranks.
  for i in $(seq 1200); do
    grep -q "^tokdyn transformer:" "log-$attempt.txt" && break
    kill -0 "$launcher" 2>/dev/null || break  # ended before it printed one (nothing to do)
    sleep 0.05
  done
  sleep "0.$(printf '%03d' $((RANDOM % 200)))"  # 0 to 0.2 s: ~5 ms a layer with its checkpoint
  if pkill -9 -f "$ranks"; then
    kills=$((kills + 1))
    for i in $(seq 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$launcher" 2>/dev/null && echo "note: mpiexec outlived its ranks by 30 s (killed)" >&2
    wait "$launcher" 2>/dev/null || true
    continue
  fi
  wait "$launcher" || fail "attempt $attempt after $kills kills: $(cat "log-$attempt.txt")"
  [ "$(status_of run.h5 2>/dev/null)" = complete ] && break
done
[ "$(status_of run.h5)" = complete ] || fail "not complete after $attempt attempts"
[ "$kills" -ge 5 ] || fail "only $kills kills: the run is too short for this test"
compare full.h5 run.h5 --tol 0
echo "kill_loop: complete after $kills kills, bitwise equal to the uninterrupted run"
