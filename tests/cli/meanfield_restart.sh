# tokdyn meanfield checkpoints: stopped at layer 3 (run.stop_at) and resumed, the grid (with the
# noise's sub-step level carried in the checkpoint) and the quadrature give the uninterrupted run bit for
# bit; resumed at another rank count, to 1e-12; a deck that disagrees with the checkpoint is refused.
source "$(dirname "$0")/common.sh"
grid=(meanfield "$SRC/input/meanfield-circle.ini" --model.L=6 --model.T=0.3 --meanfield.cells=64
      --diagnostics.snapshot_every=2 --run.progress_interval=1000)
quad=(meanfield "$SRC/input/meanfield-sphere.ini" --model.L=6 --model.T=0.3 --meanfield.points=200
      --noise.features=64 --diagnostics.snapshot_every=2 --run.progress_interval=1000)
for solver in grid quad; do
  declare -n deck=$solver
  run 2 "${deck[@]}" --run.output=$solver-full.h5 > /dev/null
  run 2 "${deck[@]}" --run.output=$solver-split.h5 --run.stop_at=3 > log.txt
  grep -q "checkpointed at layer 3/6" log.txt || fail "$solver: no checkpoint: $(cat log.txt)"
  [ "$(status_of $solver-split.h5.part)" = checkpointed ] || fail "$solver: status should be checkpointed"
  run 2 "${deck[@]}" --run.output=$solver-split.h5 --resume > log.txt
  grep -q "restart from" log.txt || fail "$solver: did not restart: $(cat log.txt)"
  compare $solver-full.h5 $solver-split.h5 --tol 0
  run 2 "${deck[@]}" --run.output=$solver-other.h5 --run.stop_at=3 > /dev/null
  run 3 "${deck[@]}" --run.output=$solver-other.h5 --resume > /dev/null
  compare $solver-full.h5 $solver-other.h5 --tol 1e-12
done
run 2 "${grid[@]}" --run.output=refuse.h5 --run.stop_at=2 > /dev/null
expect_error 2 "deck key 'meanfield.cfl' differs from checkpoint" "${grid[@]}" --run.output=refuse.h5 --resume \
  --meanfield.cfl=0.2
echo "meanfield_restart: all checks passed"
