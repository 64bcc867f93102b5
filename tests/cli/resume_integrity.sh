# Resume integrity (2 ranks): a run continued after any sequence of checkpoints equals the uninterrupted
# run in every dataset, bit for bit; --resume refuses a deck that differs from the checkpoint or from the
# finished run (naming the key) and says "nothing to do" only when they agree; output, checkpoint and
# input files must be distinct; a checkpoint of another run is refused and leaves this run's files intact;
# a run directory that was moved as a whole still resumes; --status says what --resume would do.
source "$(dirname "$0")/common.sh"
d=(transformer "$SRC/input/default.ini" --run.progress_interval=100)
run 2 "${d[@]}" --run.output=full.h5 > /dev/null

# A crash after a periodic checkpoint leaves an older checkpoint than the run file's rows: what a kill -9
# after "--resume --run.stop_at=120" leaves when the checkpoint of layer 100 is the one on disk.
run 2 "${d[@]}" --run.output=run.h5 --$STOP=100 > /dev/null
cp run.ckpt.h5 kept.h5
run 2 "${d[@]}" --run.output=run.h5 --resume --$STOP=120 > /dev/null
cp kept.h5 run.ckpt.h5
run 2 "${d[@]}" --run.output=run.h5 --resume > log.txt || fail "resume: $(cat log.txt)"
[ "$(status_of run.h5)" = complete ] || fail "run.h5 not complete"
compare full.h5 run.h5 --tol 0

# A finished run and --resume: nothing to do with the same deck, refused (exit 2, naming the key) with
# another one; --force replaces it.
run 2 "${d[@]}" --run.output=full.h5 --resume > log.txt
grep -q "nothing to do" log.txt || fail "--resume on a finished run: $(cat log.txt)"
expect_error 2 "deck key 'model.L' differs from the finished run 'full.h5' \(200 here, 400 there\)" \
  "${d[@]}" --run.output=full.h5 --resume --model.L=200
expect_error 2 "deck key 'mlp.activation' differs from the finished run" "${d[@]}" --run.output=full.h5 --resume \
  --mlp.activation=tanh
sync=(synchronize --model.N=8 --model.L=20 --synchronize.replicas=4 --run.output=sync.h5 --run.progress_interval=100)
run 2 "${sync[@]}" > /dev/null
expect_error 2 "deck key 'model.L' differs from the finished run 'sync.h5'" "${sync[@]}" --resume --model.L=30
run 2 "${sync[@]}" --resume > log.txt
grep -q "nothing to do" log.txt || fail "synchronize --resume on a finished run: $(cat log.txt)"

# Output, checkpoint and input files are distinct files.
expect_error 2 "run.checkpoint 'same.h5' is the same file as run.output" "${d[@]}" --run.output=same.h5 \
  --run.checkpoint=same.h5
expect_error 2 "run.checkpoint 'x.h5.part' ends in .part, a name tokdyn keeps for a run's own partial output" \
  "${d[@]}" --run.output=x.h5 --run.checkpoint=x.h5.part
"$PYTHON" -c "import h5py, numpy as np; h5py.File('tokens.h5', 'w')['X'] = np.random.default_rng(1).normal(size=(64, 4))"
cp tokens.h5 tokens.orig
expect_error 2 "run.output 'tokens.h5' is the same file as tokens.file" "${d[@]}" --run.output=tokens.h5 --force \
  --tokens.init=file --tokens.file=tokens.h5
cmp tokens.orig tokens.h5 || fail "tokens.h5 was modified"
[ ! -e same.h5 ] && [ ! -e x.h5.part ] || fail "a refused run left files"

# A checkpoint of another run (directory A, seed 1) given to the run of directory B (seed 2) is refused;
# B's checkpoint and partial file are untouched and B continues to the uninterrupted seed-2 result.
mkdir A B
(cd A && run 2 "${d[@]}" --run.output=run.h5 --run.seed=1 --$STOP=20 > /dev/null)
(cd B && run 2 "${d[@]}" --run.output=run.h5 --run.seed=2 --$STOP=20 > /dev/null)
cp B/run.ckpt.h5 B.ckpt.orig
cp B/run.h5.part B.part.orig
(cd B && expect_error 2 "checkpoint '../A/run.ckpt.h5' belongs to the run of '.*/A/run.h5', not '.*/B/run.h5'" \
   transformer --restart ../A/run.ckpt.h5)
cmp B/run.ckpt.h5 B.ckpt.orig || fail "B's checkpoint was modified"
cmp B/run.h5.part B.part.orig || fail "B's partial file was modified"
(cd B && run 2 "${d[@]}" --run.output=run.h5 --run.seed=2 --resume > /dev/null)
run 2 "${d[@]}" --run.output=seed2.h5 --run.seed=2 > /dev/null
compare seed2.h5 B/run.h5 --tol 0
# A run directory moved as a whole (run file and checkpoint keep their places relative to each other).
mv A moved
(cd moved && run 2 "${d[@]}" --run.output=run.h5 --run.seed=1 --resume > ../log.txt) || fail "moved: $(cat log.txt)"
compare full.h5 moved/run.h5 --tol 0

# --status: the state, then what --resume would do.
st() { run 1 "${d[@]}" --run.output=$1 --status "${@:2}"; }
case "$(st none.h5)" in "absent: "*"--resume starts it"*) ;; *) fail "status absent: $(st none.h5)";; esac
run 2 "${d[@]}" --run.output=half.h5 --$STOP=50 > /dev/null
case "$(st half.h5)" in "checkpointed: layer 50/400"*"--resume continues it"*) ;; *) fail "status: $(st half.h5)";; esac
case "$(st full.h5)" in "complete: "*"--resume has nothing to do"*) ;; *) fail "status complete: $(st full.h5)";; esac
case "$(st full.h5 --model.L=200)" in "complete: "*"model.L differs"*"--resume refuses"*) ;;
  *) fail "status complete, other deck: $(st full.h5 --model.L=200)";; esac
echo "resume_integrity: all checks passed"
