# NaN or Inf in what a run reads (model weights of a safetensors or HDF5 file, token files, attention weights)
# stops every rank at load with exit code 2 and one line naming the file, the tensor and the first bad entry,
# whichever rank read it and whichever solver follows; so do weights whose layer matrix overflows. Every
# command runs under `timeout 60`: a rank left waiting in a collective (a hang) fails the test instead of
# blocking it.
source "$(dirname "$0")/common.sh"
printf '#!/bin/sh\nexec timeout 60 %s "$@"\n' "$(command -v "$MPIEXEC")" > mpiexec-timeout
chmod +x mpiexec-timeout
MPIEXEC="$PWD/mpiexec-timeout"

"$PYTHON" - <<'PY'
import json, struct
import h5py
import numpy as np
from safetensors_file import write  # tests/cli/safetensors_file.py

d, layers, vocab = 12, 2, 20
rng = np.random.default_rng(11)


def gpt2(scale=1.0):
    t = {}
    for l in range(layers):
        t[f"h.{l}.attn.c_attn.weight"] = scale * rng.standard_normal((d, 3 * d)) / np.sqrt(d)
        t[f"h.{l}.attn.c_proj.weight"] = scale * rng.standard_normal((d, d)) / np.sqrt(d)
    t["wte.weight"] = rng.standard_normal((vocab, d))
    return t

good = gpt2()
write("good.safetensors", good.items())
# Layer 1's c_proj [in, out] at row 4, column 9: O = c_proj^T, so row 9 of O, read by the rank holding it.
bad = {k: v.copy() for k, v in good.items()}
bad["h.1.attn.c_proj.weight"][4, 9] = np.nan
write("nan.safetensors", bad.items())
emb = {k: v.copy() for k, v in good.items()}
emb["wte.weight"][17, 2] = np.inf
write("nan-embedding.safetensors", emb.items())
# Finite weights whose layer matrix F = O V overflows (entries ~1e320).
write("huge.safetensors", gpt2(1e160).items(), dtype="F64")

x = rng.standard_normal((16, d))
x[5, 3] = np.nan
with h5py.File("tokens12.h5", "w") as f:
    f["X"] = x
y = rng.standard_normal((16, 4))
y[9, 1] = np.inf
with h5py.File("tokens4.h5", "w") as f:
    f["X"] = y
q = np.eye(4)
q[1, 2] = np.nan
with h5py.File("attention.h5", "w") as f:
    f["Q"], f["K"], f["V"] = q, np.eye(4), np.eye(4)
PY

# tokdyn's HDF5 layout of the good model, then a copy with NaN in layer 1's V at row 5, column 3.
run 2 weights --weights.format=gpt2 --weights.file=good.safetensors --weights.heads=3 --convert.output=good.h5 > /dev/null
cp good.h5 nan.h5
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('nan.h5', 'r+') as f:
    f['weights/value'][1, 5, 3] = np.nan
"

quiet=(--run.progress_interval=0 --spectrum.nev=4)
gpt2=(--weights.format=gpt2 --weights.heads=3)
# The good file runs with both solvers: the NaN is the only difference below.
for solver in lapack krylovschur; do
  run 2 spectrum "${gpt2[@]}" --weights.file=good.safetensors --spectrum.solver=$solver "${quiet[@]}" \
    --run.output="good-$solver.h5" > /dev/null || fail "spectrum on good.safetensors ($solver)"
done

# spectrum: both solvers (and Krylov-Schur's dense operator), 2 and 3 ranks, safetensors and HDF5.
nan_tensor="tokdyn: error: safetensors 'nan.safetensors': tensor 'h.1.attn.c_proj.weight' holds NaN or Inf \(first at row 4, column 9\)$"
nan_dataset="tokdyn: error: weights file 'nan.h5': dataset /weights/value holds NaN or Inf \(first at layer 1, row 5, column 3\)$"
for np in 2 3; do
  for solver in lapack krylovschur; do
    expect_error $np "$nan_tensor" spectrum "${gpt2[@]}" --weights.file=nan.safetensors --spectrum.solver=$solver \
      "${quiet[@]}" --run.output="s-$np-$solver.h5"
    expect_error $np "$nan_dataset" spectrum --weights.format=hdf5 --weights.file=nan.h5 --spectrum.solver=$solver \
      "${quiet[@]}" --run.output="h-$np-$solver.h5"
  done
  expect_error $np "$nan_tensor" spectrum "${gpt2[@]}" --weights.file=nan.safetensors --spectrum.solver=krylovschur \
    --spectrum.operator=dense "${quiet[@]}" --run.output="s-$np-dense.h5"
done

# tokdyn weights: the conversion stops on every rank and leaves no output behind.
for np in 2 3; do
  expect_error $np "$nan_tensor" weights "${gpt2[@]}" --weights.file=nan.safetensors --convert.output=w.h5
  expect_error $np "tokdyn: error: safetensors 'nan-embedding.safetensors': tensor 'wte.weight' holds NaN or Inf \(first at row 17, column 2\)$" \
    weights "${gpt2[@]}" --weights.file=nan-embedding.safetensors --convert.output=w.h5
  expect_error $np "$nan_dataset" weights --weights.format=hdf5 --weights.file=nan.h5 --convert.output=w.h5
  [ ! -e w.h5 ] && [ ! -e w.h5.part ] || fail "a refused conversion left w.h5 or w.h5.part"
done

# tokdyn power: NaN weights, NaN in the embedding rows it starts from, NaN in its token file.
expect_error 2 "$nan_tensor" power "${gpt2[@]}" --weights.file=nan.safetensors --run.output=p.h5
expect_error 3 "$nan_dataset" power --weights.format=hdf5 --weights.file=nan.h5 --power.eigensolver=krylovschur \
  --run.output=p.h5
expect_error 3 "tensor 'wte.weight' holds NaN or Inf \(first at row 17, column 2\)" power "${gpt2[@]}" \
  --weights.file=nan-embedding.safetensors --power.tokens=embedding --power.token_ids=1,2,3,17 --run.output=p.h5
expect_error 2 "tokdyn: error: token file 'tokens12.h5': row 5 is zero or holds NaN/Inf" power "${gpt2[@]}" \
  --weights.file=good.safetensors --power.tokens=file --power.token_file=tokens12.h5 --run.output=p.h5

# transformer: a token file and an attention weights file with NaN or Inf.
expect_error 2 "tokdyn: error: token file 'tokens4.h5': row 9 is zero or holds NaN/Inf" transformer --model.N=16 \
  --model.L=3 --tokens.init=file --tokens.file=tokens4.h5 --run.output=t.h5
expect_error 3 "tokdyn: error: attention weights file 'attention.h5': dataset 'Q' holds NaN or Inf \(first at row 1, column 2\)" \
  transformer --model.N=16 --model.L=3 --attention.query=file --attention.weights_file=attention.h5 --run.output=t.h5

# Finite weights, overflowing layer matrix: LAPACK (on rank 0 alone) and Krylov-Schur (on every rank) stop
# every rank, as does the dense eigen-solve of tokdyn power.
overflow="tokdyn: error: (spectrum.solver = lapack: the layer matrix holds NaN or Inf|the layer matrix overflows double precision)"
for np in 2 3; do
  for solver in lapack krylovschur; do
    expect_error $np "$overflow" spectrum "${gpt2[@]}" --weights.file=huge.safetensors --spectrum.solver=$solver \
      "${quiet[@]}" --run.output="o-$np-$solver.h5"
  done
done
expect_error 2 "the layer matrix holds NaN or Inf" power "${gpt2[@]}" --weights.file=huge.safetensors --run.output=p.h5

# converge (tokens): the MMD's beta limit is said before any work, not by the ranks that own a level (with
# 3 ranks and 2 levels, the third used to wait for them in a sum).
expect_error 3 "converge.study = tokens: the MMD of the kernel e\^\{beta <x, y>\} needs attention.beta in \[0, 700\]" \
  converge "$SRC/input/converge-tokens.ini" --attention.beta=705 --converge.levels=2 --converge.replicas=1 \
  --converge.N0=8 --meanfield.points=64 --model.L=2 --run.output=c.h5
echo "nan_input: all cases passed"
