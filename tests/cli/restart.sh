# Checkpoint/restart at NP ranks: a run stopped at layer 17 and resumed equals the uninterrupted run
# bit for bit; resumed at another rank count it agrees to 1e-12; periodic checkpoints do not change results.
source "$(dirname "$0")/common.sh"
np=${1:?ranks}
other=$(( np % 3 + 1 ))
deck=(transformer --model.N=45 --model.d=5 --model.L=40 --model.T=4 --mlp.width=64 --mlp.activation=tanh
      --mlp.sigma_u=0.1 --mlp.sigma_w=0.1 --attention.query=gaussian --attention.beta=2 --run.tile=8
      --diagnostics.snapshot_every=10 --diagnostics.every=3 --run.progress_interval=100)

run "$np" "${deck[@]}" --run.output=full.h5 > /dev/null
[ "$(status_of full.h5)" = complete ] || fail "full.h5 not complete"

run "$np" "${deck[@]}" --run.output=cut.h5 --run.stop_at=17 > log.txt
grep -q "checkpointed at layer 17/40" log.txt || fail "no checkpoint message: $(cat log.txt)"
[ -e cut.ckpt.h5 ] || fail "cut.ckpt.h5 missing"
[ ! -e cut.h5 ] || fail "cut.h5 must not exist before completion"
[ "$(status_of cut.h5.part)" = checkpointed ] || fail "cut.h5.part should say checkpointed"
case "$(run 1 "${deck[@]}" --run.output=cut.h5 --status)" in checkpointed:*) ;; *) fail "--status should say checkpointed";; esac
mkdir other && cp cut.ckpt.h5 other/

run "$np" "${deck[@]}" --run.output=cut.h5 --resume > log.txt
grep -q "restart from 'cut.ckpt.h5' at layer 17/40 (written on $np rank" log.txt || fail "no restart message: $(cat log.txt)"
[ "$(status_of cut.h5)" = complete ] || fail "cut.h5 not complete"
[ ! -e cut.ckpt.h5 ] || fail "checkpoint should be removed on completion"
compare full.h5 cut.h5 --tol 0

# The same checkpoint continued on another number of ranks, from the deck stored in it (no deck given).
(cd other && run "$other" transformer --restart cut.ckpt.h5 > log.txt)
[ "$(status_of other/cut.h5)" = complete ] || fail "other/cut.h5 not complete"
compare full.h5 other/cut.h5 --tol 1e-12

# A deck that disagrees with the checkpoint is refused, naming the key.
run "$np" "${deck[@]}" --run.output=c2.h5 --run.stop_at=5 > /dev/null
expect_error "$np" "deck key 'model.T' differs from checkpoint 'c2.ckpt.h5' \\(5 here, 4 there\\)" \
  "${deck[@]}" --run.output=c2.h5 --model.T=5 --resume
# Periodic checkpoints along the way leave the results unchanged.
run "$np" "${deck[@]}" --run.output=periodic.h5 --run.checkpoint_every=7 > /dev/null
compare full.h5 periodic.h5 --tol 0
# --resume on a finished run does nothing; on a partial file without checkpoint it starts again.
run "$np" "${deck[@]}" --run.output=full.h5 --resume > log.txt
grep -q "nothing to do" log.txt || fail "--resume on a complete run: $(cat log.txt)"
cp full.h5 crashed.h5.part
run "$np" "${deck[@]}" --run.output=crashed.h5 --resume > log.txt
grep -q "'crashed.h5.part' has no checkpoint: starting the run again" log.txt || fail "crashed: $(cat log.txt)"
compare full.h5 crashed.h5 --tol 0
# The SDE (Heun, Fourier field: the Brownian path is recomputed from its keys after the restart).
sde=(sde --model.N=30 --model.d=2 --model.L=64 --model.T=2 --noise.field=fourier --attention.beta=2
     --diagnostics.every=4 --run.progress_interval=100)
run "$np" "${sde[@]}" --run.output=sde-full.h5 > /dev/null
run "$np" "${sde[@]}" --run.output=sde-cut.h5 --run.stop_at=23 > /dev/null
run "$np" "${sde[@]}" --run.output=sde-cut.h5 --resume > /dev/null
compare sde-full.h5 sde-cut.h5 --tol 0
echo "restart at $np ranks: bitwise; continued at $other ranks: within 1e-12"
