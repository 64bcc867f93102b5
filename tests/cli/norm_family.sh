# model.norm: post, pre, peri and ngpt against NumPy layer by layer (tests/cli/norm_reference.py), attention
# only; with the random MLP, the diagnostics of the directions; attention.heads and attention.causal (post and
# pre) against the same reference; bad alpha lists and head counts are refused.
source "$(dirname "$0")/common.sh"
deck=(transformer "$SRC/input/default.ini" --model.N=24 --model.d=3 --model.L=6 --model.T=3
      --attention.enabled=true --attention.beta=1.5 --diagnostics.every=1 --diagnostics.snapshot_every=1)
for norm in post pre peri ngpt; do
  run 2 "${deck[@]}" --mlp.enabled=false --model.norm=$norm --model.ngpt_alpha=0.5,1,2 --run.output=$norm.h5 > /dev/null
  "$PYTHON" "$SRC/tests/cli/norm_reference.py" $norm.h5 $norm 1.5 1 0.5,1,2 || fail "model.norm = $norm: not NumPy's"
  run 2 "${deck[@]}" --model.norm=$norm --run.output=$norm-mlp.h5 > /dev/null
  "$PYTHON" "$SRC/tests/cli/norm_reference.py" $norm-mlp.h5 $norm 1.5 1 1 --mlp || fail "model.norm = $norm with MLP"
done
# pre and peri leave the sphere; post and ngpt stay on it (the reference prints the largest ||x| - 1|).
layout=(--model.d=6 --mlp.enabled=false --attention.heads=3 --attention.causal=true)
for norm in post pre; do
  run 2 "${deck[@]}" "${layout[@]}" --model.norm=$norm --run.output=$norm-heads.h5 > /dev/null
  "$PYTHON" "$SRC/tests/cli/norm_reference.py" $norm-heads.h5 $norm 1.5 1 1 --heads 3 --causal ||
    fail "model.norm = $norm, 3 causal heads: not NumPy's"
done
expect_error 1 "attention.heads.*does not divide model.d = 3" "${deck[@]}" --attention.heads=2 --run.output=bad.h5
expect_error 1 "fourier has no causal mask" "${deck[@]}" --model.d=2 --attention.style=fourier \
  --attention.causal=true --run.output=bad.h5
expect_error 1 "model.ngpt_alpha.*one value or d = 3 values, not 2" "${deck[@]}" --model.norm=ngpt \
  --model.ngpt_alpha=1,2 --run.output=bad.h5
echo "norm_family: all checks passed"
