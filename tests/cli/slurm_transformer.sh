# Slurm integration: a local single-node Slurm runs jobscripts/transformer.sbatch on the default deck
# at 2 tasks (sbatch --wait); the run file must be complete.
source "$(dirname "$0")/common.sh"
export TOKDYN
bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/transformer.sbatch" --ntasks=2 --chdir="$scratch" \
  -- "$SRC/input/default.ini" --run.output="$scratch/default.h5"
[ "$(status_of default.h5)" = complete ] || fail "default.h5 not complete"
"$PYTHON" -c "import h5py; f = h5py.File('default.h5', 'r'); assert f.attrs['ranks'] == 2, f.attrs['ranks']"
echo "slurm: default deck complete on 2 tasks"

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
# --resume; the result equals an uninterrupted run bit for bit. The signal goes out as soon as the
# first progress line appears; L is long enough (about 5 s of layers at 6e5 token-layers/s) that
# the run cannot finish first however fast the machine is.
deck=(--model.N=256 --model.d=8 --model.L=12000 --model.T=10 --mlp.width=512 --diagnostics.every=10
      --run.progress_interval=0.2)
job=tokdyn-requeue-$$
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
signaller=$!
bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/transformer.sbatch" --ntasks=2 --chdir="$scratch" \
  --job-name="$job" --output="$scratch/$job.out" -- "$SRC/input/default.ini" "${deck[@]}" --run.output="$scratch/requeued.h5"
wait "$signaller"
grep -q "checkpointed at layer .* (signal)" "$job.out" || fail "no checkpoint on SIGUSR1: $(cat "$job.out")"
grep -q "restart from" "$job.out" || fail "the requeued job did not resume: $(cat "$job.out")"
[ "$(status_of requeued.h5)" = complete ] || fail "requeued.h5 not complete"
run 2 transformer "$SRC/input/default.ini" "${deck[@]}" --run.output=direct.h5 > /dev/null
compare direct.h5 requeued.h5 --tol 0
echo "slurm: SIGUSR1 -> checkpoint -> requeue -> resume gives the uninterrupted result"
