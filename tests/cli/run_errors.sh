# Errors end every rank within seconds with one line naming the problem and a non-zero exit (2 for input
# and environment, 3 for internal errors), never a hang or an MPI banner alone: damaged input files, a
# dataset that is a group, output places that cannot be written (found before any work), a run too large
# for the machine's memory, and failures injected on one rank only (TOKDYN_FAULT, a testing aid).
source "$(dirname "$0")/common.sh"
base=(transformer "$SRC/input/default.ini" --model.L=20 --run.progress_interval=100)

# Damaged files: a truncated checkpoint, token file and weights file; a dataset name that is a group.
run 2 "${base[@]}" --run.output=c.h5 --$STOP=10 > /dev/null
head -c 4000 c.ckpt.h5 > trunc.ckpt.h5
expect_job_error 2 2 "checkpoint 'trunc.ckpt.h5'.*(truncated|damaged)" transformer --restart trunc.ckpt.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("tokens.h5", "w") as f:
    f["X"] = np.random.default_rng(1).normal(size=(4096, 4))
    f.create_group("G")
PY
head -c 20000 tokens.h5 > trunc_tokens.h5
expect_job_error 2 2 "token file 'trunc_tokens.h5'.*(truncated|damaged)" "${base[@]}" --model.N=4096 \
  --tokens.init=file --tokens.file=trunc_tokens.h5
expect_job_error 2 2 "'G' in token file 'tokens.h5' is a group, not a dataset" "${base[@]}" --model.N=4096 \
  --tokens.init=file --tokens.file=tokens.h5 --tokens.dataset=G
run 2 weights --weights.format=synthetic --synthetic.d=64 --synthetic.heads=4 --weights.layers=4 \
  --convert.output=w.h5 > /dev/null
head -c 30000 w.h5 > trunc_w.h5
expect_job_error 2 2 "'trunc_w.h5'.*(truncated|damaged)" spectrum --weights.format=hdf5 --weights.file=trunc_w.h5

# Places that cannot be written are found before any work: a checkpoint directory that does not exist,
# a read-only output directory (a read-only tmpfs: root may write anywhere else).
expect_job_error 2 2 "directory 'nodir' of run.checkpoint 'nodir/x.ckpt.h5' does not exist" "${base[@]}" \
  --run.output=x.h5 --run.checkpoint=nodir/x.ckpt.h5
[ ! -e x.h5.part ] || fail "a refused run left x.h5.part"
if [ "$(id -u)" = 0 ] && mkdir ro && mount -t tmpfs -o ro,size=64k tmpfs ro; then
  expect_job_error 2 2 "directory 'ro' of run.output 'ro/x.h5' is not writable" "${base[@]}" --run.output=ro/x.h5
  umount ro
fi

# Memory: d = 10^6 with a width-512 MLP needs 8 GB of MLP weights per rank; refused at once.
expect_job_error 2 2 "needs about [0-9.]+ [GT]B of memory per rank" transformer --model.d=1000000 --model.N=2
expect_job_error 2 2 "needs about [0-9.]+ [MG]B of memory per rank.*run.max_memory = 1 MB" "${base[@]}" \
  --run.max_memory=1MB

# A failure on one rank only (rank 1 of 3 at layer 5, after the checkpoint of layer 4): every rank ends
# within seconds with one line; the checkpoint stays and resumes.
long=("${base[@]}" --run.output=f.h5 --run.checkpoint_every=4)
TOKDYN_FAULT=system@1:5 expect_job_error 3 3 "rank 1: internal error: injected fault \(system\) at layer 5" "${long[@]}"
TOKDYN_FAULT=alloc@2:5 expect_job_error 3 2 "rank 2: out of memory" "${long[@]}" --resume
TOKDYN_FAULT=input@0:5 expect_job_error 3 2 "injected fault \(input\) at layer 5" "${long[@]}" --resume
[ "$("$PYTHON" -c "import h5py; print(h5py.File('f.ckpt.h5', 'r').attrs['step'])")" = 4 ] || fail "checkpoint of layer 4 lost"
run 3 "${long[@]}" --resume > /dev/null
run 3 "${base[@]}" --run.output=f-full.h5 > /dev/null
compare f-full.h5 f.h5 --tol 0
echo "run_errors: all checks passed"
