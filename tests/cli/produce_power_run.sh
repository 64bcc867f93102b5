# Produces a power run file for the postprocess tests (CTest fixture "powerrun") with the real code: the
# steering deck at reduced size (its /power and /steer groups), and plots it.
source "$(dirname "$0")/common.sh"
run 2 power "$SRC/input/power-steer.ini" --weights.layers=20 --steer.strengths=0,2,20 --run.output=power.h5 \
  > log.txt || fail "$(cat log.txt)"
[ "$(status_of power.h5)" = complete ] || fail "power.h5 not complete"
"$PYTHON" "$SRC/postprocess/power.py" power.h5 -o power.png > /dev/null
[ -s power.png ] || fail "no PNG written"
