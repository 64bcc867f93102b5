#!/usr/bin/env bash
# tokdyn lens and weights.format = train (doc/science.md section 10.8) at test size, from a float64 train run
# with b_Q and b_V that stores its parameters at every second record (train.parameters_every = 2):
# - train/parameters holds the stored records (the last row is train/final_parameters, bit for bit);
# - lens at 1 and 3 ranks agree (1e-12), stopped and resumed it is the uninterrupted run bit for bit, and every number of /lens equals a NumPy reference computed here from
#   the stored parameters: the eigenvalues of F = O V and of each head's O_h V_h, and the power-method layers
#   (softmax attention over the whole vocabulary, residual, normalisation) with the alignment of the vocabulary's embeddings;
# - `tokdyn spectrum` and `tokdyn power` read the same stored step (weights.format = train, weights.step) and
#   find lens's |lambda_1| and alignment;
# - errors: a step not stored, a file that is no train run, a bad weights.step: exit 2 with one line.
source "$(dirname "$0")/common.sh"
small=(--train.steps=20 --train.eval_every=5 --train.batch=6 --train.context=16 --train.eval_sequences=5
       --model.layers=2 --model.heads=2 --model.channels=16 --train.alignment_null=20 --run.progress_interval=1000
       --train.precision=double --bias.query=true --bias.value=true)
run 2 train "$SRC/input/train.ini" "${small[@]}" --train.parameters_every=2 --run.output=t.h5 > t.log || fail "train: $(tail -n 3 t.log)"
run 1 lens --lens.run=t.h5 --run.output=l1.h5 > l1.log || fail "lens: $(tail -n 3 l1.log)"
run 3 lens --lens.run=t.h5 --run.output=l3.h5 > l3.log || fail "lens at 3 ranks: $(tail -n 3 l3.log)"
compare l1.h5 l3.h5 --tol 1e-12 || fail "lens at 1 and 3 ranks differ"
# Stopped after the first point and resumed: the uninterrupted run's numbers, bit for bit.
run 1 lens --lens.run=t.h5 --run.output=lstop.h5 --$STOP=1 > /dev/null || fail "lens stopped at point 1"
[ "$(status_of lstop.h5.part)" = checkpointed ] || fail "lens: not checkpointed at point 1"
run 1 lens --lens.run=t.h5 --run.output=lstop.h5 --resume > lresume.log || fail "lens resumed: $(tail -n 3 lresume.log)"
compare l1.h5 lstop.h5 --tol 0 || fail "the resumed lens run differs from the uninterrupted one"
grep -q "tokdyn lens: 't.h5' (ecd, b_Q + b_V), GPT L = 2, H = 2, C = 16" l1.log || fail "banner: $(grep 'tokdyn lens' l1.log)"
run 2 spectrum "$SRC/input/spectrum.ini" --weights.format=train --weights.file=t.h5 --weights.step=10 --spectrum.nev=4 \
  --run.output=s.h5 > s.log || fail "spectrum of step 10: $(tail -n 3 s.log)"
run 2 power "$SRC/input/power-dominant.ini" --weights.format=train --weights.file=t.h5 --weights.step=10 \
  --weights.layers=0 --power.tokens=embedding --power.token_ids="$(seq -s, 0 81)" --power.causal=false \
  --run.output=p.h5 > p.log || fail "power of step 10: $(tail -n 3 p.log)"
"$PYTHON" - <<'PY' || fail "lens against NumPy"
import h5py, numpy as np
t = h5py.File("t.h5", "r")["train"]
params, steps = t["parameters"][()], list(t["parameters_step"][()])
assert steps == [0, 10, 20], steps  # records 0..4 of 5 steps: every second, and the last
assert np.array_equal(params[-1], t["final_parameters"][()])
C, H, L, P, F = 16, 2, 2, 16, 64
dh = C // H
V = (params.shape[1] - P * C - L * (4 * C + 3 * C * C + 3 * C + C * C + C + F * C + F + C * F + C) - 2 * C) // C
lens = h5py.File("l1.h5", "r")["lens"]
assert list(lens["step"][()]) == steps and lens.attrs["tokens"] == V

def layers(theta):
    at, out = V * C + P * C, []
    for _ in range(L):
        at += 2 * C
        qkv = theta[at:at + 3 * C * C].reshape(3 * C, C); at += 3 * C * C + 3 * C
        proj = theta[at:at + C * C].reshape(C, C); at += C * C + C
        at += 2 * C + F * C + F + C * F + C
        out.append((qkv[:C], qkv[C:2 * C], qkv[2 * C:], proj))
    return out

def lead(f):
    """|lambda_1|, the gap (against the first eigenvalue outside a complex pair) and an orthonormal basis of
    span(v_1), or of the plane of Re v_1, Im v_1 for a pair."""
    w, v = np.linalg.eig(f)
    order = np.argsort(-np.abs(w), kind="stable")
    w, v = w[order], v[:, order]
    pair = abs(w[0].imag) > 1e-12 * abs(w[0])
    basis = np.linalg.qr(np.stack([v[:, 0].real, v[:, 0].imag], axis=1))[0] if pair else v[:, :1].real
    return np.abs(w[0]), 1 - np.abs(w[2 if pair else 1]) / np.abs(w[0]), basis / np.linalg.norm(basis, axis=0)

for k, theta in enumerate(params):
    x = theta[:V * C].reshape(V, C)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    for l, (q, kk, v, o) in enumerate(layers(theta)):
        f = o @ v
        l1, gap, _ = lead(f)
        assert abs(lens["lambda1"][k, l] - l1) <= 1e-10 * l1 and abs(lens["gap"][k, l] - gap) <= 1e-9, (k, l)
        for h in range(H):
            s = slice(h * dh, (h + 1) * dh)
            hl1, hgap, _ = lead(o[:, s] @ v[s])
            assert abs(lens["head_lambda1"][k, l, h] - hl1) <= 1e-10 * hl1, (k, l, h)
        a1, agap, v1 = lead(np.eye(C) + f)
        assert abs(lens["lambda1_acting"][k, l] - a1) <= 1e-10 * a1 and abs(lens["gap_acting"][k, l] - agap) <= 1e-9
        # The power-method layer: x_i + sum_h O_h sum_j softmax_j(<Q_h x_i, K_h x_j> / sqrt(d_h)) V_h x_j.
        before = x
        y = x.copy()
        for h in range(H):
            s = slice(h * dh, (h + 1) * dh)
            logits = (x @ q[s].T) @ (x @ kk[s].T).T / np.sqrt(dh)
            a = np.exp(logits - logits.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            y += (a @ (x @ v[s].T)) @ o[:, s].T
        x = y / np.linalg.norm(y, axis=1, keepdims=True)
        gamma, gamma_in = np.linalg.norm(x @ v1, axis=1).mean(), np.linalg.norm(before @ v1, axis=1).mean()
        assert abs(lens["gamma_mean"][k, l] - gamma) <= 1e-10 and abs(lens["gamma_in_mean"][k, l] - gamma_in) <= 1e-10, \
            (k, l, lens["gamma_mean"][k, l], gamma)
sp = h5py.File("s.h5", "r")["spectrum"]
found = np.abs(sp["eigenvalues_re"][:, 0] + 1j * sp["eigenvalues_im"][:, 0])
assert np.allclose(found, lens["lambda1"][1], rtol=1e-10, atol=0), (found, lens["lambda1"][1])
pw = h5py.File("p.h5", "r")["power"]
assert np.allclose(pw["gamma_mean"][()], lens["gamma_mean"][1], rtol=0, atol=1e-12), (pw["gamma_mean"][()], lens["gamma_mean"][1])
print(f"lens: {len(steps)} points, {L} layers, {H} heads, vocabulary {V}: NumPy agrees; |lambda_1(F)| at the end "
      f"{lens['lambda1'][-1]}, alignment {lens['gamma_mean'][-1]} (random {lens.attrs['baseline']:.4f})")
PY
# postprocess/lens.py: the figure (checked for empty panels and covered curves) and the JSON's first and last
# points, which are the file's; a spectrum run file is refused in one line.
TOKDYN_FIGURE_CHECK=error "$PYTHON" "$SRC/postprocess/lens.py" l1.h5 -o lens.png --json lens.json > lens.out \
  || fail "lens.py: $(cat lens.out)"
[ -s lens.png ] || fail "lens.py wrote no figure"
"$PYTHON" -c "
import json, h5py
runs, g = json.load(open('lens.json'))['runs'], h5py.File('l1.h5', 'r')['lens']
assert [r['layer'] for r in runs] == [0, 1]
for r in runs:
    assert r['lambda1'] == [g['lambda1'][0, r['layer']], g['lambda1'][-1, r['layer']]] and r['steps'] == [0, 20]
    assert r['gamma_mean'][1] == g['gamma_mean'][-1, r['layer']]" || fail "lens.json"
"$PYTHON" "$SRC/postprocess/lens.py" s.h5 -o bad.png > bad.out 2>&1 && fail "lens.py read a spectrum run"
[ "$(wc -l < bad.out)" = 1 ] && grep -q "^lens.py: error: .*s.h5" bad.out || fail "lens.py's error: $(cat bad.out)"
# The end only: a run that stores no parameters has one point, its final parameters.
run 1 train "$SRC/input/train.ini" "${small[@]}" --run.output=end.h5 > /dev/null
run 1 lens --lens.run=end.h5 --run.output=lend.h5 > lend.log || fail "lens of the end: $(tail -n 3 lend.log)"
grep -q "step 20 (1/1)" lend.log || fail "one point, step 20: $(grep '^step' lend.log)"
expect_error 2 "'t.h5' stores no parameters at step 7" lens --lens.run=t.h5 --lens.steps=7 --run.output=bad.h5
expect_error 2 "weights.step = 'x': not 'last' nor an optimizer step" spectrum "$SRC/input/spectrum.ini" \
  --weights.format=train --weights.file=t.h5 --weights.step=x --run.output=bad.h5
expect_error 2 "train run file 'end.h5' stores no parameters at step 10 \(it stores none: run it with train.parameters_every > 0\)" \
  spectrum "$SRC/input/spectrum.ini" --weights.format=train --weights.file=end.h5 --weights.step=10 --run.output=bad.h5
expect_error 2 "train run file 's.h5' is not a run file of tokdyn train" lens --lens.run=s.h5 --run.output=bad.h5
expect_error 2 "tokdyn lens needs lens.run" lens --run.output=bad.h5
echo "lens: all checks passed"
