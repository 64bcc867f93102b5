# One run per output: a second run on an output that a live run holds (with --resume, as job scripts
# start, or with --force) exits 2 at once naming the lock's host and pid and changes nothing; after a
# kill -9 the lock is stale: the next --resume names it, removes it and continues to the uninterrupted result.
# The first run is frozen (SIGSTOP) while it is checked, so no check depends on how fast this machine is.
source "$(dirname "$0")/common.sh"
long=(transformer --model.N=256 --model.d=8 --model.L=6000 --model.T=10 --mlp.width=512 --diagnostics.every=10
      --run.progress_interval=0.2 --run.checkpoint_every=500)
"$MPIEXEC" -n 2 "$TOKDYN" "${long[@]}" --run.output=busy.h5 > busy.log 2>&1 &
launcher=$!
ranks="^$TOKDYN transformer.*--run.output=busy.h5"
# Past the first checkpoint (layer 500), so that the resume below continues from one.
wait_for busy.log "^layer [0-9]{4}/"
pkill -STOP -f "$ranks" || fail "no rank of the first run to freeze: $(cat busy.log)"
t0=$SECONDS
expect_error 2 "output 'busy.h5' is in use: lock 'busy.h5.lock' held by pid [0-9]+ on host $(hostname)" \
  "${long[@]}" --run.output=busy.h5 --resume
expect_error 2 "output 'busy.h5' is in use" "${long[@]}" --run.output=busy.h5 --force
expect_error 2 "output 'busy.h5' is in use" "${long[@]}" --run.output=busy.h5 --force --dry-run  # as the run
[ $((SECONDS - t0)) -le 10 ] || fail "refusing a locked output took $((SECONDS - t0)) s"
kill -0 "$launcher" || fail "the first run did not survive the second one: $(cat busy.log)"
# The status of a locked run says it is running, and where.
case "$(run 1 "${long[@]}" --run.output=busy.h5 --status)" in "running: "*"pid"*) ;;
  *) fail "status of a locked run: $(run 1 "${long[@]}" --run.output=busy.h5 --status)";; esac

# kill -9 (a node failure): the lock stays behind, stale.
pkill -9 -f "$ranks"
wait "$launcher" 2>/dev/null || true
[ -e busy.h5.lock ] || fail "kill -9 should leave the lock behind"
run 2 "${long[@]}" --run.output=busy.h5 --resume > resume.log 2>&1 || fail "resume after kill -9: $(cat resume.log)"
grep -qE "removed the stale lock 'busy.h5.lock' of pid [0-9]+ on host $(hostname) .*\(no such process\)" resume.log ||
  fail "no stale-lock message: $(cat resume.log)"
[ ! -e busy.h5.lock ] || fail "the lock must go when the run ends"
run 2 "${long[@]}" --run.output=full.h5 --run.progress_interval=100 > /dev/null
compare full.h5 busy.h5 --tol 0
echo "lock: all checks passed"
