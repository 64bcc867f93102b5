#!/usr/bin/env bash
# What the training commands read and write, attacked as a user would (each case a reproduction that failed
# before): a resume refuses an input file changed since its checkpoint and a checkpoint whose arrays do not
# fit the deck; one run's names never take another run's files; inputs are regular files within the memory
# limit; a diverging flow fails its run; the keys' help and checks agree; an over-long output name is refused
# before anything is written. Every refusal: exit 2 on every rank, one line.
source "$(dirname "$0")/common.sh"
markov=(markov "$SRC/input/markov.ini" --flow.time=4 --flow.records=4)
train=(train "$SRC/input/train.ini" --train.steps=4 --train.eval_every=1 --train.batch=2 --train.context=8
       --train.eval_sequences=2 --model.layers=1 --model.heads=2 --model.channels=8 --train.alignment_null=5)
for k in $(seq 60); do printf 'the cat sat on the mat; a dog ate the hat. '; done > text.txt

# 1. An input file replaced between the checkpoint and --resume: markov and train.
run 1 "${markov[@]}" --markov.data=text --markov.text_file=text.txt --run.output=mt.h5 --$STOP=2 > /dev/null
run 1 "${train[@]}" --train.text_file=text.txt --run.output=tt.h5 --$STOP=2 > /dev/null
cp text.txt original.txt
sed -i 's/cat/cow/' text.txt  # same size, other content
expect_error 1 "input file 'text.txt' \(markov.text_file\) is not the one the checkpoint 'mt.ckpt.h5' was made from: same size, other content" \
  "${markov[@]}" --markov.data=text --markov.text_file=text.txt --run.output=mt.h5 --resume
expect_error 2 "input file 'text.txt' \(train.text_file\) is not the one the checkpoint 'tt.ckpt.h5' was made from: same size" \
  "${train[@]}" --train.text_file=text.txt --run.output=tt.h5 --resume
echo "more" >> text.txt
expect_error 1 "text.txt' \(train.text_file\) .* 2580 bytes then, 2585 now" \
  "${train[@]}" --train.text_file=text.txt --run.output=tt.h5 --restart tt.ckpt.h5
cp original.txt text.txt
run 1 "${train[@]}" --train.text_file=text.txt --run.output=tt.h5 --resume > resumed.txt || fail "resume with the original text"
grep -q "restart from" resumed.txt || fail "the original text did not resume: $(cat resumed.txt)"
"$PYTHON" -c "import h5py; t=h5py.File('tt.h5','r').attrs['input_files']; assert 'train.text_file\ttext.txt\t2580\t' in t, t"

# 2. A checkpoint whose arrays do not fit the deck: refused, never read out of bounds.
run 1 "${markov[@]}" --run.output=cut.h5 --$STOP=2 > /dev/null
cp cut.ckpt.h5 saved.ckpt.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("cut.ckpt.h5", "r+") as f:
    theta = f["state/theta"][:10]
    del f["state/theta"]
    f["state/theta"] = theta
PY
expect_error 2 "checkpoint 'cut.ckpt.h5' is damaged: state 'theta' has 10 values, this run needs" "${markov[@]}" --run.output=cut.h5 --resume
cp saved.ckpt.h5 cut.ckpt.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("cut.ckpt.h5", "r+") as f:
    for name in [n for n in f["state"] if n.startswith("stage_")]:
        del f["state/" + name]
        f["state/" + name] = np.zeros(0)
    f.attrs["ranks"] = np.int64(1)
PY
expect_error 1 "state 'stage_[a-z_0-9]*' has 0 values, this run needs 3" "${markov[@]}" --run.output=cut.h5 --resume
"$PYTHON" - <<'PY'
import h5py
with h5py.File("cut.ckpt.h5", "r+") as f:
    f.attrs["step"] = "two"
PY
expect_error 1 "checkpoint 'cut.ckpt.h5' is damaged: attribute 'step' is not a number" "${markov[@]}" --run.output=cut.h5 --resume

# 3. One run never takes another's files: names tokdyn keeps for a run's own files, a running run's
# checkpoint, a log.
expect_error 1 "run.output 'r.h5.part' ends in .part, a name tokdyn keeps for a run's own partial output" \
  "${markov[@]}" --run.output=r.h5.part --force
expect_error 1 "run.checkpoint 'r.lock' ends in .lock" "${markov[@]}" --run.output=r.h5 --run.checkpoint=r.lock
expect_error 1 "run.checkpoint 'y.log' ends in .log, a name tokdyn keeps for a run's own log" "${markov[@]}" --run.output=y.h5 --run.checkpoint=y.log
# Run A: a gradient descent of one step per record, for as long as the test needs it.
run 1 "${markov[@]}" --flow.method=gd --flow.time=5e4 --flow.records=1000000 --run.output=a.h5 \
  --run.checkpoint=shared.ckpt.h5 --run.progress_interval=1000 > a.log 2>&1 &
apid=$!
for i in $(seq 200); do [ -e shared.ckpt.h5.lock ] && break; sleep 0.05; done
[ -e shared.ckpt.h5.lock ] || fail "run A took no checkpoint lock"
expect_error 1 "checkpoint 'shared.ckpt.h5' is in use: lock 'shared.ckpt.h5.lock' held by" \
  "${markov[@]}" --run.output=b.h5 --run.checkpoint=shared.ckpt.h5 --force
expect_error 1 "checkpoint 'a.h5' is in use" "${markov[@]}" --run.output=c.h5 --run.checkpoint=a.h5 --force
expect_error 1 "output 'shared.ckpt.h5' is in use" "${markov[@]}" --run.output=shared.ckpt.h5 --force
signal_ranks TERM "markov.*--run.output=a.h5"
wait $apid || fail "run A: exit $? after SIGTERM: $(tail -n 3 a.log)"
[ -e shared.ckpt.h5 ] && [ "$(status_of a.h5.part)" = checkpointed ] || fail "run A's checkpoint was not kept"

# 4. Inputs: regular files only, a text within the memory a rank may use (refused before it is read).
mkfifo fifo && mkdir -p dir
expect_error 2 "train.text_file 'fifo' is a FIFO: an input must be a regular file" "${train[@]}" --train.text_file=fifo
expect_error 1 "train.text_file 'dir' is a directory" "${train[@]}" --train.text_file=dir --dry-run
expect_error 1 "markov.text_file '/dev/zero' is a character device" "${markov[@]}" --markov.data=text --markov.text_file=/dev/zero
head -c 3000000 /dev/zero | tr '\0' 'a' > big.txt && printf 'b' >> big.txt
expect_error 2 "train.text_file 'big.txt' \(2.86 MB\) needs about 12.4 MB per rank as tokens, more than the 10 MB a rank may use" \
  "${train[@]}" --train.text_file=big.txt --run.max_memory=10MB

# 5. A diverging gradient flow fails its run: exit 2, status failed, the record named.
blowup=("${markov[@]}" --markov.s=8 --flow.method=gd --flow.lr=1e6 --flow.time=1e7 --flow.records=10 --model.eps=1)
expect_error 2 "the flow diverged at record 1 \(t = 1e\+06\): loss [0-9.e+]*, more than flow.divergence = 1000 times" \
  "${blowup[@]}" --run.output=blowup.h5
[ "$(status_of blowup.h5.part)" = failed ] || fail "a diverged flow: status $(status_of blowup.h5.part)"
expect_error 1 "NaN or Inf in the weights after record [0-9]+ \(lower flow.lr" "${blowup[@]}" --flow.time=1e8 --flow.divergence=0 --run.output=nan.h5
[ "$(status_of nan.h5.part)" = failed ] || fail "NaN weights: status $(status_of nan.h5.part)"

# 6. Help and checks from one declaration; errors name the keys given.
"$TOKDYN" markov --help > help.txt && grep -q "lambda = 0.5 .*(>= 0, < 1)" help.txt || fail "markov --help: lambda's range"
"$TOKDYN" train --help > help.txt && grep -q "validation = 0.1 .*(> 0, < 1)" help.txt || fail "train --help: validation's range"
expect_error 1 "markov.lambda.*out of range \(must be < 1" "${markov[@]}" --markov.lambda=1
expect_error 1 "train.validation.*out of range \(must be < 1" "${train[@]}" --train.validation=1
expect_error 1 "markov.delta = 0.1 acts only on the stage-IV family: give markov.family_c" "${markov[@]}" --markov.delta=0.1
expect_error 1 "train.markov_pi must sum to 1 \(within 1e-12\), sums to 1.00000000001" \
  "${train[@]}" --train.data=markov --train.markov_pi=0.5,0.50000000001
printf 'ab\xff' > bad.txt
expect_error 1 "invalid UTF-8 at byte 2 \(use train.tokenizer = bytes\)" "${train[@]}" --train.text_file=bad.txt

# 7. An output name too long for MPI-IO's shared file pointer: refused before a lock or a file exists.
long=$(printf 'a%.0s' $(seq 240)).h5
expect_error 2 "its file name has 243 characters, more than the 200 tokdyn allows" "${markov[@]}" --run.output="$long"
[ -z "$(ls | grep '^aaaa')" ] || fail "an over-long output left files: $(ls | grep '^aaaa' | cut -c1-20)"

# 8. Stopping a run through mpiexec. SIGUSR1 is forwarded to every rank: they checkpoint, mpiexec exits 0.
# SIGTERM is not: Open MPI's mpiexec sends the ranks SIGTERM, gives them odls_base_sigkill_timeout (1 s)
# before SIGKILL, and exits 1 whatever they did (doc/restart.md). The job scripts' launcher
# (jobscripts/lib-job.sh run_checkpointable) turns a SIGTERM to the job's shell (scancel) into SIGUSR1.
long=("${markov[@]}" --flow.method=gd --flow.time=5e4 --flow.records=1000000 --run.progress_interval=1000)
run 2 "${long[@]}" --run.output=sig.h5 > sig.out 2>&1 &
pid=$!
wait_for sig.log "record 3/"
pkill -USR1 -f -- "-n 2 $TOKDYN markov.*--run.output=sig.h5" || fail "no mpiexec to signal"
wait $pid || fail "SIGUSR1 to mpiexec: exit $?"
[ "$(status_of sig.h5.part)" = checkpointed ] || fail "SIGUSR1 to mpiexec: status $(status_of sig.h5.part)"
run 2 "${long[@]}" --run.output=sig.h5 --resume > sig.out 2>&1 &
pid=$!
wait_for sig.log "restart from"
pkill -TERM -f -- "-n 2 $TOKDYN markov.*--run.output=sig.h5" || fail "no mpiexec to signal"
rc=0; wait $pid || rc=$?
[ $rc = 1 ] || fail "SIGTERM to mpiexec: exit $rc (Open MPI's mpiexec gives 1)"
[ "$(status_of sig.h5.part)" != complete ] || fail "SIGTERM to mpiexec: complete"
echo "ok: SIGUSR1 to mpiexec: checkpointed, exit 0; SIGTERM to mpiexec: exit $rc, status $(status_of sig.h5.part)"
bash -c 'source "$SRC/jobscripts/lib-job.sh"; run_checkpointable 2 "$@"' job "${long[@]}" --run.output=job.h5 > job.out 2>&1 &
jpid=$!
wait_for job.log "record 3/"
kill -TERM $jpid
wait $jpid || fail "run_checkpointable after SIGTERM: exit $?: $(tail -n 3 job.out)"
grep -q "launcher exit 0, run status checkpointed" job.out || fail "run_checkpointable: $(tail -n 2 job.out)"
echo "ok: $(grep 'launcher exit' job.out | cut -c1-80)"

# 9. A signal inside a long record: markov stops between two integrator steps, train between two optimizer
# steps; either puts its state back at the record's start and checkpoints it within a fraction of a record
# (before: at the record's end); the resumed run equals the uninterrupted one bit for bit.
# stop_inside_record NAME FIRST_LINE ARGS...: ARGS make a run of 2 records; FIRST_LINE is its record 0's line.
stop_inside_record() {
  local name=$1 first=$2 t0 whole waited pid
  shift 2
  t0=$(date +%s%N)
  run 2 "$@" --run.output=whole-$name.h5 > /dev/null
  whole=$(( ($(date +%s%N) - t0) / 1000000 ))
  run 2 "$@" --run.output=cut-$name.h5 > cut-$name.out 2>&1 &
  pid=$!
  wait_for cut-$name.log "$first"
  sleep 0.3
  t0=$(date +%s%N)
  signal_ranks TERM "$1.*--run.output=cut-$name.h5"
  wait $pid || fail "$name: exit $? after SIGTERM in a record"
  waited=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -q "checkpointed at record 0/2" cut-$name.log || fail "$name: $(tail -n 2 cut-$name.log)"
  [ $((2 * waited)) -lt $((whole / 2)) ] || fail "$name: the stop took $waited ms, the whole run of 2 records $whole ms"
  run 2 "$@" --run.output=cut-$name.h5 --resume > /dev/null
  compare whole-$name.h5 cut-$name.h5 --tol 0 > /dev/null || fail "$name: the resumed run differs"
  echo "ok: $name: SIGTERM inside record 1 of 2 -> checkpoint of record 0 in $waited ms (2 records: $whole ms); resumed bit for bit"
}
slow=(markov "$SRC/input/markov.ini" --markov.s=12 --flow.records=2 --run.progress_interval=1000)
stop_inside_record gd "record 0/2" "${slow[@]}" --flow.method=gd --flow.lr=0.05 --flow.time=600  # 6000 steps a record
stop_inside_record rk "record 0/2" "${slow[@]}" --flow.method=rk --flow.rtol=1e-13 --flow.time=700
stop_inside_record rkdense "record 0/2" "${slow[@]}" --flow.method=rk --flow.rtol=1e-13 --flow.output=dense --flow.time=700
# train: records of 160 optimizer steps (about 1 s: the signal, 0.3 s after the run's first line, must land
# inside record 1 of 2; 48 steps became too few when training got faster).
trainslow=(train "$SRC/input/train.ini" --train.steps=320 --train.eval_every=160 --train.alignment_null=20
           --run.progress_interval=1000)
stop_inside_record train-ecd "^step 0/320" "${trainslow[@]}" --train.optimizer=ecd
stop_inside_record train-adamw "^step 0/320" "${trainslow[@]}" --train.optimizer=adamw

# 10. A signal during the start-up of a vocabulary of 2000 characters (stage I's 2000 x 2000 G and the first
# record's alignments): the start-up is Lanczos and thin Gram matrices, seconds, so a signal there gives the
# checkpoint of record 0 well inside Slurm's lead time (two dense 2000 x 2000 eigensolves took ~30 s here).
"$PYTHON" - <<'PY'
import random
rng = random.Random(1)
chars = [chr(0x4E00 + i) for i in range(2000)]
text = "".join(chars) + "".join(rng.choices(chars, weights=[1 / (i + 1) for i in range(2000)], k=100000))
open("wide.txt", "w", encoding="utf-8").write(text)
PY
wide=(markov "$SRC/input/markov-text.ini" --markov.text_file=wide.txt --markov.stride=128 --flow.method=gd
      --flow.lr=0.1 --flow.time=0.2 --flow.records=1 --run.output=wide.h5)
run 2 "${wide[@]}" > wide.out 2>&1 &
pid=$!
wait_for wide.out "tokdyn markov: setting up"
t0=$(date +%s%N)
signal_ranks TERM "markov.*--run.output=wide.h5"
wait $pid || fail "wide vocabulary: exit $? after SIGTERM in start-up: $(tail -n 2 wide.out)"
waited=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "checkpointed at record 0/1" wide.log || fail "wide vocabulary: $(tail -n 2 wide.log)"
[ "$waited" -lt 5000 ] || fail "wide vocabulary: the stop in start-up took $waited ms (limit 5 s; it took 15 s before)"
echo "ok: SIGTERM in the start-up of d = 2000: checkpoint of record 0 in $waited ms"
