# A full file system (a 1 MiB tmpfs mounted by the test: CI runs as root): the run ends at once, on every
# rank, with exit code 2 and one line that says the disk is full; the last checkpoint stays intact, and
# copied with the run to a roomier place it resumes to the uninterrupted result.
source "$(dirname "$0")/common.sh"
if [ "$(id -u)" != 0 ]; then echo "full_disk: needs root to mount a tmpfs: skipped"; exit 77; fi
mkdir disk
mount -t tmpfs -o size=1m tmpfs disk || { echo "full_disk: cannot mount a tmpfs: skipped"; exit 77; }
trap 'umount "$scratch/disk" 2>/dev/null || true' EXIT
d=(transformer "$SRC/input/default.ini" --model.N=256 --diagnostics.snapshot_every=2 --run.checkpoint_every=20
   --run.progress_interval=100)
t0=$SECONDS
expect_job_error 2 2 "no space left on the device of '.*disk'" "${d[@]}" --run.output=disk/run.h5
[ $((SECONDS - t0)) -le 30 ] || fail "the full disk took $((SECONDS - t0)) s to end the run"
[ -e disk/run.ckpt.h5 ] || fail "no checkpoint left: $(ls -la disk)"
[ ! -e disk/run.h5.lock ] || fail "the lock must be released"
layer=$("$PYTHON" -c "import h5py; print(h5py.File('disk/run.ckpt.h5', 'r').attrs['step'])")
echo "checkpoint intact at layer $layer"
mkdir roomy && cp disk/run.ckpt.h5 roomy/
umount disk
run 2 "${d[@]}" --run.output=roomy/run.h5 --resume > log.txt || fail "resume: $(cat log.txt)"
grep -q "restart from" log.txt || fail "no restart: $(cat log.txt)"
run 2 "${d[@]}" --run.output=full.h5 > /dev/null
compare full.h5 roomy/run.h5 --tol 0
echo "full_disk: all checks passed"
