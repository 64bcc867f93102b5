# postprocess/report.py renders in a browser: run files of eleven commands made by the real code at small size
# (seconds each) and a file that is not one, the report of their directory, then headless Chromium's DOM and
# screenshot of the page (tests/postprocess/check_report_page.py: every figure decoded, the sections, every
# figure's smallest text readable at the width the page shows it, nothing cut off at a figure's edge, a
# screenshot that is not blank). TOKDYN_FIGURE_CHECK=error (CTest): report.py fails on an empty panel, a
# legend over its curves or a single tick on a log axis. Skipped (exit 77) only where no chromium is installed:
# jobscripts/install-deps-debian.sh installs it.
source "$(dirname "$0")/common.sh"
if ! command -v chromium > /dev/null; then
  echo "SKIP: no chromium on PATH (Debian: apt-get install chromium; jobscripts/install-deps-debian.sh installs it)"
  exit 77
fi
I="$SRC/input"
mkdir runs
# produce NAME COMMAND DECK [KEY=VALUE...]: runs/NAME.h5 at 2 ranks.
produce() {
  local name=$1; shift
  run 2 "$@" --run.progress_interval=1000 --run.output="runs/$name.h5" > "$name.log" 2>&1 || fail "$name: $(cat "$name.log")"
}
produce transformer transformer "$I/default.ini" --model.N=32 --model.L=20
produce sde sde "$I/sde.ini" --model.L=50
produce lyapunov lyapunov "$I/lyapunov.ini" --lyapunov.replicas=200 --model.L=100
produce meanfield meanfield "$I/meanfield-circle.ini" --model.L=4 --model.T=0.2 --meanfield.cells=64 \
  --diagnostics.snapshot_every=2
produce sync synchronize "$I/synchronization-bound.ini" --model.N=16 --model.L=100 --mlp.width=64 \
  --synchronize.replicas=8
produce converge converge "$I/converge-depth.ini" --converge.levels=3 --converge.replicas=6 --model.N=8 \
  --noise.features=64
produce spectrum spectrum "$I/spectrum.ini"
produce power power "$I/power-dominant.ini"
produce markov markov "$I/markov.ini" --flow.time=100 --flow.records=50
# One symmetric run: one seed (no band to promise) and no b_Q (the alignment figure leaves its panel out).
produce train train "$I/train.ini" --train.steps=20 --train.eval_every=5 --train.context=16 --model.channels=16 \
  --model.heads=2 --train.alignment_null=50
# A lens run of a train run kept outside runs/ (the train section keeps its one run).
run 2 train "$I/train.ini" --train.steps=20 --train.eval_every=5 --train.context=16 --model.channels=16 \
  --model.heads=2 --train.alignment_null=50 --train.parameters_every=2 --run.progress_interval=1000 \
  --run.output=lens-train.h5 > lens-train.log 2>&1 || fail "lens-train: $(cat lens-train.log)"
produce lens lens --lens.run=lens-train.h5
echo "not a run file" > runs/notes.h5
"$PYTHON" "$SRC/postprocess/report.py" runs -o report.html > report.log 2>&1 || fail "report.py: $(cat report.log)"
[ "$(cat report.log)" = report.html ] || fail "report.py printed: $(cat report.log)"
# A section per run file (the converge file's study included, the train runs one), notes.h5 among the files
# not used.
"$PYTHON" "$SRC/tests/postprocess/check_report_page.py" report.html --sections 11 --unused notes.h5 \
  --screenshot screenshot.png || fail "the page as Chromium renders it"
echo "ok: report.html ($(du -k report.html | cut -f1) kB) rendered by $(chromium --version 2>/dev/null)"
