# An optimizer added from outside src/ (tests/optimizers/plain_sgd.cpp: its settings with their one key, its
# class and one registration line) is listed by `tokdyn train --help` with its key, reads its key, and trains:
# plain gradient descent takes the steps of SGDM with momentum 0 (not Nesterov), so the two run files agree bit
# for bit but for the optimizer's name; stopped at record 2 and resumed (its state through the checkpoint),
# it continues bit for bit. TOKDYN_STYLES is tokdyn with the test styles linked in.
source "$(dirname "$0")/common.sh"
: "${TOKDYN_STYLES:?}"
styles() { "$MPIEXEC" -n 2 "$TOKDYN_STYLES" "$@"; }
"$TOKDYN_STYLES" train --help > help.txt 2>&1 || fail "--help: $(cat help.txt)"
grep -q "test-sgd" help.txt || fail "the test optimizer is not listed"
grep -A1 -F "[test-sgd]" help.txt | grep -q "lr = 0.1" || fail "the test optimizer's key is not listed"
small=(train "$SRC/input/train.ini" --train.steps=20 --train.eval_every=5 --train.batch=4 --train.context=16
       --train.eval_sequences=4 --model.layers=1 --model.heads=2 --model.channels=16 --train.alignment_null=20
       --run.progress_interval=1000)
styles "${small[@]}" --train.optimizer=test-sgd --test-sgd.lr=0.05 --run.output=plain.h5 > plain.log
grep -q "test-sgd lr 0.05" plain.log || fail "the banner does not show the optimizer's settings: $(head -n 3 plain.log)"
styles "${small[@]}" --train.optimizer=sgdm --sgdm.lr=0.05 --sgdm.momentum=0 --sgdm.nesterov=false \
  --run.output=sgdm.h5 > /dev/null
compare plain.h5 sgdm.h5 --except-attribute /train@optimizer || fail "test-sgd and SGDM without momentum disagree"
styles "${small[@]}" --train.optimizer=test-sgd --test-sgd.lr=0.05 --run.output=resumed.h5 --run.stop_at=2 > /dev/null
[ "$(status_of resumed.h5.part)" = checkpointed ] || fail "the stopped run is not checkpointed"
styles "${small[@]}" --train.optimizer=test-sgd --test-sgd.lr=0.05 --run.output=resumed.h5 --resume > resume.log
grep -q "restart from" resume.log || fail "did not restart: $(cat resume.log)"
compare plain.h5 resumed.h5 || fail "test-sgd stopped and resumed differs from the uninterrupted run"
# The optimizer is a deck value like any other: the plain binary does not know it.
expect_error 2 "'test-sgd'" train "$SRC/input/train.ini" --train.optimizer=test-sgd --run.output=unknown.h5
echo "optimizer_style: all checks passed"
