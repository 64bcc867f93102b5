# tokdyn phase: the same numbers at 1, 2 and 3 ranks (every dataset bit for bit; 7 systems a beta split unevenly),
# with random B and V drawn per beta and again every time unit, USA's beta-dependent steps; the figure; the job
# script; errors.
source "$(dirname "$0")/common.sh"
base=(phase "$SRC/input/phase.ini" --model.N=12 --model.d=3 --model.T=3 --phase.records=6 --phase.systems=7
      --phase.beta_list=0.5,2,6 --phase.attention=usa --phase.bilinear=goe --phase.value=plus-b --phase.scope=beta
      --phase.regen_period=1 --run.progress_interval=1000)
for np in 1 2 3; do run $np "${base[@]}" --run.output=ranks$np.h5 > ranks$np.log || fail "$np ranks: $(cat ranks$np.log)"; done
compare ranks1.h5 ranks2.h5 --tol 0 > /dev/null || fail "1 and 2 ranks differ"
compare ranks1.h5 ranks3.h5 --tol 0 > /dev/null || fail "1 and 3 ranks differ"
"$PYTHON" - ranks1.h5 <<'PY' || fail "the run file's phase group"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    g = f["phase"]
    assert g["density"].shape == (7, 3) and g["time"].shape == (7,), (g["density"].shape, g["time"].shape)
    steps = g["steps_per_record"][...]
    # USA: the step 0.1 / max(sqrt(beta) e^{beta - 1/2}, 1) over a record interval of 0.5
    want = [np.ceil(0.5 / (0.1 / max(np.sqrt(b) * np.exp(b - 0.5), 1)) * (1 - 1e-12)) for b in (0.5, 2, 6)]
    assert np.array_equal(steps, want), (steps, want)
    d = g["density"][...]
    assert np.all((0 <= d) & (d <= 1)) and np.all(g["clusters_median"][...] >= 1)
    assert np.all(g["span_dimension"][...] <= 3)
print("ok: datasets", flush=True)
PY
echo "ok: phase at 1, 2 and 3 ranks, bitwise equal"
"$PYTHON" "$SRC/postprocess/phase.py" ranks1.h5 --cuts 1,3 > fig.txt || fail "phase.py: $(cat fig.txt)"
[ -s ranks1.png ] || fail "phase.py wrote no figure"
grep -q "t = 3: density at zero" fig.txt || fail "phase.py printed no cut: $(cat fig.txt)"
expect_script_error "cut time 9 outside" "$SRC/postprocess/phase.py" ranks1.h5 --cuts 9
# The job script without Slurm (mpiexec on this machine): the run, then its figure; resubmitted: nothing to do.
for pass in 1 2; do
  TOKDYN_PYTHON=$PYTHON TOKDYN_SRC=$SRC bash "$SRC/jobscripts/phase.sbatch" "$SRC/input/phase.ini" job --model.N=6 \
    --phase.systems=3 --phase.betas=2 --phase.records=2 --model.T=0.5 > job$pass.log 2>&1 || fail "phase.sbatch: $(cat job$pass.log)"
done
[ -s job/phase.png ] && [ "$(status_of job/phase.h5)" = complete ] || fail "phase.sbatch: no complete run and figure"
grep -q "nothing to do" job2.log || fail "phase.sbatch again: $(cat job2.log)"
echo "ok: jobscripts/phase.sbatch"
# Blocks of betas (a Slurm array's tasks, here without Slurm) with the random MLP: each block's systems draw what
# they draw in the whole grid, so the merge (jobscripts/phase-merge.sbatch) equals the single run at 2 ranks in
# every /phase dataset, bit for bit; blocks that are not one grid are refused.
small=(--model.N=6 --model.d=3 --phase.systems=3 --phase.betas=3 --phase.records=2 --model.T=0.5 --phase.bilinear=gaussian
       --phase.scope=system --mlp.enabled=true --mlp.width=8 --mlp.sigma_u=0.5)
run 2 phase "$SRC/input/phase.ini" "${small[@]}" --run.output=whole.h5 > whole.log || fail "whole: $(cat whole.log)"
grep -q "random MLP of width 8" whole.log || fail "no MLP in the banner: $(head -n 2 whole.log)"
for k in 0 1; do
  SLURM_ARRAY_TASK_ID=$k TOKDYN_PYTHON=$PYTHON TOKDYN_SRC=$SRC bash "$SRC/jobscripts/phase.sbatch" "$SRC/input/phase.ini" \
    sweep --phase.blocks=2 "${small[@]}" > block$k.log 2>&1 || fail "block $k: $(cat block$k.log)"
done
grep -q "block 1 of 2: grid betas 1 .. 2" block1.log || fail "block 1's banner: $(cat block1.log)"
TOKDYN_PYTHON=$PYTHON TOKDYN_SRC=$SRC bash "$SRC/jobscripts/phase-merge.sbatch" sweep "$PWD/sweep/phase" > merge.log 2>&1 \
  || fail "phase-merge.sbatch: $(cat merge.log)"
[ -s sweep/phase.png ] && [ "$(status_of sweep/phase.h5)" = complete ] || fail "the merge wrote no result and figure"
"$PYTHON" - whole.h5 sweep/phase.h5 <<'PY' || fail "the merged blocks differ from the whole run"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["phase"] for p in sys.argv[1:])
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for name in a:
    assert np.array_equal(a[name][()], b[name][()]), name
print("ok: 2 blocks merged equal the whole run in", len(a), "datasets")
PY
expect_script_error "merged whole.h5: the file exists and is not a merged result" "$SRC/postprocess/phase.py" \
  sweep/phase-block0.h5 sweep/phase-block1.h5 --merged whole.h5
expect_script_error "grid beta 1 is in more than one file" "$SRC/postprocess/phase.py" sweep/phase-block1.h5 sweep/phase-block1.h5
expect_script_error "is not a block of the grid of" "$SRC/postprocess/phase.py" sweep/phase-block0.h5 whole.h5
expect_error 1 "more blocks than the 3 betas" phase "$SRC/input/phase.ini" "${small[@]}" --phase.blocks=4 --run.output=bad.h5
expect_error 1 "blocks are numbered 0 .. 1" phase "$SRC/input/phase.ini" "${small[@]}" --phase.blocks=2 --phase.block=2 \
  --run.output=bad.h5
expect_error 1 "phase.beta_max.*below phase.beta_min" phase "$SRC/input/phase.ini" --phase.beta_min=3 --phase.beta_max=1 \
  --run.output=bad.h5
expect_error 1 "phase.beta_list" phase "$SRC/input/phase.ini" --phase.beta_list=1,x --run.output=bad.h5
echo "phase: all checks passed"
