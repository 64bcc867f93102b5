#!/usr/bin/env bash
# tokdyn train (doc/science.md section 10) at test size, from its run files:
# - 1, 2 and 3 ranks agree at float64 (1e-12) with b_Q, b_K and b_V resampled; stopped and resumed: bit
#   for bit (float, AdamW; double, ECD with bounces);
# - Noether charges along the command's own records (float64, no biases): ECD from its default start keeps
#   every charge at round-off; from a random start their direction is fixed (sin of the angle < 1e-10);
#   the authors' per-tensor projection turns it, and so does a resampled b_Q (both measured and printed);
#   SGDM from a random buffer lets them decay; AdamW makes them from nothing;
# - the alignment table against its null is written; a Markov-data run; input errors exit 2;
# - weights out (train/final_parameters; train.export: a GPT-2 safetensors file that tokdyn spectrum reads) and
#   in (model.init_file: that file or the run file).
source "$(dirname "$0")/common.sh"
text="$SRC/input/train.ini"
small=(--train.steps=20 --train.eval_every=5 --train.batch=6 --train.context=16 --train.eval_sequences=5
       --model.layers=2 --model.heads=2 --model.channels=16 --train.alignment_null=50 --run.progress_interval=1000)
double=("${small[@]}" --train.precision=double)
biases=(--bias.query=true --bias.key=true --bias.value=true)

# Rank independence (float64) and restart.
for np in 1 2 3; do
  run $np train "$text" "${double[@]}" "${biases[@]}" --run.output=np$np.h5 > np$np.log
done
compare np1.h5 np2.h5 --tol 1e-12 || fail "1 and 2 ranks differ"
compare np1.h5 np3.h5 --tol 1e-12 || fail "1 and 3 ranks differ"
run 2 train "$text" "${small[@]}" "${biases[@]}" --train.optimizer=adamw --run.output=adam.h5 > adam.log
run 2 train "$text" "${small[@]}" "${biases[@]}" --train.optimizer=adamw --run.output=adamstop.h5 --$STOP=2 > /dev/null
[ "$(status_of adamstop.h5.part)" = checkpointed ] || fail "stop_at: not checkpointed"
run 2 train "$text" "${small[@]}" "${biases[@]}" --train.optimizer=adamw --run.output=adamstop.h5 --resume > resume.log
grep -q "restart from" resume.log || fail "did not restart: $(cat resume.log)"
compare adam.h5 adamstop.h5 --tol 0 || fail "resumed AdamW run differs from the uninterrupted one"
run 2 train "$text" "${double[@]}" --ecd.nu=0.05 --bias.query=true --run.output=ecd.h5 > /dev/null
run 3 train "$text" "${double[@]}" --ecd.nu=0.05 --bias.query=true --run.output=ecdstop.h5 --$STOP=3 > /dev/null
run 3 train "$text" "${double[@]}" --ecd.nu=0.05 --bias.query=true --run.output=ecdstop.h5 --resume > /dev/null
compare ecd.h5 ecdstop.h5 --tol 1e-12 || fail "ECD stopped at 3 ranks and resumed differs from 2 ranks"

# The charges, every record of 40 steps at float64.
long=("${double[@]}" --train.steps=40)
run 2 train "$text" "${long[@]}" --run.output=ecd0.h5 > ecd0.log
# From a random u the charges of u scale as (F - F0)^c (c ~ eta / 2 = 50): F0 = -10 keeps them far above
# round-off over 40 steps (F0 = 2 shrinks them by 1e-19 as the loss falls from 4.4 to 3).
random=(--ecd.start=random --ecd.F0=-10)
run 2 train "$text" "${long[@]}" "${random[@]}" --run.output=ecdr.h5 > ecdr.log
run 2 train "$text" "${long[@]}" "${random[@]}" --ecd.projection=tensor --run.output=ecdt.h5 > ecdt.log
run 2 train "$text" "${long[@]}" "${random[@]}" --bias.query=true --run.output=ecdq.h5 > ecdq.log
run 2 train "$text" "${long[@]}" --train.optimizer=sgdm --sgdm.initial_buffer=0.1 --run.output=sgdm.h5 > sgdm.log
run 2 train "$text" "${long[@]}" --train.optimizer=adamw --run.output=adamw.h5 > adamw.log
grep -q "direction not measured (at round-off throughout)" ecd0.log || fail "ECD default start: $(grep charges: ecd0.log)"
"$PYTHON" - <<'PY' || fail "charges"
import h5py, numpy as np
def load(name):
    f = h5py.File(name, "r")
    return f["diagnostics"], f["train"]
d, g = load("ecd0.h5")
rel = d["charge_relative"][()]
print(f"ECD, default start: charges at most {rel.max():.2e} of |P||theta| over 40 steps (round-off: < 1e-12)")
assert rel.max() < 1e-12 and g.attrs["charge_relative_max"] == rel.max()
drift = {}
for name, label in (("ecdr", "ECD, random start"), ("ecdt", "ECD per tensor"), ("ecdq", "ECD with b_Q resampled")):
    d, g = load(name + ".h5")
    drift[name] = np.nanmax(d["charge_drift"][()])
    print(f"{label}: charges {d['charge_relative'][-1]:.3e} of |P||theta|, direction turned by sin = {drift[name]:.3e}")
assert drift["ecdr"] < 1e-10, drift
assert drift["ecdq"] > 1e-2, drift
# The per-tensor variant is measured, not assumed: it turns the charges well above the global one's round-off.
assert drift["ecdt"] > 1e3 * max(drift["ecdr"], 1e-15), drift
d, _ = load("sgdm.h5")
q = d["charge_norm"][()]
print(f"SGDM from a random buffer: |charges| {q[0]:.3e} -> {q[-1]:.3e}")
assert q[-1] < 0.5 * q[0]
d, _ = load("adamw.h5")
rel = d["charge_relative"][()]
print(f"AdamW from a zero state: charges {rel[0]:.1e} -> {rel[-1]:.3e} of |P||theta|")
assert rel[0] == 0 and rel[-1] > 1e-6
# The run file: records every eval_every steps, the per-step losses, the charges' shapes, the alignment.
d, g = load("np1.h5")
assert list(d["step"][()]) == [0, 5, 10, 15, 20]
assert g["step_loss"].shape == (4, 5) and g["charges_qk"].shape == (5, 4, 8, 8)
assert g["alignment"].shape == (4, 4) and g["alignment_cos"].shape[0] == 4
cos = g["alignment_cos"][()]  # NaN for a token absent from the validation sequences
assert g.attrs["alignment_inputs"] == "layer" and (np.isfinite(cos).sum(axis=1) >= 10).all()  # 5 x 16 positions
assert np.all(np.abs(cos[np.isfinite(cos)]) <= 1 + 1e-12)
assert np.allclose(g["alignment"][:, 0], np.nanmean(cos, axis=1), rtol=0, atol=1e-12)
assert abs(d["train_loss"][1] - g["step_loss"][0].mean()) < 1e-12
PY

# Evaluation with the last sampled biases differs from the means (b_V moves every head's output).
run 2 train "$text" "${double[@]}" "${biases[@]}" --train.eval_biases=last --run.output=last.h5 > /dev/null
"$PYTHON" -c "
import h5py, sys
a, b = (h5py.File(n, 'r')['diagnostics/val_loss'][()] for n in ('np2.h5', 'last.h5'))
assert a[0] == b[0] and abs(a[-1] - b[-1]) > 1e-9, (a, b)" || fail "eval_biases = last"
# The key-bias alignment from the raw embeddings (train.alignment_inputs = embedding): cos(W_K wte[t], mean
# b_Q) of every token, computed here from the final parameters (1e-12).
run 2 train "$text" "${double[@]}" "${biases[@]}" --train.alignment_inputs=embedding --run.output=raw.h5 > /dev/null
"$PYTHON" - <<'PY' || fail "alignment from the raw embeddings"
import h5py, numpy as np
g = h5py.File("raw.h5", "r")["train"]
theta, cos = g["final_parameters"][()], g["alignment_cos"][()]
C, H, D, V = 16, 2, 8, cos.shape[1]
assert g.attrs["alignment_inputs"] == "embedding" and np.all(np.isfinite(cos))
wte, at = theta[:V * C].reshape(V, C), V * C + 16 * C
for layer in range(2):
    qkv = theta[at + 2 * C:at + 2 * C + 3 * C * C].reshape(3 * C, C)
    at += 2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + 4 * C * C + 4 * C + 4 * C * C + C
    for h in range(H):
        k = wte @ qkv[C + h * D:C + (h + 1) * D].T  # [V, D]
        want = k.sum(axis=1) / (np.linalg.norm(k, axis=1) * np.sqrt(D))  # mean b_Q = 0.5 (1, ..., 1)
        assert np.allclose(cos[layer * H + h], want, rtol=0, atol=1e-12), (layer, h)
PY
# Markov data and PReLU.
run 2 train "$text" "${small[@]}" --train.data=markov --model.mlp=prelu --run.output=markov.h5 > markov.log
grep -q "a Markov chain's path.*vocabulary 4" markov.log || fail "markov banner: $(head -n 1 markov.log)"
# The key-bias table names tokens with control characters escaped: a backspace prints as \x08, never raw.
for _ in $(seq 300); do printf 'ab\bc '; done > control.txt
run 1 train "$SRC/input/train-bq.ini" "${small[@]}" --train.text_file=control.txt --run.output=control.h5 > control.log \
  || fail "control characters: $(tail -n 3 control.log)"
grep -q "key-bias alignment" control.log || fail "no key-bias table: $(cat control.log)"
! grep -q $'\b' control.log || fail "a raw backspace in the console: $(grep -a $'\b' control.log | cat -A)"
grep -qF '\x08' control.log || fail "the backspace token is not shown as \\x08: $(grep -a 'largest' control.log)"
# The largest optimizer energy after a step (ECD: |u|^2 after the kick) is kept and printed; it bounds every
# record's value; AdamW has none.
"$PYTHON" - <<'PY' || fail "max_energy"
import h5py, math, numpy as np
e, a = h5py.File("ecd0.h5", "r"), h5py.File("adamw.h5", "r")
top, step = e["train"].attrs["max_energy"], e["train"].attrs["max_energy_step"]
assert top >= e["diagnostics/energy"][1:].max() and 1 <= step <= e["diagnostics/step"][-1], (top, step)
assert math.isnan(a["train"].attrs["max_energy"])
PY
grep -q "^ecd: energy after a step at most" ecd0.log || fail "no energy line: $(tail -n 8 ecd0.log)"
! grep -q "energy after a step" adamw.log || fail "an energy line for AdamW"
# The smoothed losses are EMAs with Adam's bias correction, of the trained steps (training) and of the
# records after the first (validation), recomputed here from the run file's raw values (1e-12); record 0
# shows the raw values. F0 = auto (the deck's) ended at the lowest step loss less 1, as the summary says.
"$PYTHON" - <<'PY' || fail "bias-corrected EMAs, F0 = auto"
import re, h5py, numpy as np
def ema(x, a=0.1):
    w = a * (1 - a) ** np.arange(len(x) - 1, -1, -1)
    return (w * x).sum() / (1 - (1 - a) ** len(x))
for name in ("np1.h5", "ecd0.h5"):
    f = h5py.File(name, "r")
    d, g = f["diagnostics"], f["train"]
    val, steps = d["val_loss"][()], g["step_loss"][()]
    assert d["val_loss_ema"][0] == val[0] and d["train_loss_ema"][0] == d["train_loss"][0]
    for k in range(1, len(val)):
        assert abs(d["val_loss_ema"][k] - ema(val[1:k + 1])) < 1e-12, (name, k, d["val_loss_ema"][k], ema(val[1:k + 1]))
        assert abs(d["train_loss_ema"][k] - ema(steps[:k].ravel())) < 1e-12, (name, k)
    assert g.attrs["final_val_loss_ema"] == d["val_loss_ema"][-1]
lowest = h5py.File("ecd0.h5", "r")["train/step_loss"][()].min()
m = re.search(r"^ecd: F0 = auto ended at (\S+) \(the lowest loss (\S+), less 1\)$", open("ecd0.log").read(), re.M)
assert m and float(m.group(2)) == float(f"{lowest:.6g}") and abs(float(m.group(1)) - (lowest - 1)) < 1e-5, (m, lowest)
print(f"EMAs recomputed; F0 = auto ended at {lowest - 1:.6f}")
PY
# Weights out and in. np1.h5's final parameters (train/final_parameters, tokdyn's layout) exported as GPT-2
# tensors (train.export: np1-like run export.h5 -> export.safetensors): the header names, shapes and dtype are
# GPT-2's, wte is the first V C parameters, and `tokdyn spectrum` (weights.format = gpt2) finds per layer the
# eigenvalues numpy finds for W_O W_V taken from the flat parameters (1e-10 relative): the transposes are right.
# A run started from the safetensors file, or from the run file, has the exported run's last validation loss
# at its record 0 (1e-12: the same float64 parameters, the same validation sequences, no biases).
run 2 train "$text" "${double[@]}" --train.export=true --run.output=export.h5 > export.log
grep -q "exported the trained parameters to 'export.safetensors'" export.log || fail "export: $(tail -n 5 export.log)"
run 2 spectrum "$SRC/input/spectrum.ini" --weights.format=gpt2 --weights.file=export.safetensors --weights.heads=2 \
  --spectrum.nev=4 --run.output=export-spectrum.h5 > export-spectrum.log || fail "spectrum of the export: $(tail -n 3 export-spectrum.log)"
run 2 train "$text" "${double[@]}" --model.init_file=export.safetensors --run.output=from-st.h5 > /dev/null
run 2 train "$text" "${double[@]}" --model.init_file=export.h5 --run.output=from-h5.h5 > /dev/null
"$PYTHON" - <<'PY' || fail "weights out and in"
import json, struct, h5py, numpy as np
raw = open("export.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
meta = header.pop("__metadata__")
assert meta["n_head"] == "2" and meta["n_layer"] == "2" and meta["tokdyn"] == "train"
theta = h5py.File("export.h5", "r")["train/final_parameters"][()]
C, L, F = 16, 2, 64
V = header["wte.weight"]["shape"][0]
assert header["h.1.attn.c_attn.weight"]["shape"] == [C, 3 * C] and header["h.0.mlp.c_proj.weight"]["shape"] == [F, C]
assert all(t["dtype"] == "F64" for t in header.values()) and "lm_head.weight" not in header
begin, end = header["wte.weight"]["data_offsets"]
wte = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype="<f8")
assert np.array_equal(wte, theta[:V * C])
sp = h5py.File("export-spectrum.h5", "r")["spectrum"]
found = np.abs(sp["eigenvalues_re"][()] + 1j * sp["eigenvalues_im"][()])
at = V * C + 16 * C  # wte, wpe [context 16, C]
for layer in range(L):
    at += 2 * C  # ln_1
    qkv = theta[at:at + 3 * C * C].reshape(3 * C, C); at += 3 * C * C + 3 * C
    proj = theta[at:at + C * C].reshape(C, C); at += C * C + C
    at += 2 * C + F * C + F + C * F + C  # ln_2, c_fc, mlp c_proj
    ev = np.sort(np.abs(np.linalg.eigvals(proj @ qkv[2 * C:])))[::-1][:4]
    assert np.allclose(found[layer][:4], ev, rtol=1e-10, atol=0), (layer, found[layer][:4], ev)
last = h5py.File("export.h5", "r")["diagnostics/val_loss"][-1]
for name in ("from-st.h5", "from-h5.h5"):
    first = h5py.File(name, "r")["diagnostics/val_loss"][0]
    assert abs(first - last) <= 1e-12 * last, (name, first, last)
print(f"export: {len(header)} GPT-2 tensors; spectra equal numpy's; both starts at validation loss {last:.12f}")
PY
expect_error 2 "model.init_file 'export.h5': dataset 'train/final_parameters' has shape" train "$text" "${double[@]}" \
  --model.channels=32 --model.init_file=export.h5 --run.output=bad.h5
expect_error 2 "model.init_file 'export.safetensors': tensor 'wte.weight' has shape \[[0-9]+, 16\], this deck's model needs \[[0-9]+, 32\]" \
  train "$text" "${double[@]}" --model.channels=32 --model.init_file=export.safetensors --run.output=bad.h5
expect_error 2 "model.init_file 'export.safetensors': .*no tensor 'h.2.ln_1.weight'" train "$text" "${double[@]}" \
  --model.layers=3 --model.init_file=export.safetensors --run.output=bad.h5
# Input errors.
expect_error 2 "must be a multiple of train.eval_every" train "$text" --train.steps=12 --train.eval_every=5 --run.output=bad.h5
expect_error 2 "train.text_file .nothing.txt. cannot be opened" train "$text" --train.text_file=nothing.txt --run.output=bad.h5
expect_error 2 "must be a multiple of model.heads" train "$text" --model.channels=30 --run.output=bad.h5
expect_error 2 "b_Q|query_mu" train "$text" --bias.query_mu=1,2,3 --run.output=bad.h5
echo "train: all checks passed"
