# tokdyn mlmc: the same estimate and table at 1, 2 and 3 ranks (bit for bit, timings aside), a run stopped by
# run.stop_at and resumed equal to the whole run, the multilevel estimate against plain Monte Carlo at the finest
# depth (within 3 combined standard errors), the figure of several runs, the job script's complexity test without
# Slurm and its usage errors, levels in tokens and the multi-index estimator (ranks, resume), fixed tokens from a
# file, the finite-width transformer's levels, and bad input in one line each. (The SIGTERM stop and resume at 1 and 3 ranks: resume_all.sh.)
source "$(dirname "$0")/common.sh"
deck=$SRC/input/mlmc.ini
small=(--mlmc.eps=1e-2 --mlmc.initial_samples=20 --mlmc.batch=16 --run.progress_interval=1000)
for np in 1 2 3; do run $np mlmc "$deck" "${small[@]}" --run.output=ranks$np.h5 > ranks$np.log || fail "$np ranks: $(cat ranks$np.log)"; done
compare ranks1.h5 ranks2.h5 --tol 0 > /dev/null || fail "1 and 2 ranks differ"
compare ranks1.h5 ranks3.h5 --tol 0 > /dev/null || fail "1 and 3 ranks differ"
grep -q "plain Monte Carlo at L = " ranks2.log || fail "no comparison with plain MC in the summary: $(cat ranks2.log)"
grep -qE "in L: alpha = .* \(predicted 1\).*beta = .*gamma = 1.000 \(model\)" ranks2.log || fail "no rates line: $(cat ranks2.log)"
echo "ok: mlmc at 1, 2 and 3 ranks, bitwise equal"
# Stopped after 5 rounds (a checkpoint; --status names the round of a run whose length is planned as it goes),
# then resumed: the same file as the run without a stop.
run 2 mlmc "$deck" "${small[@]}" --run.output=cut.h5 --run.stop_at=5 > cut.log || fail "stop: $(cat cut.log)"
grep -qE "checkpointed at round 5/[0-9]+ " cut.log || fail "no checkpoint at round 5: $(cat cut.log)"
run 1 mlmc "$deck" "${small[@]}" --run.output=cut.h5 --status > status.txt || fail "status: $(cat status.txt)"
grep -q "checkpointed: round 5 (the length is planned as the run goes)" status.txt || fail "status: $(cat status.txt)"
run 2 mlmc "$deck" "${small[@]}" --run.output=cut.h5 --resume > resume.log || fail "resume: $(cat resume.log)"
compare ranks2.h5 cut.h5 --tol 0 > /dev/null || fail "the resumed run differs from the whole run"
echo "ok: stopped at round 5 and resumed, bitwise equal"
# MLMC over levels 0..4 (forced) against plain Monte Carlo at the finest depth L0 2^4: one expectation, so the
# estimates agree within 3 combined standard errors.
same=(--mlmc.eps=4e-3 --mlmc.min_levels=4 --mlmc.max_levels=4 --run.progress_interval=1000)
run 2 mlmc "$deck" "${same[@]}" --run.output=ml.h5 > ml.log || fail "mlmc: $(cat ml.log)"
run 2 mlmc "$deck" "${same[@]}" --mlmc.method=mc --run.output=mc.h5 > mc.log || fail "mc: $(cat mc.log)"
"$PYTHON" - ml.h5 mc.h5 <<'PY' || fail "MLMC and plain MC disagree"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["mlmc"].attrs for p in sys.argv[1:])
se = np.hypot(a["standard_error"], b["standard_error"])
print(f"MLMC {a['estimate']:.5f} +- {a['standard_error']:.1e}, plain MC {b['estimate']:.5f} +- {b['standard_error']:.1e}: "
      f"{(a['estimate'] - b['estimate']) / se:+.2f} combined se; work {a['work']:.3g} against {b['work']:.3g} steps")
assert abs(a["estimate"] - b["estimate"]) < 3 * se
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
assert text(a["method"]) == "mlmc" and text(b["method"]) == "mc", (a["method"], b["method"])
assert b["converged"] == 1  # the sampling target (MLMC stops at its forced finest level, bias or not)
assert max(a["standard_error"], b["standard_error"]) <= 4e-3 * np.sqrt(0.5) * 1.01
assert a["work"] < b["work"], "the levels cost more than plain MC"
PY
"$PYTHON" "$SRC/postprocess/mlmc.py" ml.h5 mc.h5 ranks1.h5 -o fig.png > fig.txt || fail "mlmc.py: $(cat fig.txt)"
[ -s fig.png ] && grep -q "MLMC: work ~ eps^" fig.txt || fail "mlmc.py: $(cat fig.txt)"
expect_script_error "no file of method mlmc" "$SRC/postprocess/mlmc.py" mc.h5
expect_script_error "ranks1.log" "$SRC/postprocess/mlmc.py" ranks1.log
# The job script's complexity test without Slurm: two eps, each by MLMC and by plain MC at its finest depth.
TOKDYN_PYTHON=$PYTHON TOKDYN_SRC=$SRC bash "$SRC/jobscripts/mlmc.sbatch" "$deck" job 2e-2,1e-2 --mlmc.initial_samples=20 \
  --run.progress_interval=1000 > job.log 2>&1 || fail "mlmc.sbatch: $(cat job.log)"
for f in mlmc-eps2e-2 mlmc-eps2e-2-mc mlmc-eps1e-2 mlmc-eps1e-2-mc; do
  [ "$(status_of job/$f.h5)" = complete ] || fail "mlmc.sbatch: job/$f.h5 is not complete"
done
[ -s job/mlmc.png ] || fail "mlmc.sbatch drew no figure: $(cat job.log)"
echo "ok: jobscripts/mlmc.sbatch, two eps with plain MC"
for bad in "" "1e-2,,5e-3" "1e-2;rm"; do
  rc=0
  TOKDYN_PYTHON=$PYTHON TOKDYN_SRC=$SRC bash "$SRC/jobscripts/mlmc.sbatch" ${bad:+"$deck" job2 "$bad"} > usage.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < usage.txt)" = 1 ] && grep -qE "usage|EPS must be" usage.txt || fail "mlmc.sbatch '$bad': exit $rc: $(cat usage.txt)"
done
[ ! -e job2 ] || fail "a refused mlmc.sbatch made its OUTDIR"
echo "ok: mlmc.sbatch refuses a missing deck and bad eps lists with one line"
# Fixed tokens from a file: every sample starts from the file's rows (normalised), and the banner says so.
"$PYTHON" -c 'import h5py, numpy as np; h5py.File("x0.h5", "w")["X"] = np.random.default_rng(3).normal(size=(8, 3))'
run 1 mlmc "$deck" --tokens.init=file --tokens.file=x0.h5 "${small[@]}" --run.output=file.h5 > file.log || fail "file: $(cat file.log)"
grep -q "the file's tokens" file.log || fail "the banner does not name the file's tokens: $(head -n 2 file.log)"
compare file.h5 ranks1.h5 --tol 0 > /dev/null 2>&1 && fail "the file's tokens gave the seed's results"
echo "ok: fixed tokens from a file"
# Levels in the token count (antithetic halves) and the multi-index estimator over (L, N): the multi-index run the
# same at 1 and 3 ranks and stopped and resumed bit for bit; the token levels' table and both figures.
fresh=(--mlmc.fresh_tokens=true --model.N=4 --mlmc.eps=2e-2 --mlmc.initial_samples=20 --mlmc.batch=16 --run.progress_interval=1000)
run 2 mlmc "$deck" "${fresh[@]}" --mlmc.levels=tokens --run.output=tokens.h5 > tokens.log || fail "tokens: $(cat tokens.log)"
grep -qE "alpha = .* \(predicted 1\).*beta = .* \(predicted 2\)" tokens.log || fail "tokens: no rates line: $(cat tokens.log)"
for np in 1 3; do
  run $np mlmc "$deck" "${fresh[@]}" --mlmc.levels=both --run.output=both$np.h5 > both$np.log || fail "both: $(cat both$np.log)"
done
compare both1.h5 both3.h5 --tol 0 > /dev/null || fail "multi-index: 1 and 3 ranks differ"
run 2 mlmc "$deck" "${fresh[@]}" --mlmc.levels=both --run.output=bothcut.h5 --run.stop_at=4 > bothcut.log || fail "$(cat bothcut.log)"
run 2 mlmc "$deck" "${fresh[@]}" --mlmc.levels=both --run.output=bothcut.h5 --resume > bothresume.log || fail "$(cat bothresume.log)"
compare both1.h5 bothcut.h5 --tol 0 > /dev/null || fail "multi-index: the resumed run differs"
"$PYTHON" - tokens.h5 both1.h5 <<'PY' || fail "the token and multi-index tables"
import sys, h5py, numpy as np
t, b = (h5py.File(p, "r")["mlmc"] for p in sys.argv[1:])
assert np.all(t["level"][()] == 0) and list(t["token_level"][()]) == list(range(len(t["level"]))), t["token_level"][()]
assert np.array_equal(t["tokens"][()], 4 * 2.0 ** t["token_level"][()])
a, k = b["level"][()], b["token_level"][()]
ell = int((a + k).max())
assert len(a) == (ell + 1) * (ell + 2) // 2 and sorted(zip(a, k)) == sorted((i, j) for i in range(ell + 1) for j in range(ell + 1 - i))
print(f"ok: token levels 0..{len(t['level']) - 1}; multi-index set of level {ell}, {len(a)} indices; "
      f"estimates {t.attrs['estimate']:.4f} +- {t.attrs['standard_error']:.1e} and {b.attrs['estimate']:.4f} +- {b.attrs['standard_error']:.1e}")
PY
"$PYTHON" "$SRC/postprocess/mlmc.py" both1.h5 tokens.h5 -o index.png > index.txt || fail "mlmc.py: $(cat index.txt)"
[ -s index.png ] || fail "mlmc.py drew no multi-index figure"
echo "ok: levels in tokens and multi-index, 1 and 3 ranks and a resume bitwise equal"
# The width-m transformer (mlp.width = 8): depth levels by the covariance draws, the same at 1 and 3 ranks; the
# banner names it, the rates line predicts the variances' floor, /mlmc records the width; multi-index refused.
width=(--mlp.width=8 --mlmc.max_levels=3 "${small[@]}")
for np in 1 3; do run $np mlmc "$deck" "${width[@]}" --run.output=width$np.h5 > width$np.log || fail "width: $(cat width$np.log)"; done
compare width1.h5 width3.h5 --tol 0 > /dev/null || fail "width 8: 1 and 3 ranks differ"
grep -q "the width-8 transformer" width1.log || fail "the banner does not name the width: $(head -n 1 width1.log)"
grep -q "beta = .*(predicted 0: the variances' floor of order 1/m)" width1.log || fail "width: rates line: $(cat width1.log)"
"$PYTHON" -c 'import h5py, sys; w = [int(h5py.File(p, "r")["mlmc"].attrs["width"]) for p in sys.argv[1:]]; assert w == [8, 0], w' \
  width1.h5 ranks1.h5 || fail "/mlmc@width"
"$PYTHON" "$SRC/postprocess/mlmc.py" width1.h5 ranks1.h5 -o widthfig.png > widthfig.txt || fail "mlmc.py: $(cat widthfig.txt)"
grep -q "^width1.h5: mlmc, eps 0.01" widthfig.txt && [ -s widthfig.png ] || fail "mlmc.py: $(cat widthfig.txt)"
expect_error 2 "mlp.width.*multi-index" mlmc "$deck" --mlp.width=8 --mlmc.levels=both --mlmc.fresh_tokens=true --run.output=bad.h5
echo "ok: the width-8 transformer's depth levels at 1 and 3 ranks, bitwise equal"
expect_error 2 "mlmc.fresh_tokens = true" mlmc "$deck" --mlmc.levels=both --run.output=bad.h5
expect_error 2 "mlmc.max_levels.*below mlmc.min_levels" mlmc "$deck" --mlmc.max_levels=1 --run.output=bad.h5
expect_error 2 "mlmc.eps" mlmc "$deck" --mlmc.eps=0 --run.output=bad.h5
expect_error 2 "unknown value 'entropy'|entropy" mlmc "$deck" --mlmc.observable=entropy --run.output=bad.h5
expect_error 1 "fresh_tokens" mlmc "$deck" --tokens.init=file --tokens.file=x.h5 --mlmc.fresh_tokens=true --run.output=bad.h5
[ ! -e bad.h5 ] && [ ! -e bad.h5.part ] || fail "a refused run left a file"
