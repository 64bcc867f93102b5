#!/usr/bin/env bash
# postprocess/bench_train.py at test size: tokdyn train on 1 and 2 ranks and (where PyTorch is installed) the
# same GPT in PyTorch, whose parameter count must equal tokdyn's, on 1 thread and as 2 data-parallel processes
# (torch.distributed, gloo), in two interleaved rounds (best kept, load recorded, per-core ratios against as
# many PyTorch threads and processes); a missing binary is one error line, exit 2.
source "$(dirname "$0")/common.sh"
B="$SRC/postprocess/bench_train.py"
tiny=(--model.channels=16 --model.heads=2 --train.context=16 --train.batch=4)
"$PYTHON" "$B" --steps 4 --repeats 2 --ranks 1,2 --threads 1 --processes 2 --tokdyn "$TOKDYN" --mpiexec "$MPIEXEC" --json bench.json "${tiny[@]}" \
  > bench.txt 2>&1 || fail "bench_train: $(cat bench.txt)"
"$PYTHON" - bench.json <<'PY' || fail "bench_train output: $(cat bench.txt)"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [(x["implementation"], x["ranks"], x["threads"]) for x in r["results"]]
expected = [("tokdyn", 1, None), ("tokdyn", 2, None)]
try:
    import torch  # noqa: F401
    expected.append(("pytorch", None, 1))
    if "pytorch_processes" not in r:  # torch.distributed with gloo is there
        expected.append(("pytorch-ddp", None, None))
except ImportError:
    pass
assert rows == expected, (rows, expected)
# C = 16, 2 layers, vocabulary V, context 16: V C + 16 C + 2 (12 C^2 + 13 C) + 2 C parameters.
C = 16
assert (r["parameters"] - 16 * C - 2 * (12 * C * C + 13 * C) - 2 * C) % C == 0
assert all(x["tokens_per_second"] > 0 for x in r["results"])
# Two interleaved rounds each, the best kept, with the load before it; per core; tokdyn on 1 rank against PyTorch on
# 1 thread (where PyTorch is installed), nothing against 2 ranks (no 2-thread row).
for x in r["results"]:
    assert len(x["rounds"]) == 2 and x["tokens_per_second"] == max(y["tokens_per_second"] for y in x["rounds"])
    assert x["load"] >= 0 and abs(x["per_core"] * x["cores"] - x["tokens_per_second"]) < 1e-9 * x["tokens_per_second"]
if len(rows) >= 3:
    assert abs(r["results"][0]["per_core_against_pytorch"] - r["results"][0]["per_core"] / r["results"][2]["per_core"]) < 1e-12
    assert r["results"][1]["per_core_against_pytorch"] is None
if len(rows) == 4:  # 2 ranks against 2 processes, 1 rank against none
    assert abs(r["results"][1]["per_core_against_pytorch_processes"] - r["results"][1]["per_core"] / r["results"][3]["per_core"]) < 1e-12
    assert r["results"][0]["per_core_against_pytorch_processes"] is None and r["results"][3]["cores"] == 2
print("ok:", r["parameters"], "parameters;", ", ".join(f"{a} {b or c}: {x['tokens_per_second']:.3g} tokens/s"
                                                      for (a, b, c), x in zip(rows, r["results"])))
PY
expect_script_error "^bench_train.py: error: no executable tokdyn at ./nonexistent" "$B" --steps 2 --tokdyn /nonexistent --mpiexec "$MPIEXEC"
echo "bench_train: all checks passed"
