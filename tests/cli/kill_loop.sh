# kill -9 at random moments (a checkpoint every layer): whatever moment the ranks die at (in a layer, in
# the run file's flush, in the checkpoint's write or rename), the next --resume continues, and the run
# ends bitwise equal to the uninterrupted one. The moments come from a fixed seed.
source "$(dirname "$0")/common.sh"
d=(transformer "$SRC/input/default.ini" --model.L=600 --diagnostics.snapshot_every=10 --run.checkpoint_every=1
   --run.progress_interval=100)
run 2 "${d[@]}" --run.output=full.h5 > /dev/null
RANDOM=${KILL_LOOP_SEED:-2024}
kills=0
for attempt in $(seq 100); do
  "$MPIEXEC" -n 2 "$TOKDYN" "${d[@]}" --run.output=run.h5 --resume > "log-$attempt.txt" 2>&1 &
  launcher=$!
  sleep "0.$(printf '%03d' $((RANDOM % 600 + 200)))"  # 0.2 to 0.8 s: start-up takes about 0.3 s
  if pkill -9 -f "^$TOKDYN transformer.*--run.output=run.h5"; then
    kills=$((kills + 1))
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
