# Slurm integration of the convergence sweeps: jobscripts/sweep.sh submits the depth and the width array
# (one task per level and replica, tiny sizes) and the dependent fit job; the fit files and PNGs must appear.
source "$(dirname "$0")/common.sh"
export TOKDYN TOKDYN_SRC="$SRC"
bash "$SRC/jobscripts/local-slurm.sh" start

# wait_for JOBID...: until none of the jobs is known to Slurm any more (bounded).
wait_for() {
  local id
  for _ in $(seq 600); do
    local left=0
    for id in "$@"; do
      if squeue -h -j "$id" 2>/dev/null | grep -q .; then
        left=1
        if squeue -h -j "$id" -o %r 2>/dev/null | grep -q DependencyNeverSatisfied; then
          scancel "$id"
          fail "job $id can never start: a sweep task failed ($(cat "$scratch"/*/*.out 2>/dev/null | tail -n 20))"
        fi
      fi
    done
    [ "$left" = 0 ] && return 0
    sleep 1
  done
  fail "jobs $* did not finish in 600 s"
}

tiny=(--model.N=8 --noise.features=64 --converge.L0=4 --converge.m0=8 --model.L=8 --converge.reference_factor=8)
read -r _ depth_sweep _ depth_fit < <(bash "$SRC/jobscripts/sweep.sh" depth "$SRC/input/converge-depth.ini" depth 2 2 "${tiny[@]}")
read -r _ width_sweep _ width_fit < <(bash "$SRC/jobscripts/sweep.sh" width "$SRC/input/converge-width.ini" width 2 2 "${tiny[@]}")
echo "depth: sweep $depth_sweep fit $depth_fit; width: sweep $width_sweep fit $width_fit"
wait_for "$depth_sweep" "$depth_fit" "$width_sweep" "$width_fit"
for study in depth width; do
  n=$(ls "$study"/"$study"-*.h5 | wc -l)
  [ "$n" = 4 ] || fail "$study sweep wrote $n result files, expected 4"
  for f in "$study"/"$study"-*.h5; do [ "$(status_of "$f")" = complete ] || fail "$f not complete"; done
  for ext in json csv png; do
    [ -s "$study/convergence-$study.$ext" ] || fail "$study: no convergence-$study.$ext ($(cat "$study"/fit-*.out))"
  done
  "$PYTHON" -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[1], d['metric'], 'slope', d['slope'], d['slope_ci'])" \
    "$study/convergence-$study.json"
done
echo "slurm sweeps: depth and width arrays and their dependent fits complete"
