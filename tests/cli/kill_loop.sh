# kill -9 at random moments (a checkpoint every layer): whatever moment the ranks die at (in start-up, in a
# layer, in the run file's flush, in the checkpoint's write or rename), the next --resume continues, and the
# run ends bitwise equal to the uninterrupted one. The moments come from a fixed seed and are counted in
# layers the attempt has done (read off its progress lines), so the test is the same on a fast machine and
# on a loaded one.
source "$(dirname "$0")/common.sh"
d=(transformer "$SRC/input/default.ini" --model.L=600 --diagnostics.snapshot_every=10 --run.checkpoint_every=1
   --run.progress_interval=0)
run 2 "${d[@]}" --run.output=full.h5 > /dev/null
ranks="^$TOKDYN transformer.*--run.output=run.h5"
RANDOM=${KILL_LOOP_SEED:-2024}
kills=0
# last_layer LOG: the layer of the last progress line of LOG (the start layer before the first one).
last_layer() { grep -oE "^layer [0-9]+/|at layer [0-9]+/" "$1" | tail -1 | grep -oE "[0-9]+" || echo -1; }
for attempt in $(seq 100); do
  log="log-$attempt.txt"
  "$MPIEXEC" -n 2 "$TOKDYN" "${d[@]}" --run.output=run.h5 --resume > "$log" 2>&1 &
  launcher=$!
  # Wait for the banner, printed once MPI is up (a rank killed inside MPI_Init can leave Open MPI's launcher
  # waiting forever); then one kill in five comes in the next 0.3 s (start-up: lock, restore, first layer),
  # the others after 1 to 60 more layers.
  for i in $(seq 1200); do
    grep -q "^tokdyn transformer:" "$log" && break
    kill -0 "$launcher" 2>/dev/null || break  # ended before it printed one (nothing to do)
    sleep 0.05
  done
  if [ $((RANDOM % 5)) = 0 ]; then
    sleep "0.$(printf '%03d' $((RANDOM % 300)))"
  else
    target=$((RANDOM % 60 + 1))
    start=$(last_layer "$log")
    for i in $(seq 2400); do
      [ $(($(last_layer "$log") - start)) -ge "$target" ] && break
      kill -0 "$launcher" 2>/dev/null || break
      sleep 0.025
    done
  fi
  if pkill -9 -f "$ranks"; then
    kills=$((kills + 1))
    for i in $(seq 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$launcher" 2>/dev/null && echo "note: mpiexec outlived its ranks by 30 s (killed)" >&2
    wait "$launcher" 2>/dev/null || true
    continue
  fi
  wait "$launcher" || fail "attempt $attempt after $kills kills: $(cat "$log")"
  [ "$(status_of run.h5 2>/dev/null)" = complete ] && break
done
[ "$(status_of run.h5)" = complete ] || fail "not complete after $attempt attempts"
[ "$kills" -ge 5 ] || fail "only $kills kills: the run is too short for this test"
compare full.h5 run.h5 --tol 0
echo "kill_loop: complete after $kills kills, bitwise equal to the uninterrupted run"
