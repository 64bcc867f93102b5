# Produces a spectrum run file for the postprocess tests (CTest fixture "spectrumrun") with the real code:
# input/spectrum.ini (4 layers, complex leading pair, top 8) at 2 ranks, and plots it.
source "$(dirname "$0")/common.sh"
run 2 spectrum "$SRC/input/spectrum.ini" --run.output=spectrum.h5 > log.txt || fail "$(cat log.txt)"
[ "$(status_of spectrum.h5)" = complete ] || fail "spectrum.h5 not complete"
"$PYTHON" "$SRC/postprocess/spectrum.py" spectrum.h5 -o spectrum.png > /dev/null
[ -s spectrum.png ] || fail "no PNG written"
