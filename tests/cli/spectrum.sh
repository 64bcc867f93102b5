# tokdyn spectrum on synthetic layers (doc/science.md sections 7.1 and 7.4):
#  ranks:    input/spectrum.ini (complex leading pair, 4 layer-varying layers) twice at 2 ranks gives the same
#            bits; at 1, 2, 3 ranks the same
#            eigenvalues, gap, vectors, left vectors and plane to 1e-10 (Krylov-Schur at tol 1e-12; the wanted
#            pairs are separated, so round-off of F moves them by ~1e-15 and the vectors by ~1e-14);
#  solvers:  Krylov-Schur on the dense matrix, on the shell operator and LAPACK agree to 1e-10;
#  closed form: the prescribed eigenvalues e^{+-0.5 i}, 0.7^k and the gap 0.3, and with the residual
#            (I + F) the eigenvalues 1 + lambda;
#  options:  -eps_nev 4 gives [layers, 4] results and nev = 4; -eps_type lapack is what the file says it used;
#            an option SLEPc does not read (-eps_nevv) and a value it rejects are refused in one line;
#  weight files: tokdyn's HDF5 layout of the same layers gives the same spectra; a GPT-2 safetensors file
#            gives numpy's eigenvalues of F = (W_v P)^T;
#  shared weights: one solve; bad input: one line, exit 2 on every rank.
source "$(dirname "$0")/common.sh"
deck="$SRC/input/spectrum.ini"
quiet=(--run.progress_interval=0)
for np in 1 2 3; do
  run "$np" spectrum "$deck" "${quiet[@]}" --run.output="ks$np.h5" > "log$np.txt" || fail "$(cat "log$np.txt")"
  [ "$(status_of "ks$np.h5")" = complete ] || fail "ks$np.h5 not complete"
done
grep -q "^layer 3 (4/4): 8/8 converged, |l1| = 1 (pair" log2.txt || fail "no layer line: $(cat log2.txt)"
run 2 spectrum "$deck" "${quiet[@]}" --spectrum.operator=shell --run.output=shell.h5 > log.txt || fail "$(cat log.txt)"
run 2 spectrum "$deck" "${quiet[@]}" --spectrum.solver=lapack --run.output=lapack.h5 > log.txt || fail "$(cat log.txt)"
run 3 spectrum "$deck" "${quiet[@]}" --spectrum.solver=lapack --run.output=lapack3.h5 > log.txt || fail "$(cat log.txt)"

# compare_spectra A B TOL: the results (not timings, iteration counts or residuals) agree to TOL relative.
compare_spectra() {
  "$PYTHON" - "$@" <<'PY'
import sys, h5py, numpy as np
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
    ga, gb = fa["spectrum"], fb["spectrum"]
    worst = 0.0
    for name in ("layer", "eigenvalues_re", "eigenvalues_im", "converged", "gap", "complex_leading", "vectors",
                 "left_vectors", "plane"):
        if name not in ga and name not in gb:
            continue
        x, y = ga[name][()].astype(float), gb[name][()].astype(float)
        assert x.shape == y.shape, f"{name}: shapes {x.shape} vs {y.shape}"
        assert np.array_equal(np.isnan(x), np.isnan(y)), f"{name}: NaN in different places"
        ok = ~np.isnan(x)
        err = np.max(np.abs(x[ok] - y[ok]) / np.maximum(1, np.abs(x[ok]))) if ok.any() else 0.0
        assert err <= tol, f"{name}: relative difference {err:.3g} > {tol:g} ({a} vs {b})"
        worst = max(worst, err)
print(f"ok: {a} = {b} (max relative difference {worst:.2g})")
PY
}
run 2 spectrum "$deck" "${quiet[@]}" --run.output=ks2b.h5 > log.txt || fail "$(cat log.txt)"
compare_spectra ks2.h5 ks2b.h5 0 || fail "2 ranks twice: not bitwise equal"
compare_spectra ks1.h5 ks2.h5 1e-10 || fail "1 vs 2 ranks"
compare_spectra ks1.h5 ks3.h5 1e-10 || fail "1 vs 3 ranks"
compare_spectra ks2.h5 shell.h5 1e-10 || fail "dense vs shell"
compare_spectra ks2.h5 lapack.h5 1e-10 || fail "Krylov-Schur vs LAPACK"
compare_spectra lapack.h5 lapack3.h5 1e-12 || fail "LAPACK at 2 vs 3 ranks"

# The prescribed spectrum (synthetic.kind = complex, angle 0.5, gap 0.3): e^{+-0.5 i}, then 0.7^(k-2).
"$PYTHON" - <<'PY' || fail "prescribed spectrum"
import h5py, numpy as np
for name in ("ks2.h5", "shell.h5", "lapack.h5"):
    g = h5py.File(name, "r")["spectrum"]
    lam = g["eigenvalues_re"][()] + 1j * g["eigenvalues_im"][()]
    want = np.array([np.exp(0.5j), np.exp(-0.5j)] + [0.7 ** k for k in range(1, 7)])
    assert lam.shape == (4, 8) and np.all(g["converged"][()] == 8), lam.shape
    assert np.max(np.abs(lam - want) / np.abs(want)) < 1e-10, (name, lam[0])
    assert np.allclose(g["gap"][()], 0.3, rtol=0, atol=1e-10) and np.all(g["complex_leading"][()] == 1)
    assert list(g["layer"][()]) == [0, 1, 2, 3]
    # The plane is orthonormal and holds Re v1, Im v1 (the vectors' first two rows).
    p, v = g["plane"][()], g["vectors"][()]
    for t in range(4):
        assert np.allclose(p[t] @ p[t].T, np.eye(2), atol=1e-12)
        assert np.allclose(p[t].T @ (p[t] @ v[t, :2].T), v[t, :2].T, atol=1e-12)
    # Left vectors: u^H F = lambda u^H is not checkable without F here; the MPI tests check it. Their phase:
    # unit norm, component of largest modulus real and positive.
    u = g["left_vectors"][()]
    assert np.allclose(np.sum(u[:, 2:] ** 2, axis=2), 1, atol=1e-12)
    assert g.attrs["nev"] == 8 and g.attrs["d"] == 512
    print(name, g.attrs["solver"], g.attrs["eps_type"], g.attrs["operator"], "lambda_1 =", lam[0, 0])
PY

# The residual layer: eigenvalues of I + F are 1 + lambda (LAPACK, every eigenvalue the deck asks for).
run 2 spectrum "$deck" "${quiet[@]}" --spectrum.solver=lapack --spectrum.residual=true --spectrum.layers=1 \
  --run.output=residual.h5 > log.txt || fail "$(cat log.txt)"
"$PYTHON" - <<'PY' || fail "residual"
import h5py, numpy as np
g, h = h5py.File("residual.h5", "r")["spectrum"], h5py.File("lapack.h5", "r")["spectrum"]
mu = g["eigenvalues_re"][0] + 1j * g["eigenvalues_im"][0]
lam = h["eigenvalues_re"][1] + 1j * h["eigenvalues_im"][1]
# |1 + lambda| orders I + F: 1 + e^{+-0.5i} (1.94), 1.7, 1.49, ... the same order here.
assert list(g["layer"][()]) == [1] and g.attrs["residual"] == 1
assert np.max(np.abs(mu - (1 + lam))) < 1e-12, (mu, lam)
assert abs(g["gap"][0] - (1 - 1.7 / abs(1 + np.exp(0.5j)))) < 1e-12
PY

# -eps_nev and -eps_type reach SLEPc after the deck's settings.
run 2 spectrum "$deck" "${quiet[@]}" --spectrum.layers=0,2 --run.output=nev4.h5 -eps_nev 4 > log.txt || fail "$(cat log.txt)"
grep -q "4/4 converged" log.txt || fail "-eps_nev 4 not used: $(cat log.txt)"
run 2 spectrum "$deck" "${quiet[@]}" --spectrum.layers=0,2 --spectrum.left=false --run.output=epslapack.h5 \
  -eps_type lapack > log.txt || fail "$(cat log.txt)"
# An option SLEPc does not read is refused (not ignored), and a value it rejects is named in one line.
expect_error 2 "option '-eps_nevv' is not read by PETSc/SLEPc in tokdyn spectrum \(this command configures a SLEPc eigensolver" \
  spectrum "$deck" "${quiet[@]}" --run.output=nevv.h5 -eps_nevv 4
expect_error 2 "PETSc/SLEPc option refused in tokdyn spectrum: Unknown EPS type given: nonsense" \
  spectrum "$deck" "${quiet[@]}" --run.output=nevv.h5 -eps_type nonsense
[ ! -e nevv.h5 ] && [ ! -e nevv.h5.part ] || fail "a refused option left a run file"
"$PYTHON" - <<'PY' || fail "-eps_* options"
import h5py, numpy as np
g = h5py.File("nev4.h5", "r")["spectrum"]
assert g.attrs["nev"] == 4 and g["eigenvalues_re"].shape == (2, 4) and g["vectors"].shape == (2, 4, 512)
assert list(g["layer"][()]) == [0, 2]
e, k = h5py.File("epslapack.h5", "r")["spectrum"], h5py.File("ks2.h5", "r")["spectrum"]
assert e.attrs["eps_type"] == "lapack" and k.attrs["eps_type"] == "krylovschur", e.attrs["eps_type"]
assert np.allclose(e["eigenvalues_re"][()], k["eigenvalues_re"][[0, 2]], rtol=0, atol=1e-12)
assert np.allclose(g["eigenvalues_im"][()], k["eigenvalues_im"][[0, 2], :4], rtol=0, atol=1e-12)
PY

# Weights from files. The deck's synthetic layers in tokdyn's HDF5 layout (tokdyn weights) give the same
# spectra as the synthetic source; a GPT-2-shaped safetensors file gives the eigenvalues numpy finds in
# F = (W_v P)^T (doc/science.md section 7.5) from the file's own tensors.
synthetic=(--synthetic.kind=complex --synthetic.d=512 --synthetic.heads=8 --synthetic.layers=4 --synthetic.shared=false
           --synthetic.outliers=10 --synthetic.nonnormality=0.1)
run 2 weights "${synthetic[@]}" --convert.output=w.h5 > log.txt || fail "$(cat log.txt)"
run 3 spectrum "$deck" "${quiet[@]}" --weights.format=hdf5 --weights.file=w.h5 --run.output=fromfile.h5 > log.txt \
  || fail "$(cat log.txt)"
compare_spectra ks2.h5 fromfile.h5 1e-10 || fail "HDF5 weights vs synthetic"
"$PYTHON" - <<'PY'
import json, struct
import numpy as np
d, layers = 12, 2
rng = np.random.default_rng(7)
tensors = []
for l in range(layers):
    tensors.append((f"h.{l}.attn.c_attn.weight", rng.standard_normal((d, 3 * d)) / np.sqrt(d)))
    tensors.append((f"h.{l}.attn.c_proj.weight", rng.standard_normal((d, d)) / np.sqrt(d)))
header, blobs, offset = {}, [], 0
for name, a in tensors:
    a = np.ascontiguousarray(a, dtype="<f4")
    header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
    blobs.append(a.tobytes())
    offset += a.nbytes
text = json.dumps(header).encode()
with open("gpt2.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
want = []
for l in range(layers):
    w = dict(tensors)
    wv = w[f"h.{l}.attn.c_attn.weight"].astype("<f4").astype(float)[:, 2 * d:]
    p = w[f"h.{l}.attn.c_proj.weight"].astype("<f4").astype(float)
    lam = np.linalg.eigvals((wv @ p).T)
    want.append(sorted(lam, key=lambda z: (-abs(z), -z.real, -z.imag)))
np.save("gpt2_eigenvalues.npy", np.array(want))
PY
run 2 spectrum --weights.format=gpt2 --weights.file=gpt2.safetensors --weights.heads=3 --spectrum.nev=12 \
  --spectrum.solver=lapack --run.output=gpt2.h5 "${quiet[@]}" > log.txt || fail "$(cat log.txt)"
"$PYTHON" - <<'PY' || fail "GPT-2 spectra"
import h5py, numpy as np
g = h5py.File("gpt2.h5", "r")["spectrum"]
lam = g["eigenvalues_re"][()] + 1j * g["eigenvalues_im"][()]
want = np.load("gpt2_eigenvalues.npy")
assert lam.shape == want.shape == (2, 12) and list(g["layer"][()]) == [0, 1]
assert np.max(np.abs(lam - want)) < 1e-12 * np.abs(want).max(), np.abs(lam - want).max()
print("gpt2: layer spectra equal numpy's eig of (W_v P)^T; |lambda_1| =", np.abs(lam[:, 0]))
PY

# Shared weights: one matrix, one solve, whatever spectrum.layers lists.
run 2 spectrum "$deck" "${quiet[@]}" --synthetic.shared=true --spectrum.layers=2,3 --run.output=shared.h5 > log.txt \
  || fail "$(cat log.txt)"
grep -q "shared weights: one solve" log.txt || fail "no shared note: $(cat log.txt)"
"$PYTHON" -c "import h5py; g = h5py.File('shared.h5', 'r')['spectrum']; assert list(g['layer'][()]) == [2], g['layer'][()]" \
  || fail "shared: not one row"

# Status and an existing output.
case "$(run 1 spectrum "$deck" --run.output=ks1.h5 --status)" in complete:*) ;; *) fail "--status of a finished run";; esac
run 1 spectrum "$deck" --run.output=ks1.h5 --resume > resume-done.txt || fail "--resume of a finished run: exit $?"
grep -q "nothing to do" resume-done.txt || fail "--resume of a finished run: $(cat resume-done.txt)"
expect_error 2 "output 'ks2.h5' exists" spectrum "$deck" --run.output=ks2.h5

# Bad input.
expect_error 2 "'spectrum.solver' = 'arpack'" spectrum "$deck" --spectrum.solver=arpack --run.output=bad.h5
expect_error 3 "'spectrum.nev' = 600 exceeds d = 512" spectrum "$deck" --spectrum.nev=600 --run.output=bad.h5
expect_error 2 "'spectrum.layers' = '0,4': layer 4 is outside \[0, 4\)" spectrum "$deck" --spectrum.layers=0,4 \
  --run.output=bad.h5
expect_error 2 "'spectrum.layers': 'x' is not a layer index" spectrum "$deck" --spectrum.layers=1,x --run.output=bad.h5
expect_error 2 "'spectrum.ncv' = 5 must lie in" spectrum "$deck" --spectrum.ncv=5 --run.output=bad.h5
expect_error 2 "weights file 'missing.h5' \(weights.file\) does not exist" spectrum "$deck" --weights.format=hdf5 \
  --weights.file=missing.h5 --run.output=bad.h5
expect_error 2 "needs weights.file" spectrum "$deck" --weights.format=gpt2 --run.output=bad.h5
[ ! -e bad.h5 ] && [ ! -e bad.h5.part ] || fail "bad input left a file"
echo "spectrum: ranks, solvers, prescribed spectrum, residual, -eps_* options, shared weights and bad input ok"
