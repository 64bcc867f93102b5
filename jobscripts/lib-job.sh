# Shared by the job scripts (sourced first thing, not run): the site hook, the repository, the binary, the
# launcher and the Python interpreter, so that a site changes them in one place or by environment.
#
# Environment (sbatch passes the submitting shell's environment to the job; all optional):
#   TOKDYN_SETUP   run before anything else: a file to source, or else a command line to evaluate, e.g.
#                  'module load openmpi petsc' or ~/tokdyn-site.sh; if it fails the job ends (exit 2)
#   TOKDYN_SRC     the repository with postprocess/ and build/ (default: the one holding the submitted
#                  script, else the submit directory; see the lines that source this file)
#   TOKDYN         the tokdyn binary (default: tokdyn on PATH, after TOKDYN_SETUP; else TOKDYN_SRC/build/tokdyn)
#   TOKDYN_LAUNCH  how the ranks start: mpiexec (default) or srun (`srun --mpi=pmix`); further words are
#                  options of that launcher, e.g. 'srun --mpi=pmi2' or 'mpiexec --bind-to core'
#   TOKDYN_PYTHON  the interpreter of postprocess/ (numpy, h5py, matplotlib, scipy; default: python3 on PATH)

job_fail() { echo "tokdyn job ${SLURM_JOB_ID:-}: $*" >&2; exit 2; }
job_usage() { echo "$*" >&2; exit 2; }

# Site set-up first: `module load` may be what puts mpiexec, tokdyn or python3 on PATH. Module systems and
# site profiles are not written for set -eu, so both are off while it runs; only its exit status counts.
# At the top level, not in a function: a `declare` in a sourced file would be local to that function.
if [ -n "${TOKDYN_SETUP:-}" ]; then
  set +eu
  if [ -f "$TOKDYN_SETUP" ]; then source "$TOKDYN_SETUP"; else eval "$TOKDYN_SETUP"; fi
  job_setup_rc=$?
  set -eu
  [ "$job_setup_rc" -eq 0 ] || job_fail "TOKDYN_SETUP '$TOKDYN_SETUP' failed (exit $job_setup_rc)"
  echo "tokdyn job ${SLURM_JOB_ID:-}: set up by TOKDYN_SETUP '$TOKDYN_SETUP'"
fi

# This file's repository, however the job script found it.
TOKDYN_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOKDYN_SRC
TOKDYN=${TOKDYN:-$(command -v tokdyn || echo "$TOKDYN_SRC/build/tokdyn")}
TOKDYN_PYTHON=${TOKDYN_PYTHON:-python3}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# One thread a rank: the ranks fill the allocation's cores.
export OPENBLAS_NUM_THREADS=1

# launch_ranks N: sets the array `launch` to the command that starts tokdyn on N ranks (append its arguments).
# Run it as "${launch[@]}" ... directly, not in a function, so that `$!` of a background launch is the
# launcher itself: mpiexec and srun both pass SIGUSR1 on to every rank.
launch_ranks() {
  local -a words
  [ -x "$TOKDYN" ] || job_fail "no tokdyn binary '$TOKDYN' (set TOKDYN, put tokdyn on PATH or build $TOKDYN_SRC/build)"
  read -r -a words <<< "${TOKDYN_LAUNCH:-mpiexec}"
  case "${words[0]:-}" in
    mpiexec) launch=("${words[@]}" -n "$1" "$TOKDYN") ;;
    # The job's MpiDefault may be none (the local Slurm's): PMIx unless the options name another --mpi.
    srun) launch=(srun --mpi=pmix "${words[@]:1}" -n "$1" "$TOKDYN") ;;
    *) job_fail "TOKDYN_LAUNCH must be mpiexec or srun (with options), not '${TOKDYN_LAUNCH:-}'" ;;
  esac
}

# run_checkpointable NP ARGS...: tokdyn ARGS on NP ranks, stoppable by Slurm: the launcher runs in the
# background, and SIGUSR1 (sbatch --signal=B:USR1@T) or SIGTERM to this shell reaches it as SIGUSR1, which
# mpiexec and srun pass on to every rank (each checkpoints after its current step and exits 0). Sets
# `status` to the run's --status line ("STATE: details"). Open MPI's mpiexec exits 1 whenever it was sent
# SIGTERM itself (scancel and a time limit without --signal signal every process of the job), even after
# every rank checkpointed and exited 0: a non-zero exit is an error only when the run is not checkpointed.
run_checkpointable() {
  local np=$1 rc
  shift
  launch_ranks "$np"
  "${launch[@]}" "$@" --resume &
  local launcher=$!
  trap 'kill -USR1 "'"$launcher"'" 2>/dev/null || true' USR1 TERM
  set +e
  while :; do
    wait "$launcher"
    rc=$?
    kill -0 "$launcher" 2>/dev/null || break  # wait was cut short by the trap: keep waiting
  done
  set -e
  trap - USR1 TERM
  launch_ranks 1
  status=$("${launch[@]}" "$@" --status 2>/dev/null || true)
  echo "tokdyn job ${SLURM_JOB_ID:-?}: launcher exit $rc, run status $status"
  if [ "$rc" -ne 0 ] && [ "${status%%:*}" != checkpointed ]; then exit "$rc"; fi
}

# postprocess SCRIPT ARGS...: postprocess/SCRIPT under TOKDYN_PYTHON.
postprocess() {
  command -v "$TOKDYN_PYTHON" >/dev/null || job_fail "no Python interpreter '$TOKDYN_PYTHON' (TOKDYN_PYTHON)"
  "$TOKDYN_PYTHON" "$TOKDYN_SRC/postprocess/$1" "${@:2}"
}
