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
#   TOKDYN_DRY_RUN set by the sweep scripts before they submit (lib-sweep.sh): a task script run by hand with
#                  it set runs `tokdyn ... --dry-run` on one rank instead of the run, so that the checks the
#                  run makes (deck, files, lock; not the memory, which is the job's node's) come before it is queued

job_fail() { echo "tokdyn job${SLURM_JOB_ID:+ $SLURM_JOB_ID}: $*" >&2; exit 2; }
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
  if [ -n "${TOKDYN_DRY_RUN:-}" ]; then launch=(tokdyn_dry_run); return; fi
  read -r -a words <<< "${TOKDYN_LAUNCH:-mpiexec}"
  case "${words[0]:-}" in
    mpiexec) launch=("${words[@]}" -n "$1" "$TOKDYN") ;;
    # The job's MpiDefault may be none (the local Slurm's): PMIx unless the options name another --mpi.
    srun) launch=(srun --mpi=pmix "${words[@]:1}" -n "$1" "$TOKDYN") ;;
    *) job_fail "TOKDYN_LAUNCH must be mpiexec or srun (with options), not '${TOKDYN_LAUNCH:-}'" ;;
  esac
}

# tokdyn_dry_run ARGS...: the launch of TOKDYN_DRY_RUN: tokdyn ARGS --dry-run on this machine, one rank. The
# memory is not judged here: the job runs on another node, on its own rank count, and checks it there.
tokdyn_dry_run() { "$TOKDYN" "$@" --run.max_memory=1000000TB --dry-run; }

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
  if [ -n "${TOKDYN_DRY_RUN:-}" ]; then
    "${launch[@]}" "$@" --resume
    status="dry-run: checked"
    return
  fi
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

# python_problem: prints one line saying why TOKDYN_PYTHON cannot run postprocess/ (a missing interpreter, a
# module it cannot import), nothing when it can. The sweep scripts ask before they submit; the jobs that
# post-process their own run ask before the run, so that a missing h5py costs seconds, not the run.
python_problem() {
  local err missing where
  command -v "$TOKDYN_PYTHON" >/dev/null \
    || { echo "no Python interpreter '$TOKDYN_PYTHON' (TOKDYN_PYTHON; Debian's is /usr/bin/python3)"; return; }
  err=$("$TOKDYN_PYTHON" -c 'import numpy, h5py, matplotlib, scipy' 2>&1) && return 0
  missing=$(sed -n "s/.*No module named '\([^'.]*\).*/\1/p" <<< "$err" | head -n 1)
  where=$(command -v "$TOKDYN_PYTHON")
  if [ "$where" = "$TOKDYN_PYTHON" ]; then where=""; else where=" ($where)"; fi
  echo "TOKDYN_PYTHON '$TOKDYN_PYTHON'$where cannot import ${missing:-numpy, h5py, matplotlib and scipy}:" \
    "set TOKDYN_PYTHON to an interpreter that has numpy, h5py, matplotlib and scipy (Debian's: /usr/bin/python3)"
}

# require_python: job_fail with python_problem's line, if any.
require_python() {
  local problem
  problem=$(python_problem)
  [ -z "$problem" ] || job_fail "$problem"
}

# postprocess SCRIPT ARGS...: postprocess/SCRIPT under TOKDYN_PYTHON.
postprocess() {
  require_python
  "$TOKDYN_PYTHON" "$TOKDYN_SRC/postprocess/$1" "${@:2}"
}
