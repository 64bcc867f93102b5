# tokdyn weights: a GPT-2-shaped safetensors file (written here with numpy) converted to tokdyn's HDF5
# layout and checked against the file's own tensors, HDF5 -> HDF5 at another rank count, --force, and
# every kind of bad weights input stopping all ranks with one line naming the tensor, offset or key.
source "$(dirname "$0")/common.sh"

"$PYTHON" - <<'PY'
import json, struct
import numpy as np
from safetensors_file import write  # tests/cli/safetensors_file.py

d, layers, vocab = 12, 2, 20
rng = np.random.default_rng(5)


def gpt2(layer_names=range(layers), c_proj_shape=(d, d)):
    t = []
    for l in layer_names:
        t.append((f"h.{l}.attn.c_attn.weight", rng.standard_normal((d, 3 * d)) / d))
        t.append((f"h.{l}.attn.c_attn.bias", rng.standard_normal(3 * d)))
        shape = c_proj_shape if l == 1 else (d, d)
        t.append((f"h.{l}.attn.c_proj.weight", rng.standard_normal(shape) / d))
    t.append(("wte.weight", rng.standard_normal((vocab, d))))
    return t

good = gpt2()
write("gpt2.safetensors", good)
np.savez("gpt2.npz", **{name: a.astype(np.float32) for name, a in good})
write("gap.safetensors", gpt2(layer_names=[0, 2]))
write("shape.safetensors", gpt2(c_proj_shape=(d, 11)))
write("int.safetensors", good, dtypes={"h.1.attn.c_attn.weight": "I32"})
PY

# Conversion at 2 ranks: shape printed, datasets equal to the tensors in tokdyn's orientation
# (doc/science.md section 7.5).
run 2 weights --weights.format=gpt2 --weights.file=gpt2.safetensors --weights.heads=3 --convert.output=w.h5 > out.txt
cat out.txt
grep -q "d = 12, H = 3, d_h = 4, layers = 2, score scale = 0.5" out.txt || fail "shape line missing"
grep -q "embedding: 20 x 12" out.txt || fail "embedding line missing"
grep -q "wrote 'w.h5'" out.txt || fail "no 'wrote' line"
[ ! -e w.h5.part ] || fail "w.h5.part left behind"
"$PYTHON" - <<'PY'
import h5py, numpy as np
t = np.load("gpt2.npz")
d = 12
with h5py.File("w.h5", "r") as f:
    g = f["weights"]
    assert (g.attrs["d"], g.attrs["heads"], g.attrs["head_dim"], g.attrs["layers"], g.attrs["shared"]) == (12, 3, 4, 2, 0)
    assert g.attrs["score_scale"] == 0.5
    for l in range(2):
        c_attn, c_proj = t[f"h.{l}.attn.c_attn.weight"], t[f"h.{l}.attn.c_proj.weight"]
        assert np.array_equal(g["query"][l], c_attn[:, :d].T)
        assert np.array_equal(g["key"][l], c_attn[:, d:2 * d].T)
        assert np.array_equal(g["value"][l], c_attn[:, 2 * d:].T)
        assert np.array_equal(g["output"][l], c_proj.T)
        # F = O V = (W_v P)^T (doc/science.md section 7.5), float32 products summed in double.
        f_ref = (c_attn[:, 2 * d:].astype(float) @ c_proj.astype(float)).T
        assert np.allclose(g["output"][l] @ g["value"][l], f_ref, rtol=0, atol=1e-14)
    assert np.array_equal(g["embedding"][:], t["wte.weight"])
print("ok: w.h5 holds the GPT-2 tensors in tokdyn's orientation")
PY

# An existing output is kept without --force, replaced with it.
cp w.h5 w.orig
expect_error 2 "output 'w.h5' exists \(pass --force" weights --weights.format=gpt2 --weights.file=gpt2.safetensors \
  --weights.heads=3 --convert.output=w.h5
cmp w.h5 w.orig || fail "w.h5 was modified"
run 1 weights --weights.format=gpt2 --weights.file=gpt2.safetensors --weights.heads=3 --convert.output=w.h5 --force > /dev/null

# HDF5 -> HDF5 at 3 ranks: the same datasets.
run 3 weights --weights.format=hdf5 --weights.file=w.h5 --convert.output=w2.h5 > out2.txt
grep -q "d = 12, H = 3, d_h = 4, layers = 2" out2.txt || fail "hdf5 shape line missing"
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("w.h5", "r") as a, h5py.File("w2.h5", "r") as b:
    for name in ("query", "key", "value", "output", "embedding"):
        assert np.array_equal(a["weights"][name][:], b["weights"][name][:]), name
print("ok: hdf5 -> hdf5 is the identity")
PY

# Bad inputs.
st=(weights --weights.format=gpt2 --weights.heads=3 --convert.output=bad.h5)
expect_error 2 "weights file 'none.safetensors' \(weights.file\) does not exist" "${st[@]}" --weights.file=none.safetensors
expect_error 2 "weights.format = gpt2 needs weights.file" "${st[@]}"
head -c 100 gpt2.safetensors > trunc-header.safetensors
expect_error 2 "safetensors 'trunc-header.safetensors': header length [0-9]+ \(bytes 0-7\) runs past the end of the file \(100 bytes\)" \
  "${st[@]}" --weights.file=trunc-header.safetensors
size=$(stat -c %s gpt2.safetensors)
head -c $((size - 8)) gpt2.safetensors > trunc-data.safetensors
expect_error 3 "safetensors 'trunc-data.safetensors': tensor 'wte.weight': data_offsets \[[0-9]+, [0-9]+\) end beyond the data section" \
  "${st[@]}" --weights.file=trunc-data.safetensors
expect_error 2 "tensor 'h.1.attn.c_proj.weight' has shape \[12, 11\], expected \[12, 12\] \(gpt2, d = 12\)" \
  "${st[@]}" --weights.file=shape.safetensors
expect_error 2 "tensor 'h.1.attn.c_attn.weight' is missing \(the file has tensors of layers up to 2\)" \
  "${st[@]}" --weights.file=gap.safetensors
expect_error 2 "tensor 'h.1.attn.c_attn.weight' has dtype I32, expected F64, F32, F16 or BF16" \
  "${st[@]}" --weights.file=int.safetensors
expect_error 2 "weights.heads = 5 does not divide the model width d = 12" "${st[@]}" --weights.file=gpt2.safetensors \
  --weights.heads=5
expect_error 2 "weights.heads = 0: safetensors files do not store the number of heads" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.heads=0
expect_error 2 "weights.layers = 3 but safetensors 'gpt2.safetensors' has 2 gpt2 layers" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.layers=3
expect_error 2 "no tensor 'model.h.0.attn.c_attn.weight' \(weights.prefix = 'model.'" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.prefix=model.
expect_error 2 "no tensor 'encoder.layer.0.attention.self.value.weight' nor 'bert.encoder" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.format=bert
expect_error 2 "unknown weight format 'gpt3' \(known: gpt2, bert, albert, gpt-neo, hdf5" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.format=gpt3
expect_error 2 "weights file 'gpt2.safetensors' is missing or not an HDF5 file" "${st[@]}" \
  --weights.file=gpt2.safetensors --weights.format=hdf5
expect_error 2 "weights.heads = 4 but weights file 'w.h5' stores heads = 3" "${st[@]}" --weights.file=w.h5 \
  --weights.format=hdf5 --weights.heads=4
expect_error 2 "deck key 'convert.output' is empty" "${st[@]}" --weights.file=gpt2.safetensors --convert.output=
[ ! -e bad.h5 ] && [ ! -e bad.h5.part ] || fail "a bad input left bad.h5 or bad.h5.part"

# tokdyn power on the model file: tokens from embedding rows, steering towards a token's embedding. The
# initial tokens are the normalised embedding rows; the same run from the converted HDF5 file is bitwise
# equal (F32 values convert to double exactly); steering all layers with c = 100 aligns every output with u.
power=(power --weights.format=gpt2 --weights.file=gpt2.safetensors --weights.heads=3 --power.tokens=embedding
       --power.token_ids=1,5,7,3,19 --run.snapshot_every=1)
run 2 "${power[@]}" --run.output=p-st.h5 > out.txt || fail "power on gpt2.safetensors: $(cat out.txt)"
run 3 "${power[@]/--weights.format=gpt2/--weights.format=hdf5}" --weights.file=w.h5 --run.output=p-h5.h5 > out.txt ||
  fail "power on w.h5: $(cat out.txt)"
run 2 "${power[@]}" --steer.target=token:4 --steer.strengths=0,100 --steer.layers=all --run.output=p-steer.h5 \
  > out.txt || fail "power steering: $(cat out.txt)"
"$PYTHON" - <<'PY'
import h5py, numpy as np
e = np.load("gpt2.npz")["wte.weight"].astype(np.float64)
with h5py.File("p-st.h5", "r") as a, h5py.File("p-h5.h5", "r") as b:
    x0 = a["tokens/X"][0]
    want = e[[1, 5, 7, 3, 19]]
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert np.abs(x0 - want).max() < 1e-15, np.abs(x0 - want).max()
    xa, xb = a["tokens/X"][...], b["tokens/X"][...]
    assert xa.shape == (a["power/layer"].shape[0] + 1, 5, 12), xa.shape
    # 2 ranks against 3 ranks: round-off only.
    assert np.abs(xa - xb).max() < 1e-12, np.abs(xa - xb).max()
with h5py.File("p-steer.h5", "r") as f:
    s = f["steer"]
    c, amin = s["strength"][...], s["alignment_min"][...]
    assert list(c) == [0, 100], c
    assert amin[1] > 0.99, amin
    assert amin[0] < 0.99, amin
    print("power on model weights: start = embeddings, safetensors = hdf5, steering alignment", amin)
PY
echo "weights: all cases passed"
