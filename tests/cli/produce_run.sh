# Produces a run file from the default deck for the postprocess tests (CTest fixture), and plots it.
source "$(dirname "$0")/common.sh"
run 2 transformer "$SRC/input/default.ini" --run.output=default.h5 > log.txt || fail "$(cat log.txt)"
[ "$(status_of default.h5)" = complete ] || fail "default.h5 not complete"
"$PYTHON" "$SRC/postprocess/plot_run.py" default.h5 -o default.png
[ -s default.png ] || fail "no PNG written"
