# Slurm integration of the convergence sweeps: jobscripts/sweep.sh submits the depth and the width array
# (one task per level and replica, tiny sizes) and the dependent fit job; the fit files and PNGs must appear.
# The same for the tokdyn markov sweeps over eps and delta (jobscripts/markov-sweep.sh), for a tokdyn
# train sweep over seeds, optimizers and symmetry settings with its summary (jobscripts/train-sweep.sh) and
# for a tokdyn phase diagram in blocks of betas with its merge (jobscripts/phase-sweep.sh) and for the complexity
# test of tokdyn mlmc, one task per eps, with its figure (jobscripts/mlmc-sweep.sh).
# The tokens array (propagation of chaos, two ranks a task) joins them once the binary has the tokens
# study (`tokdyn converge --help` lists converge.N0) and the deck input/converge-tokens.ini exists.
# Every fit and summary job runs postprocess/ with the interpreter TOKDYN_PYTHON names (a wrapper that
# leaves a mark); sbatch options before a `--` reach the jobs of sweep.sh (job name and comment, seen in
# squeue and in `sacct -c`), markov-sweep.sh (job name and time limit, in `sacct -c`) and grid-sweep.sh
# (held, then cancelled: its 90 tasks would take minutes).
source "$(dirname "$0")/common.sh"
unset TOKDYN_LAUNCH TOKDYN_SETUP
cat > python-wrapper <<SH
#!/bin/sh
# TOKDYN_PYTHON of the test: leaves the script it was given, then runs the real interpreter.
echo "\$1" >> "$scratch/python-used"
exec "$PYTHON" "\$@"
SH
chmod +x python-wrapper
export TOKDYN TOKDYN_SRC="$SRC" TOKDYN_PYTHON="$scratch/python-wrapper"
bash "$SRC/jobscripts/local-slurm.sh" start
# A failed check leaves no job behind to hold the node (finished jobs ignore scancel).
jobs=() grid_ids=()
tag=$$-$(date +%s)  # job names of this run: the completion log keeps every earlier run's
trap 'scancel ${jobs[@]+"${jobs[@]}"} ${grid_ids[@]+"${grid_ids[@]}"} 2>/dev/null || true' EXIT

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
# The depth sweep's sbatch options (before --) name its jobs and comment them.
name=tokdyn-depth-$tag
read -r _ depth_sweep _ depth_fit < <(bash "$SRC/jobscripts/sweep.sh" depth "$SRC/input/converge-depth.ini" depth 2 2 \
  --job-name="$name" --comment="sweep-$tag" -- "${tiny[@]}")
jobs+=("$depth_sweep" "$depth_fit")
for id in "$depth_sweep" "$depth_fit"; do
  seen=$(squeue -h -j "$id" -o '%j %k' | sort -u)
  [ "$seen" = "$name sweep-$tag" ] || fail "sweep.sh: job $id has name and comment '$seen', not '$name sweep-$tag'"
done
read -r _ width_sweep _ width_fit < <(bash "$SRC/jobscripts/sweep.sh" width "$SRC/input/converge-width.ini" width 2 2 "${tiny[@]}")
echo "depth: sweep $depth_sweep fit $depth_fit; width: sweep $width_sweep fit $width_fit"
studies=(depth width)
jobs+=("$width_sweep" "$width_fit")
# tokens: N = 16, 32 on S^1 against a 256-point quadrature, 4 layers; sweep.sh passes the levels and
# replicas (2 x 2) and sweep-tokens.sbatch the study.
tiny_tokens=(--converge.N0=16 --model.d=2 --model.L=4 --model.T=0.2 --meanfield.solver=quadrature
             --meanfield.points=256 --attention.style=fourier --noise.field=fourier)
# converge.N0: the key N0 in the [converge] part of the help (awk reads it all: no SIGPIPE under pipefail).
if ! { "$TOKDYN" converge --help 2>/dev/null || true; } |
     awk '/^\[/ { part = $1 } part == "[converge]" && $1 == "N0" { found = 1 } END { exit !found }'; then
  echo "skip tokens sweep: '$TOKDYN converge --help' lists no converge.N0 (no tokens study in this binary)"
elif [ ! -f "$SRC/input/converge-tokens.ini" ]; then
  echo "skip tokens sweep: no deck $SRC/input/converge-tokens.ini"
else
  read -r _ tokens_sweep _ tokens_fit < <(bash "$SRC/jobscripts/sweep.sh" tokens "$SRC/input/converge-tokens.ini" tokens 2 2 \
    "${tiny_tokens[@]}")
  echo "tokens: sweep $tokens_sweep fit $tokens_fit"
  studies+=(tokens)
  jobs+=("$tokens_sweep" "$tokens_fit")
fi
# tokdyn markov: an eps sweep (3 values) and a delta sweep (3 values) of the stage-IV family at s = 8, each
# an array with its dependent fit (jobscripts/markov-sweep.sh; the sbatch options before -- reach sbatch).
tiny_markov=(--markov.s=8 --flow.time=800 --flow.records=400)
read -r _ eps_sweep _ eps_fit < <(bash "$SRC/jobscripts/markov-sweep.sh" eps "$SRC/input/markov-sweep.ini" markov-eps \
  1e-3,1e-4,1e-5 --time=00:20:00 --job-name="tokdyn-eps-$tag" -- "${tiny_markov[@]}")
read -r _ delta_sweep _ delta_fit < <(bash "$SRC/jobscripts/markov-sweep.sh" delta "$SRC/input/markov-sweep.ini"   markov-delta 0,0.025,0.05 "${tiny_markov[@]}")
echo "markov: eps sweep $eps_sweep fit $eps_fit; delta sweep $delta_sweep fit $delta_fit"
jobs+=("$eps_sweep" "$eps_fit" "$delta_sweep" "$delta_fit")
# tokdyn train: 2 seeds x {ecd, adamw} x {symmetric, bq}, 8 array tasks of a tiny GPT, and the summary job.
tiny_train=(--train.steps=10 --train.eval_every=5 --train.context=16 --model.channels=16 --model.heads=2
            --train.alignment_null=20)
read -r _ train_sweep _ train_summary < <(bash "$SRC/jobscripts/train-sweep.sh" "$SRC/input/train.ini" train 1,2 \
  ecd,adamw symmetric,bq --time=00:20:00 -- "${tiny_train[@]}")
echo "train: sweep $train_sweep summary $train_summary"
jobs+=("$train_sweep" "$train_summary")
# tokdyn phase: 3 betas in 2 blocks (an array of 2) and the merge job (jobscripts/phase-sweep.sh).
read -r _ phase_sweep _ phase_merge < <(bash "$SRC/jobscripts/phase-sweep.sh" "$SRC/input/phase.ini" phase 2 \
  --model.N=6 --phase.systems=3 --phase.betas=3 --phase.records=2 --model.T=0.5)
echo "phase: sweep $phase_sweep merge $phase_merge"
jobs+=("$phase_sweep" "$phase_merge")
# tokdyn mlmc: 2 eps (an array of 2, each the multilevel run and plain MC at its finest depth) and the figure job.
read -r _ mlmc_sweep _ mlmc_figure < <(bash "$SRC/jobscripts/mlmc-sweep.sh" "$SRC/input/mlmc.ini" mlmc 2e-2,1e-2 \
  --mlmc.initial_samples=20 --run.progress_interval=1000)
echo "mlmc: sweep $mlmc_sweep figure $mlmc_figure"
jobs+=("$mlmc_sweep" "$mlmc_figure")
# grid-sweep.sh: one array a grid deck with the sbatch options (held, so nothing runs) and the overrides.
mapfile -t grid < <(bash "$SRC/jobscripts/grid-sweep.sh" grid --hold --job-name="tokdyn-grid-$tag" -- --model.L=3)
grid_ids=(${grid[@]+"${grid[@]##* }"})
[ "${#grid_ids[@]}" = "$(ls "$SRC"/input/grid-*.ini | wc -l)" ] || fail "grid-sweep.sh submitted: ${grid[*]}"
for id in "${grid_ids[@]}"; do
  job=$(scontrol show job "$id")
  grep -qw "JobName=tokdyn-grid-$tag" <<<"$job" && grep -q "Reason=JobHeldUser" <<<"$job" \
    && grep -q "Command=$SRC/jobscripts/grid.sbatch .*/grid-.*\.ini .*/grid --model.L=3$" <<<"$job" \
    || fail "grid-sweep.sh: job $id lacks the sbatch options or the overrides: $job"
done
scancel "${grid_ids[@]}"
echo "grid-sweep.sh: ${#grid_ids[@]} held arrays with the job name and the overrides (cancelled)"
wait_for "${jobs[@]}"
# Every fit and summary ran under TOKDYN_PYTHON.
for script in convergence.py focus_dilution.py training.py phase.py mlmc.py; do
  grep -qx "$SRC/postprocess/$script" python-used 2>/dev/null || fail "no $script under TOKDYN_PYTHON: $(cat python-used 2>/dev/null)"
done
# The completion log (sacct -c; it filters by -j but not by name or time, and warns about the array fields
# of its own log, hence 2>/dev/null): the depth sweep's 4 tasks and its fit under the name passed to
# sbatch, COMPLETED, with their elapsed times; the eps sweep's 3 tasks and fit with its --time=00:20:00
# (sacct -c prints minutes).
timings=$(sacct -c -n -P --format=JobID,JobName,Timelimit,Elapsed,State 2>/dev/null)
depth_done=$(grep -c "^[0-9]*|$name|[0-9]*|[0-9:-]*|COMPLETED$" <<<"$timings" || true)
[ "$depth_done" = 5 ] || fail "sacct -c: $depth_done COMPLETED jobs named $name, expected 5: $(grep "|$name|" <<<"$timings")"
grep "|$name|" <<<"$timings"
eps_done=$(grep -c "^[0-9]*|tokdyn-eps-$tag|20|[0-9:-]*|COMPLETED$" <<<"$timings" || true)
[ "$eps_done" = 4 ] || fail "sacct -c: $eps_done COMPLETED eps jobs with time limit 20, expected 4: $(grep "|tokdyn-eps-$tag|" <<<"$timings")"
for f in train/train-{ecd,adamw}-{symmetric,bq}-s{1,2}.h5; do
  [ "$(status_of "$f")" = complete ] || fail "$f not complete"
done
for out in training.json training.csv training-losses.png training-charges.png training-alignment.png; do
  [ -s "train/$out" ] || fail "train summary: no $out ($(cat train/summary-*.out))"
done
"$PYTHON" -c "
import json, sys
d = json.load(open('train/training.json'))
assert d['runs'] == 8 and len(d['groups']) == 4 and all(g['seeds'] == [1, 2] for g in d['groups']), d
print('train summary:', [(g['optimizer'], g['symmetry'], round(g['final_val_loss_ema'], 4)) for g in d['groups']])" \
  || fail "train summary: $(cat train/training.json)"
# The phase blocks merged: one complete result of the 3 betas in grid order, and its figure.
[ "$(status_of phase/phase.h5)" = complete ] && [ -s phase/phase.png ] || fail "phase sweep: no merged result ($(cat phase/merge-*.out))"
"$PYTHON" -c "
import h5py, numpy as np
g = h5py.File('phase/phase.h5', 'r')['phase']
assert list(g['beta_index'][()]) == [0, 1, 2] and g['density'].shape == (3, 3), (g['beta_index'][()], g['density'].shape)" \
  || fail "phase sweep: the merged result"
# The mlmc sweep: both eps' runs and their plain Monte Carlo runs complete, and one figure of the four.
for f in mlmc/mlmc-eps{2e-2,1e-2}{,-mc}.h5; do [ "$(status_of "$f")" = complete ] || fail "$f not complete"; done
[ -s mlmc/mlmc.png ] && grep -q "MLMC: work ~ eps^" mlmc/figure-*.out || fail "mlmc sweep: no figure ($(cat mlmc/figure-*.out))"
for kind in eps delta; do
  for i in 0 1 2; do
    [ "$(status_of "markov-$kind/$kind-$i.h5")" = complete ] || fail "markov-$kind/$kind-$i.h5 not complete"
  done
  for ext in json csv png; do
    [ -s "markov-$kind/focus-dilution-$kind.$ext" ] || fail "markov $kind: no focus-dilution-$kind.$ext ($(cat markov-$kind/fit-*.out))"
  done
done
# The fits: stage I moves by 1/sigma* per unit of ln(1/eps) (3 %), every stage later at smaller eps and the
# four in order; a larger delta escapes sooner and faster.
"$PYTHON" - markov-eps/focus-dilution-eps.json markov-delta/focus-dilution-delta.json <<'PY' || fail "markov fits"
import json, math, sys
e = json.load(open(sys.argv[1]))
assert e["kind"] == "eps" and e["values"] == [1e-5, 1e-4, 1e-3], e["values"]
f = e["fits"]["t_I"]
assert abs(f["slope"] * e["sigma_star"][0] - 1) < 0.03, f
for run in e["runs"]:
    onsets = [run[s] for s in ("t_I", "t_II", "t_III", "t_IV")]
    assert all(math.isfinite(t) for t in onsets) and onsets == sorted(onsets), run
for s in ("t_I", "t_II", "t_III", "t_IV"):
    assert e["fits"][s]["slope"] > 0, (s, e["fits"][s])
d = json.load(open(sys.argv[2]))
assert d["kind"] == "delta" and d["values"] == [0, 0.025, 0.05], d["values"]
rates, t4 = d["escape_rate"], d["t_IV"]
assert rates == sorted(rates) and t4 == sorted(t4, reverse=True), (rates, t4)
print("markov eps: stage-I slope", f["slope"], "predicted", f["prediction"], "; delta: rates", rates, "t_IV", t4)
PY
for study in "${studies[@]}"; do
  n=$(ls "$study"/"$study"-*.h5 | wc -l)
  [ "$n" = 4 ] || fail "$study sweep wrote $n result files, expected 4"
  for f in "$study"/"$study"-*.h5; do [ "$(status_of "$f")" = complete ] || fail "$f not complete"; done
  for ext in json csv png; do
    [ -s "$study/convergence-$study.$ext" ] || fail "$study: no convergence-$study.$ext ($(cat "$study"/fit-*.out))"
  done
  "$PYTHON" -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[1], d['metric'], 'slope', d['slope'], d['slope_ci'])" \
    "$study/convergence-$study.json"
done
if [ "${studies[*]}" = "depth width tokens" ]; then
  # The fit of the tokens study: its levels, default metric and comparison with the files' bound slope.
  "$PYTHON" - tokens/convergence-tokens.json <<'PY' || fail "tokens fit: $(cat tokens/convergence-tokens.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["study"] == "tokens" and d["metric"] == "w2_sup", d
assert d["levels"] == [16, 32] and d["n"] == [2, 2], d
assert set(d["reference_slopes"]) == {"bound", "sharp"} and d["bound"]["slope"] == d["study_attributes"]["bound_slope"]
assert d["study_attributes"]["d"] == 2, d["study_attributes"]
print("tokens: bound", d["bound"])
PY
fi
echo "slurm sweeps: ${studies[*]}, markov eps, delta, train and mlmc arrays and their dependent jobs complete"
