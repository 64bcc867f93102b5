# Produces run files for the postprocess tests (CTest fixture "studyruns") with the real code, at
# reduced size: a synchronize result (sync.h5), a phase diagram (phase.h5), an mlmc result (mlmc.h5), a handful of grid and Fig. 1 runs under grid/,
# named as jobscripts/grid.sbatch names them, two meanfield runs (grid on S^1, points on S^2) and three
# markov runs under markov/.
source "$(dirname "$0")/common.sh"
run 2 synchronize "$SRC/input/synchronization-bound.ini" --model.N=16 --model.L=100 --mlp.width=64 \
  --synchronize.replicas=8 --run.output=sync.h5 --run.progress_interval=1000 > log.txt || fail "$(cat log.txt)"
[ "$(status_of sync.h5)" = complete ] || fail "sync.h5 not complete"
run 2 phase "$SRC/input/phase.ini" --model.N=8 --model.T=2 --phase.systems=6 --phase.betas=4 --phase.records=6 \
  --run.output=phase.h5 --run.progress_interval=1000 > log.txt || fail "phase: $(cat log.txt)"
run 2 mlmc "$SRC/input/mlmc.ini" --mlmc.eps=2e-2 --mlmc.initial_samples=20 --run.output=mlmc.h5 \
  --run.progress_interval=1000 > log.txt || fail "mlmc: $(cat log.txt)"
mkdir -p grid
small=(--model.N=16 --model.L=30 --mlp.width=64 --run.progress_interval=1000)
for combo in grid-d5-bias0:relu:1 grid-d5-bias0:tanh:0 grid-d5-bias0:none:-1 grid-d5-bias0:sigmoid:1 \
             grid-d5-bias01:silu:-1; do
  IFS=: read -r deck act factor <<< "$combo"
  mlp=(--mlp.activation="$act")
  [ "$act" = none ] && mlp=(--mlp.enabled=false)
  run 2 transformer "$SRC/input/$deck.ini" "${mlp[@]}" --attention.factor="$factor" "${small[@]}" \
    --run.output="grid/$deck-$act-f$factor.h5" > log.txt || fail "$combo: $(cat log.txt)"
done
run 2 transformer "$SRC/input/fig1-tanh.ini" "${small[@]}" --model.L=40 --run.output=grid/fig1-tanh.h5 > log.txt \
  || fail "fig1-tanh: $(cat log.txt)"
mkdir -p meanfield
run 2 meanfield "$SRC/input/meanfield-circle.ini" --model.L=4 --model.T=0.2 --meanfield.cells=64 \
  --diagnostics.snapshot_every=2 --run.output=meanfield/grid.h5 > log.txt || fail "meanfield grid: $(cat log.txt)"
run 2 meanfield "$SRC/input/meanfield-sphere.ini" --model.L=4 --model.T=0.2 --meanfield.points=256 \
  --noise.features=64 --run.output=meanfield/points.h5 > log.txt || fail "meanfield points: $(cat log.txt)"
# tokdyn markov at s = 8 (the stage-IV family of input/markov-sweep.ini): an eps sweep of three runs, the
# files of one array (jobscripts/markov.sbatch names them so).
mkdir -p markov
epsilons=(1e-3 1e-4 1e-5)
for i in 0 1 2; do
  eps=${epsilons[$i]}
  run 2 markov "$SRC/input/markov-sweep.ini" --markov.s=8 --flow.time=600 --flow.records=300 --model.eps="$eps" \
    --run.output="markov/eps-$i.h5" > log.txt || fail "markov eps $eps: $(cat log.txt)"
done
# tokdyn train at test size: 2 seeds x {ecd, adamw} x {symmetric, b_Q}, named as jobscripts/train.sbatch does.
mkdir -p train
for seed in 1 2; do
  for opt in ecd adamw; do
    for sym in symmetric bq; do
      q=false; [ "$sym" = bq ] && q=true
      run 2 train "$SRC/input/train.ini" --train.steps=20 --train.eval_every=5 --train.context=16 --model.channels=16 \
        --model.heads=2 --train.alignment_null=50 --run.seed=$seed --train.optimizer=$opt --bias.query=$q \
        --run.progress_interval=1000 --run.output="train/train-$opt-$sym-s$seed.h5" > log.txt || fail "train: $(cat log.txt)"
    done
  done
done
# tokdyn lens of the first of them, its parameters stored at every second record (lens.h5: postprocess/lens.py).
run 2 train "$SRC/input/train.ini" --train.steps=20 --train.eval_every=5 --train.context=16 --model.channels=16 \
  --model.heads=2 --train.alignment_null=50 --bias.query=true --bias.value=true --train.parameters_every=2 \
  --run.progress_interval=1000 --run.output=lens-train.h5 > log.txt || fail "train for lens: $(cat log.txt)"
run 2 lens --lens.run=lens-train.h5 --run.output=lens.h5 > log.txt || fail "lens: $(cat log.txt)"
echo "ok: sync.h5, phase.h5, mlmc.h5, $(ls grid | wc -l) grid files, $(ls meanfield | wc -l) meanfield runs, $(ls markov | wc -l) markov runs, $(ls train | wc -l) train runs"
