# Slurm integration of the spectra: a local single-node Slurm runs jobscripts/spectrum.sbatch on the large
# deck shrunk to d = 256 (2 tasks, sbatch --wait); the run file must be complete and found the deck's top 10
# (lambda_k = 0.9^(k-1), all converged); the plot and summary appear; a resubmission is "nothing to do".
source "$(dirname "$0")/common.sh"
export TOKDYN TOKDYN_SRC="$SRC"
tiny=(--synthetic.d=256 --run.progress_interval=0)
bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/spectrum.sbatch" --ntasks=2 --chdir="$scratch" \
  --output="$scratch/spectrum-%j.out" -- "$SRC/input/spectrum-large.ini" "$scratch/out" "${tiny[@]}"
[ "$(status_of out/spectrum-large.h5)" = complete ] || fail "out/spectrum-large.h5 not complete"
[ -s out/spectrum-large.png ] && [ -s out/spectrum-large.json ] || fail "no plot or summary: $(cat spectrum-*.out)"
"$PYTHON" - <<'PY' || fail "spectrum-large at d = 256"
import h5py, numpy as np
f = h5py.File("out/spectrum-large.h5", "r")
g = f["spectrum"]
assert f.attrs["ranks"] == 2 and g.attrs["d"] == 256 and g.attrs["solver"] == "krylovschur", dict(g.attrs)
assert list(g["converged"][()]) == [10]
assert np.allclose(g["eigenvalues_re"][0], 0.9 ** np.arange(10), rtol=1e-9, atol=0)
print("slurm: spectrum-large (d = 256) top 10 found on 2 tasks, gap", g["gap"][0])
PY
bash "$SRC/tests/slurm/run_slurm_test.sh" "$SRC/jobscripts/spectrum.sbatch" --ntasks=2 --chdir="$scratch" \
  --output="$scratch/again-%j.out" -- "$SRC/input/spectrum-large.ini" "$scratch/out" "${tiny[@]}"
grep -q "nothing to do" again-*.out || fail "resubmission ran again: $(cat again-*.out)"
echo "slurm: spectrum job complete; resubmission is nothing to do"
