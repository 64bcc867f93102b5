# Slurm integration of the spectra: a local single-node Slurm runs jobscripts/spectrum.sbatch on the large
# deck shrunk to d = 256 (2 tasks, sbatch --wait); the run file must be complete and found the deck's top 10
# (lambda_k = 0.9^(k-1), all converged); the plot and summary appear; a resubmission is "nothing to do".
# The first job runs its ranks with srun (TOKDYN_LAUNCH=srun), sources a TOKDYN_SETUP file and draws with the
# interpreter TOKDYN_PYTHON names (a wrapper that leaves a mark); the resubmission uses mpiexec.
source "$(dirname "$0")/common.sh"
export TOKDYN TOKDYN_SRC="$SRC"
unset TOKDYN_LAUNCH TOKDYN_SETUP TOKDYN_PYTHON
tiny=(--synthetic.d=256 --run.progress_interval=0)
cat > setup.sh <<SH
# TOKDYN_SETUP file of the test: leaves the job id it ran in.
echo "\$SLURM_JOB_ID" > "$scratch/setup-ran"
SH
cat > python-wrapper <<SH
#!/bin/sh
# TOKDYN_PYTHON of the test: leaves the script it was given, then runs the real interpreter.
echo "\$1" >> "$scratch/python-used"
exec "$PYTHON" "\$@"
SH
chmod +x python-wrapper
TOKDYN_LAUNCH=srun TOKDYN_SETUP="$scratch/setup.sh" TOKDYN_PYTHON="$scratch/python-wrapper" \
  bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/spectrum.sbatch" --ntasks=2 --chdir="$scratch" \
  --output="$scratch/spectrum-%j.out" -- "$SRC/input/spectrum-large.ini" "$scratch/out" "${tiny[@]}"
[ "$(status_of out/spectrum-large.h5)" = complete ] || fail "out/spectrum-large.h5 not complete"
[ -s out/spectrum-large.png ] && [ -s out/spectrum-large.json ] || fail "no plot or summary: $(cat spectrum-*.out)"
job=$(sed -n 's/^tokdyn spectrum job \([0-9]*\) on 2 tasks by srun: .*/\1/p' spectrum-*.out)
[ -n "$job" ] || fail "not launched by srun: $(cat spectrum-*.out)"
[ "$(cat setup-ran 2>/dev/null)" = "$job" ] || fail "TOKDYN_SETUP file not sourced in job '$job'"
# The job checked the interpreter's modules before the run (`-c 'import ...'`), then drew with it.
[ "$(head -n 1 python-used 2>/dev/null)" = "-c" ] && [ "$(tail -n 1 python-used)" = "$SRC/postprocess/spectrum.py" ] \
  || fail "TOKDYN_PYTHON not checked first, then used: $(cat python-used 2>/dev/null)"
"$PYTHON" - <<'PY' || fail "spectrum-large at d = 256"
import h5py, numpy as np
f = h5py.File("out/spectrum-large.h5", "r")
g = f["spectrum"]
assert f.attrs["ranks"] == 2 and g.attrs["d"] == 256 and g.attrs["solver"] == "krylovschur", dict(g.attrs)
assert list(g["converged"][()]) == [10]
assert np.allclose(g["eigenvalues_re"][0], 0.9 ** np.arange(10), rtol=1e-9, atol=0)
print("slurm: spectrum-large (d = 256) top 10 found on 2 tasks, gap", g["gap"][0])
PY
echo "slurm: spectrum job $job ran its ranks with srun, sourced TOKDYN_SETUP and drew with TOKDYN_PYTHON"
# python3 on PATH may lack h5py (a pyenv shim): the test's own interpreter.
TOKDYN_PYTHON=$PYTHON bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/spectrum.sbatch" --ntasks=2 --chdir="$scratch" \
  --output="$scratch/again-%j.out" -- "$SRC/input/spectrum-large.ini" "$scratch/out" "${tiny[@]}"
grep -q "nothing to do" again-*.out || fail "resubmission ran again: $(cat again-*.out)"
echo "slurm: spectrum job complete; resubmission is nothing to do"
