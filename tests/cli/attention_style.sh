# An attention style added from outside src/ (tests/styles/dense_attention.cpp: softmax by plain loops over
# every token, registered with one line) works in every command that takes a style, and agrees with the
# built-in ring-pass softmax to round-off: transformer, sde, power (4 heads, causal or not), converge and the
# quadrature mean field (weighted points). TOKDYN_STYLES is tokdyn with the style linked in.
source "$(dirname "$0")/common.sh"
: "${TOKDYN_STYLES:?}"
styles() { "$MPIEXEC" -n 2 "$TOKDYN_STYLES" "$@" > /dev/null; }
# Two styles, one deck: the runs differ only in the order of the sums, so their datasets agree to 1e-9
# relative (what 10^2-10^3 steps make of 1e-16 differences in a contracting flow; measured below 1e-12).
both() {
  local key=$1 name=$2; shift 2
  styles "$@" "--$key=softmax" --run.output="$name-ring.h5"
  styles "$@" "--$key=test-dense-softmax" --run.output="$name-dense.h5"
  compare "$name-ring.h5" "$name-dense.h5" --tol 1e-9 || fail "$name: the test style and softmax disagree"
  echo "ok: $name"
}
# The help to a file first: `| grep -q` would stop reading at the match and, under pipefail, the writer's
# SIGPIPE failed this check about once in 50 runs.
"$TOKDYN_STYLES" transformer --help > help.txt 2>&1 || fail "--help: $(cat help.txt)"
grep -q "test-dense-softmax" help.txt || fail "the test style is not listed"
both attention.style transformer transformer "$SRC/input/default.ini" --model.L=200 --attention.enabled=true \
  --attention.query=gaussian --attention.key=gaussian --attention.value=gaussian --attention.beta=2
both attention.style sde sde "$SRC/input/sde.ini" --model.L=200
both power.attention power power "$SRC/input/power-random.ini" --synthetic.layers=6
both power.attention power-causal power "$SRC/input/power-random.ini" --synthetic.layers=6 --power.causal=true
both attention.style converge converge "$SRC/input/converge-depth.ini" --converge.levels=3 --converge.replicas=4
both attention.style meanfield meanfield "$SRC/input/meanfield-sphere.ini" --meanfield.points=256 --model.L=40
# The style is a deck value like any other: the plain binary does not know it.
expect_error 2 "unknown value 'test-dense-softmax'|'test-dense-softmax'" transformer "$SRC/input/default.ini" \
  --attention.style=test-dense-softmax --run.output=unknown.h5
echo "attention_style: all checks passed"
