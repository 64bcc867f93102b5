# Every long command, at NP ranks, stopped by SIGTERM (delivered to the last rank alone once a few steps
# are done: TOKDYN_FAULT=signal, so the step is known) checkpoints and exits 0; --resume then ends in a
# run file equal to the uninterrupted one in every dataset, bit for bit (timings aside).
source "$(dirname "$0")/common.sh"
np=${1:?ranks}
last=$((np - 1))
I=$SRC/input
declare -A cmd=(
  [transformer]="transformer $I/default.ini --model.L=40 --diagnostics.snapshot_every=8"
  [sde]="sde $I/sde.ini --model.L=40 --model.N=32"
  [meanfield-grid]="meanfield $I/meanfield-circle.ini --model.L=12 --model.T=0.6 --meanfield.cells=64 --diagnostics.snapshot_every=4"
  [meanfield-points]="meanfield $I/meanfield-sphere.ini --model.L=12 --model.T=0.6 --meanfield.points=200 --noise.features=64 --diagnostics.snapshot_every=4"
  [converge-depth]="converge $I/converge-depth.ini --converge.levels=2 --converge.replicas=7 --model.N=8 --noise.features=64"
  [converge-width]="converge $I/converge-width.ini --converge.levels=2 --converge.replicas=7 --model.N=8 --model.L=16"
  [converge-tokens]="converge $I/converge-tokens.ini --converge.levels=2 --converge.replicas=5 --meanfield.points=256 --model.L=6"
  [synchronize]="synchronize $I/synchronization-bound.ini --synchronize.replicas=7 --model.N=8 --mlp.width=32 --model.L=40"
  [lyapunov]="lyapunov $I/lyapunov.ini --lyapunov.replicas=50 --model.L=40"
  [mlmc]="mlmc $I/mlmc.ini --mlmc.eps=1e-2 --mlmc.initial_samples=20 --mlmc.batch=8"
  [phase]="phase $I/phase.ini --phase.systems=5 --phase.betas=3 --phase.records=8 --model.T=2 --model.N=8"
  [spectrum]="spectrum $I/spectrum.ini --synthetic.d=48 --synthetic.heads=4 --synthetic.layers=7 --spectrum.nev=4 --synthetic.outliers=4"
  [power]="power $I/power-random.ini --weights.layers=9 --power.N=24"
  [markov]="markov $I/markov.ini --flow.time=20 --flow.records=8 --model.eps=1e-3"
  [train]="train $I/train-bqbv.ini --train.steps=40 --train.eval_every=5 --train.context=16 --model.channels=16 --model.heads=2 --train.alignment_null=20"
)
for name in transformer sde meanfield-grid meanfield-points converge-depth converge-width converge-tokens synchronize \
            lyapunov phase mlmc spectrum power markov train; do
  read -r -a args <<< "${cmd[$name]}"
  base=("${args[@]}" --run.progress_interval=1000)
  run "$np" "${base[@]}" --run.output="$name-full.h5" > "$name-full.log" || fail "$name: $(cat "$name-full.log")"
  TOKDYN_FAULT=signal@$last:3 run "$np" "${base[@]}" --run.output="$name.h5" > "$name-cut.log" ||
    fail "$name: SIGTERM: exit $?: $(cat "$name-cut.log")"
  grep -qE "checkpointed at [a-z]+ [0-9]+/[0-9]+ .*\(signal\) after SIGTERM" "$name-cut.log" ||
    fail "$name: no checkpoint after SIGTERM: $(cat "$name-cut.log")"
  [ "$(status_of "$name.h5.part")" = checkpointed ] || fail "$name: the partial file should say checkpointed"
  run "$np" "${base[@]}" --run.output="$name.h5" --resume > "$name-resume.log" || fail "$name: resume: $(cat "$name-resume.log")"
  grep -q "restart from" "$name-resume.log" || fail "$name: did not restart: $(cat "$name-resume.log")"
  compare "$name-full.h5" "$name.h5" --tol 0 > /dev/null || fail "$name: the resumed run differs"
  echo "ok: $name at $np ranks: $(grep -o 'checkpointed at [a-z]* [0-9/]*' "$name-cut.log"), resumed, bitwise equal"
done
