#!/usr/bin/env bash
# postprocess/bench_compare.py at test size: one softmax attention layer in tokdyn (bench and transformer),
# NumPy and (where PyTorch is installed) PyTorch on 1 and 2 ranks/threads; the layer NumPy and PyTorch compute
# from tokdyn's layer-0 snapshot equals tokdyn's layer 1 to 1e-12, and a tokdyn whose layer differs (beta
# 1.001) is refused; a failing tokdyn is named by its own error line; a missing binary is one error line, exit 2.
source "$(dirname "$0")/common.sh"
B="$SRC/postprocess/bench_compare.py"
for ranks in 1 2; do
  "$PYTHON" "$B" --N 256,512 --layers 2 --repeats 1 --ranks "$ranks" --tokdyn "$TOKDYN" --mpiexec "$MPIEXEC" \
    --json "bench-$ranks.json" > "bench-$ranks.txt" 2>&1 || fail "bench_compare on $ranks ranks: $(cat "bench-$ranks.txt")"
  "$PYTHON" - "bench-$ranks.json" "$ranks" <<'PY' || fail "bench_compare output on $ranks ranks: $(cat "bench-$ranks.txt")"
import json, math, sys
r = json.load(open(sys.argv[1]))
ranks = int(sys.argv[2])
try:
    import torch  # noqa: F401
    has_torch = True
except ImportError:
    has_torch = False
assert (r["ranks"], r["threads"], r["d"], r["layers"]) == (ranks, ranks, 16, 2), r
assert [x["N"] for x in r["rows"]] == [256, 512], r["rows"]
assert r["versions"]["numpy"] and r["versions"]["tokdyn"], r["versions"]
assert (r["versions"]["pytorch"] is not None) == has_torch, r["versions"]


def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


for row in r["rows"]:
    N = row["N"]
    for name in ("tokdyn_bench", "tokdyn_transformer", "numpy") + (("pytorch",) if has_torch else ()):
        assert positive(row[name]["pairs_per_s"]), (N, name, row[name])
    assert (row["pytorch"] is not None) == has_torch, row
    t = row["tokdyn_transformer"]
    assert abs(t["seconds_per_layer"] * t["pairs_per_s"] - N * N) <= 1e-9 * N * N, t
    assert t["layers"] == 2 and t["diagnostics_attributes"]["beta"] == 1.0, t
    for name in ("tokdyn_bench", "tokdyn_transformer"):
        assert abs(row[name]["over_numpy"] * row["numpy"]["pairs_per_s"] - row[name]["pairs_per_s"]) \
            <= 1e-9 * row[name]["pairs_per_s"], row
a = r["agreement"]
expected = {"numpy_tokdyn"} | ({"pytorch_tokdyn", "numpy_pytorch"} if has_torch else set())
assert a["N"] == 256 and a["layers"] == 1 and a["dt"] == 1.0 and a["agree"] is True, a
assert set(a["max_abs_diff"]) == expected, a
assert all(0 <= v <= 1e-12 for v in a["max_abs_diff"].values()), a
assert a["max_step"] > 1e-3, a  # the layer moved the tokens: the comparison is not of two copies of X_0
lines = r["markdown"].splitlines()
assert len(lines) == 4 and lines[0].startswith("| N | tokdyn bench | tokdyn transformer | NumPy | PyTorch"), lines
assert lines[2].startswith("| 256 |") and lines[3].startswith("| 512 |"), lines
print(f"ok ({ranks} ranks):", ", ".join(f"{k} {v:.1e}" for k, v in a["max_abs_diff"].items()), "|",
      "; ".join(f"N {x['N']}: bench {x['tokdyn_bench']['pairs_per_s']:.3g}, transformer "
                f"{x['tokdyn_transformer']['pairs_per_s']:.3g}, numpy {x['numpy']['pairs_per_s']:.3g} pairs/s"
                for x in r["rows"]))
PY
  grep -q '^| 512 |' "bench-$ranks.txt" || fail "no Markdown table on stdout: $(cat "bench-$ranks.txt")"
done

# A tokdyn whose transformer layer is not the documented one (beta 1.001 appended to its command line: the
# last value of a key wins) fails the agreement check; one that fails names its own error, not mpiexec's.
wrapper() {
  printf '#!/usr/bin/env bash\nif [ "$1" = transformer ]; then exec %q "$@" %s; fi\nexec %q "$@"\n' \
    "$TOKDYN" "$1" "$TOKDYN" > "$2"
  chmod +x "$2"
}
wrapper --attention.beta=1.001 tokdyn-beta
expect_script_error "^bench_compare.py: error: the layer at N = 64 disagrees: max \|difference\| of X_1 NumPy - tokdyn [0-9.e-]+" \
  "$B" --N 64 --tokdyn ./tokdyn-beta --mpiexec "$MPIEXEC"
wrapper --attention.beta=1000 tokdyn-fails
expect_script_error "^bench_compare.py: error: tokdyn transformer \(agreement check\) on 2 ranks \(./tokdyn-fails\) exited with status 2: tokdyn: error: deck key 'attention.beta' = '1000': out of range" \
  "$B" --N 64 --tokdyn ./tokdyn-fails --mpiexec "$MPIEXEC"
expect_script_error "^bench_compare.py: error: no executable tokdyn at './nonexistent'" "$B" --N 64 --tokdyn ./nonexistent --mpiexec "$MPIEXEC"
expect_script_error "^bench_compare.py: error: override '--model.N=3': only \[run\], \[diagnostics\], \[tokens\] keys" \
  "$B" --N 64 --model.N=3 --tokdyn "$TOKDYN" --mpiexec "$MPIEXEC"
echo "bench_compare: all checks passed"
