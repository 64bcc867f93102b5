#!/usr/bin/env bash
# postprocess/bench_markov.py at test size: tokdyn bench --bench.kernel=markov on 1, 2 and 3 ranks, the NumPy
# count form and (where PyTorch is installed) the two PyTorch forms agree on loss and |grad| (1e-10), on the
# generated Markov text and on a small UTF-8 text with non-ASCII characters (d = its distinct characters);
# a missing binary is one error line and exit status 2.
source "$(dirname "$0")/common.sh"
B="$SRC/postprocess/bench_markov.py"

# check JSON RANKS [TEXT]: every implementation that ran agrees, tokdyn ran on each of RANKS, numpy counts ran,
# both torch rows ran when $PYTHON has torch; with TEXT, d = its number of distinct characters.
check() {
  "$PYTHON" - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ranks = [int(p) for p in sys.argv[2].split(",")]
names = [(x["implementation"], x["ranks"]) for x in r["results"]]
expected = [("tokdyn", p) for p in ranks] + [("numpy counts", None)]
try:
    import torch  # noqa: F401
    expected += [("torch counts", None), ("torch positions", None)]
except ImportError:
    pass
assert names == expected, (names, expected)
for x in r["results"]:
    assert x["rel_loss"] < 1e-10 and x["rel_grad"] < 1e-10 and x["agree"], x
    assert x["seconds"] > 0 and x["N"] == r["N"] and x["d"] == r["d"], x
assert r["agree"] is True
if len(sys.argv) > 3:
    d = len(set(open(sys.argv[3], encoding="utf-8").read()))
    assert r["d"] == d, (r["d"], d)
print(f"ok: {sys.argv[1]}: N = {r['N']}, d = {r['d']}: " +
      ", ".join(f"{x['implementation']} {max(x['rel_loss'], x['rel_grad']):.1e}" for x in r["results"]))
PY
}

"$PYTHON" "$B" --windows 3000 --s 16 --m 8 --ranks 1,2 --repeats 1 --tokdyn "$TOKDYN" --mpiexec "$MPIEXEC" \
  --json bench.json > bench.txt 2>&1 || fail "generated text: $(cat bench.txt)"
grep -q "^DISAGREE" bench.txt && fail "generated text: $(cat bench.txt)"
check bench.json 1,2 || fail "generated text: $(cat bench.txt)"

# A UTF-8 text with 2- and 3-byte characters (é, →, ∑, ü).
"$PYTHON" - <<'PY'
import random
rng = random.Random(7)
words = ["café", "→", "naïve", "über", "∑x", "the", "tokens", "flow", "é", "attention", "a", "b"]
text = ""
while len(text) < 2000:
    text += rng.choice(words) + rng.choice([" ", " ", "\n", ", "])
open("text.txt", "w", encoding="utf-8").write(text[:2000])
PY
"$PYTHON" "$B" --text text.txt --s 16 --m 8 --ranks 1,3 --repeats 1 --tokdyn "$TOKDYN" --mpiexec "$MPIEXEC" \
  --json text.json > text.log 2>&1 || fail "UTF-8 text: $(cat text.log)"
check text.json 1,3 text.txt || fail "UTF-8 text: $(cat text.log)"

# A missing binary: exit status 2, one line on stderr.
expect_script_error "^bench_markov.py: error: .*nonexistent" "$B" --windows 100 --tokdyn /nonexistent --mpiexec "$MPIEXEC"
echo "bench_markov: all checks passed"
