# tokdyn power: the claims of doc/science.md section 7.3 checked from the run files of the four power decks,
# results equal at 1 and 3 ranks, and bad input (one error line, exit code 2 on every rank, no complete file).
source "$(dirname "$0")/common.sh"
check() { "$PYTHON" - "$@"; }

run 2 power "$SRC/input/power-dominant.ini" --run.output=dominant.h5 > dominant.txt || fail "$(cat dominant.txt)"
check dominant.h5 <<'PY'
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["power"]
gamma, ratio, closed = g["gamma_mean"][()], g.attrs["error_ratio"], g.attrs["error_ratio_closed_form"]
assert gamma[-1] > 1 - 1e-9 and g["gamma_q1"][-1] > 1 - 1e-9, gamma[-5:]
assert abs(ratio / closed - 1) < 0.01, (ratio, closed)  # error ~ (|1 + l2| / |1 + l1|)^t = 0.85^t
assert g.attrs["state"] in ("consensus", "bipartite"), g.attrs["state"]
print(f"ok: dominant: gamma {gamma[-1]:.12f}, error ratio {ratio:.6f} vs |1+l2|/|1+l1| {closed:.6f}, state {g.attrs['state']}")
PY

run 2 power "$SRC/input/power-complex.ini" --run.output=complex.h5 > complex.txt || fail "$(cat complex.txt)"
run 2 power "$SRC/input/power-complex.ini" --run.output=complex-residual.h5 --power.residual=true --weights.layers=250 \
  > complex-residual.txt || fail "$(cat complex-residual.txt)"
check complex.h5 complex-residual.h5 <<'PY'
import sys, h5py, numpy as np
for path, expect in zip(sys.argv[1:], (0.5, np.angle(1 + np.exp(0.5j)))):
    g = h5py.File(path, "r")["power"]
    rot, angle, sin = g["rotation"][()], g["angle"][()], g["sin_mean"][()]
    assert g["pair"][()].all()
    assert abs(angle[-1] - expect) < 1e-12, (angle[-1], expect)      # arg lambda_1 of F (of I + F)
    assert sin[-1] < 1e-6, sin[-1]                                     # the tokens reached the plane S
    assert np.abs(rot[-5:] - expect).max() < 1e-5, rot[-5:]           # and rotate by arg lambda_1 per layer
    assert g.attrs["state"] == "limit_cycle", g.attrs["state"]
    print(f"ok: {path}: rotation {rot[-1]:.9f} vs arg lambda_1 {expect:.9f}, plane distance {sin[-1]:.2e}, "
          f"state {g.attrs['state']}")
PY

run 2 power "$SRC/input/power-random.ini" --run.output=random.h5 > random.txt || fail "$(cat random.txt)"
run 2 power "$SRC/input/power-random.ini" --run.output=random-plain.h5 --power.residual=false > random-plain.txt \
  || fail "$(cat random-plain.txt)"
check random.h5 random-plain.h5 <<'PY'
import sys, h5py, numpy as np
for path in sys.argv[1:]:
    g = h5py.File(path, "r")["power"]
    rho = g["rho"][()]
    assert abs(rho.mean() - g.attrs["rho_mean"]) < 1e-12
    assert rho.mean() > 0.5, rho                                  # tokens tilt towards v_{1,t} more often than not
    assert g["gamma_mean"][()].mean() > g["gamma_in_mean"][()].mean()
    print(f"ok: {path}: mean rho {rho.mean():.4f} (min {rho.min():.3f}), gamma in {g['gamma_in_mean'][()].mean():.4f}"
          f" -> out {g['gamma_mean'][()].mean():.4f}, baseline {g.attrs['baseline']:.4f}")
PY

run 2 power "$SRC/input/power-steer.ini" --run.output=steer.h5 > steer.txt || fail "$(cat steer.txt)"
run 2 power "$SRC/input/power-steer.ini" --run.output=steer-last.h5 --steer.layers=last > steer-last.txt \
  || fail "$(cat steer-last.txt)"
check steer.h5 steer-last.h5 <<'PY'
import sys, h5py, numpy as np
s = h5py.File(sys.argv[1], "r")["steer"]
c, amin = s["strength"][()], s["alignment_min"][()]
assert amin[c == 0][0] < 0.1, amin                                  # unsteered: u is far from v_1
assert (amin[c >= 20] > 0.99).all(), list(zip(c, amin))             # large c: every token aligned with u
assert (np.diff(amin) > -1e-12).all(), amin
assert s["eigvec_alignment"][-1] > 0.9999 and s["gap"][-1] > 0.98
last = h5py.File(sys.argv[2], "r")["steer"]
assert (np.diff(last["alignment_min"][()]) > 0).all()               # one steered layer: grows with c, slowly
print("ok: steering every layer: " + ", ".join(f"c={a:g}: {b:.5f}" for a, b in zip(c, amin)))
print("ok: steering the last layer: " + ", ".join(f"c={a:g}: {b:.5f}" for a, b in zip(c, last["alignment_min"][()])))
PY

# 1 vs 3 ranks to 1e-12 (softmax with tiles smaller than a block, causal uniform, the steering sweep); bitwise at 2.
small=(--weights.layers=30 --run.tile=7)
for np in 1 3; do
  run $np power "$SRC/input/power-dominant.ini" "${small[@]}" --run.output=dom$np.h5 > /dev/null
  run $np power "$SRC/input/power-random.ini" --power.attention=uniform --power.causal=true --run.output=causal$np.h5 \
    > /dev/null
  run $np power "$SRC/input/power-steer.ini" --run.tile=5 --power.causal=true --run.output=steer$np.h5 > /dev/null
done
compare dom1.h5 dom3.h5 --tol 1e-12
compare causal1.h5 causal3.h5 --tol 1e-12
compare steer1.h5 steer3.h5 --tol 1e-12
run 2 power "$SRC/input/power-steer.ini" --run.output=steer-again.h5 > /dev/null
compare steer.h5 steer-again.h5 --tol 0

# Krylov-Schur leading directions (matrix-free, what d > 2048 uses) give the dense run's diagnostics: the complex
# deck at 3 ranks against LAPACK at 2 (the plane coordinates depend on the bases' phases, so only the per-layer
# series are compared).
run 3 power "$SRC/input/power-complex.ini" --power.eigensolver=krylovschur --weights.layers=30 --run.output=ks.h5 > /dev/null
run 2 power "$SRC/input/power-complex.ini" --power.eigensolver=lapack --weights.layers=30 --run.output=la.h5 > /dev/null
"$PYTHON" - ks.h5 la.h5 <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r")["power"], h5py.File(sys.argv[2], "r")["power"]
for name in ("gamma_mean", "gamma_median", "sin_mean", "rho", "gap", "lambda1_re", "lambda1_im", "lambda2_abs", "rotation"):
    x, y = a[name][()], b[name][()]
    err = np.max(np.abs(x - y))  # the eigenvectors agree to ~1e-10 (tol), so do the series
    assert err < 1e-8, (name, err)
assert a.attrs["state"] == b.attrs["state"]
print("ok: Krylov-Schur leading directions = LAPACK's (1e-8)")
PY

# Bad input.
base=(power --weights.layers=3)
expect_error 2 "'power.attention' = 'linear': unknown value" "${base[@]}" --power.attention=linear
expect_error 2 "tokens from the embedding need a model with a token embedding; synthetic .* has none" "${base[@]}" \
  --power.tokens=embedding --power.token_ids=1,2
expect_error 2 "power.tokens = embedding needs power.token_ids" "${base[@]}" --power.tokens=embedding
expect_error 2 "'power.token_ids': 'x' is not a token id" "${base[@]}" --power.tokens=embedding --power.token_ids=1,x
expect_error 2 "steer.target 'none.h5:/u': file 'none.h5' is missing or not an HDF5 file" "${base[@]}" \
  --steer.target=none.h5:/u
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("targets.h5", "w") as f:
    f["short"] = np.ones(5)
    f["zero"] = np.zeros(64)
    f["tokens"] = np.ones((10, 7))
PY
expect_error 2 "steer.target 'targets.h5:/short' has 5 entries, the model width is d = 64" "${base[@]}" \
  --steer.target=targets.h5:/short
expect_error 2 "steer.target 'targets.h5:/zero' is the zero vector" "${base[@]}" --steer.target=targets.h5:/zero
expect_error 2 "has no dataset '/missing'" "${base[@]}" --steer.target=targets.h5:/missing
expect_error 2 "steer.target 'e0' is none of FILE.h5:/dataset, token:ID, axis:K" "${base[@]}" --steer.target=e0
expect_error 2 "axis:K takes one coordinate K in \[0, d = 64\)" "${base[@]}" --steer.target=axis:64
expect_error 2 "steer.target 'token:3' needs a model with a token embedding" "${base[@]}" --steer.target=token:3
expect_error 2 "'steer.strengths': '-1' is not a finite non-negative number" "${base[@]}" --steer.target=axis:1 \
  --steer.strengths=1,-1
expect_error 2 "token file 'missing.h5' is missing or not an HDF5 file" "${base[@]}" --power.tokens=file \
  --power.token_file=missing.h5
expect_error 2 "dataset 'tokens' must be \[N, 64\]" "${base[@]}" --power.tokens=file --power.token_file=targets.h5 \
  --power.token_dataset=tokens
expect_error 2 "weights.layers = 30 exceeds the 24 layer-varying synthetic layers" power "$SRC/input/power-random.ini" \
  --weights.layers=30
expect_error 2 "unknown key 'power.foo'" "${base[@]}" --power.foo=1
for f in *.h5.part; do [ -e "$f" ] && fail "left a partial file $f"; done
echo "ok: bad input"
