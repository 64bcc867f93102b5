# Slurm integration: a local single-node Slurm runs jobscripts/transformer.sbatch on the default deck
# at 2 tasks (sbatch --wait); the run file must be complete. The same job checks the site hooks: the
# partition and account from SBATCH_PARTITION / SBATCH_ACCOUNT, TOKDYN_SETUP as a command, the job script
# finding its repository without TOKDYN_SRC, and the job's timing in `sacct -c` (the completion log). Then
# the 15-task grid array, and the checkpoint-and-requeue on SIGUSR1 under mpiexec and under srun.
source "$(dirname "$0")/common.sh"
export TOKDYN
unset TOKDYN_SRC TOKDYN_LAUNCH TOKDYN_SETUP  # this test sets them itself
account=tokdyn-test-$$
SBATCH_PARTITION=batch SBATCH_ACCOUNT=$account TOKDYN_SETUP="echo \$SLURM_JOB_ID > '$scratch/setup-ran'" \
  bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/transformer.sbatch" --ntasks=2 --chdir="$scratch" \
  --output="$scratch/default-%j.out" -- "$SRC/input/default.ini" --run.output="$scratch/default.h5"
[ "$(status_of default.h5)" = complete ] || fail "default.h5 not complete"
"$PYTHON" -c "import h5py; f = h5py.File('default.h5', 'r'); assert f.attrs['ranks'] == 2, f.attrs['ranks']"
default_job=$(sed -n 's/^tokdyn job \([0-9]*\) .* by mpiexec: .*/\1/p' default-*.out | head -n 1)
[ -n "$default_job" ] || fail "no 'tokdyn job ID ... by mpiexec' line: $(cat default-*.out)"
[ "$(cat setup-ran 2>/dev/null)" = "$default_job" ] || fail "TOKDYN_SETUP did not run in job $default_job"
echo "slurm: default deck complete on 2 tasks (job $default_job; TOKDYN_SETUP ran)"

# The grid array job: 15 tasks (activation x attention factor) of the smallest grid deck.
bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/grid.sbatch" --chdir="$scratch" \
  -- "$SRC/input/grid-d5-bias0.ini" "$scratch/grid"
n=0
for f in grid/grid-d5-bias0-*.h5; do
  [ "$(status_of "$f")" = complete ] || fail "$f not complete"
  n=$((n + 1))
done
[ "$n" = 15 ] || fail "grid array produced $n run files, expected 15"
echo "slurm: grid array complete (15 run files)"

# Checkpoint before the time limit: SIGUSR1 to the batch shell (what --signal=B:USR1@120 sends) reaches
# the ranks, the run checkpoints, the job requeues itself and the second start finishes the run with
# --resume; the result equals an uninterrupted run bit for bit. Once with mpiexec and once with srun
# (TOKDYN_LAUNCH=srun), submitted together: each holds both cores, so Slurm runs one while the other waits
# out its requeue (about 20 s, cred_expire), and neither is slowed by the other. The signal goes out as
# soon as the first progress line appears; L is long enough (about 5 s of layers at 6e5 token-layers/s)
# that the run cannot finish first however fast the machine is.
deck=(--model.N=256 --model.d=8 --model.L=12000 --model.T=10 --mlp.width=512 --diagnostics.every=10
      --run.progress_interval=0.2)
# requeue_job LAUNCHER: submits the job (name tokdyn-requeue-LAUNCHER-PID) and signals it once it runs.
requeue_job() {
  local job=tokdyn-requeue-$1-$$ id
  (
    for _ in $(seq 600); do
      id=$(squeue -h -n "$job" -t RUNNING -o %i 2>/dev/null | head -n 1)
      if [ -n "$id" ] && grep -q "^layer" "$job".out 2>/dev/null; then
        scancel --batch --signal=USR1 "$id"
        exit 0
      fi
      sleep 0.1
    done
  ) &
  TOKDYN_LAUNCH=$1 bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/transformer.sbatch" --ntasks=2 \
    --chdir="$scratch" --job-name="$job" --output="$scratch/$job.out" \
    -- "$SRC/input/default.ini" "${deck[@]}" --run.output="$scratch/requeued-$1.h5"
  wait
}
requeue_job mpiexec & mpiexec_job=$!
requeue_job srun & srun_job=$!
wait "$mpiexec_job" || fail "the mpiexec requeue job failed"
wait "$srun_job" || fail "the srun requeue job failed"
run 2 transformer "$SRC/input/default.ini" "${deck[@]}" --run.output=direct.h5 > /dev/null
for launcher in mpiexec srun; do
  out=tokdyn-requeue-$launcher-$$.out
  grep -q "tasks by $launcher:" "$out" || fail "not launched by $launcher: $(cat "$out")"
  grep -q "checkpointed at layer .* (signal)" "$out" || fail "$launcher: no checkpoint on SIGUSR1: $(cat "$out")"
  grep -q "restart from" "$out" || fail "$launcher: the requeued job did not resume: $(cat "$out")"
  [ "$(status_of "requeued-$launcher.h5")" = complete ] || fail "requeued-$launcher.h5 not complete"
  compare direct.h5 "requeued-$launcher.h5" --tol 0
done
echo "slurm: SIGUSR1 -> checkpoint -> requeue -> resume gives the uninterrupted result under mpiexec and srun"

# Job timings from the completion log (no slurmdbd: sacct -c): the default job with the partition and
# account it got from SBATCH_PARTITION / SBATCH_ACCOUNT; the srun job once per start (the first, ended by
# the requeue, is logged as PENDING), the last COMPLETED.
srun_id=$(sed -n 's/^tokdyn job \([0-9]*\) .* by srun: .*/\1/p' "tokdyn-requeue-srun-$$.out" | head -n 1)
timings=$(sacct -c -n -P -j "$default_job,$srun_id" --format=JobID,JobName,Partition,Account,Elapsed,State)
echo "$timings"
grep -qx "$default_job|[^|]*|batch|$account|[0-9:-]*|COMPLETED" <<<"$timings" \
  || fail "sacct -c: job $default_job not COMPLETED in partition batch with account $account: $timings"
srun_starts=$(grep "^$srun_id|tokdyn-requeue-srun-$$|debug||[0-9:-]*|" <<<"$timings" || true)
[ "$(wc -l <<<"$srun_starts")" = 2 ] && [ "$(tail -n 1 <<<"$srun_starts" | cut -d'|' -f6)" = COMPLETED ] \
  || fail "sacct -c: job $srun_id not two starts, the last COMPLETED: $timings"
echo "slurm: sacct -c reports the jobs' partition, account, elapsed time and state"
