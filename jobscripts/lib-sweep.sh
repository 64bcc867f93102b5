# Shared by the sweep scripts (sourced, not run): the sbatch options before a `--`, and the submission of an
# array with a job that starts only if every task succeeded (--dependency=afterok).
#
# The convention of every sweep script: SCRIPT ARGS... [sbatch options --] [--section.key=value ...]. Options
# for sbatch itself (-p/--partition, -A/--account, --time, --job-name, --comment, --qos...) come before a
# `--` and reach every job the script submits; what follows the `--` (everything, without one) goes to
# tokdyn as deck overrides. sbatch also reads SBATCH_PARTITION, SBATCH_ACCOUNT... from the environment.
# A bad command line (a missing or empty argument, an empty item or a value twice in a comma list, an argument
# holding ` -- `, a second `--`) is refused before anything is submitted or created: one line on stderr, exit 2.

# usage_error MESSAGE: one line on stderr, exit 2; an OUTDIR that sweep_outdir made goes again (if empty).
usage_error() {
  [ "${created_outdir:-0}" = 0 ] || rmdir -- "$outdir" 2>/dev/null || true
  echo "$(basename "$0"): $*" >&2
  exit 2
}

# need_arguments COUNT USAGE ARGS...: usage_error USAGE unless ARGS begins with COUNT arguments before any
# `--` (a `--` among them means some are missing before the sbatch options).
need_arguments() {
  local count=$1 usage=$2 i
  shift 2
  [ $# -ge "$count" ] || usage_error "$usage"
  for ((i = 1; i <= count; i++)); do
    [ "${!i}" != "--" ] || usage_error "$usage"
  done
}

# split_sbatch_options ARGS...: sets sbatch_options to the arguments before a `--` (none without one) and
# task_arguments to the rest. An empty argument, a second `--`, or one argument holding ` -- ` (words
# quoted together that were meant to be separate) is a usage error: sbatch or tokdyn would get it as is.
split_sbatch_options() {
  local arg seen=0
  sbatch_options=() task_arguments=()
  for arg in "$@"; do
    [ -n "$arg" ] || usage_error "an empty argument among the sbatch options and deck overrides"
    [[ "$arg" != *" -- "* ]] || usage_error "argument '$arg' holds ' -- ': give the sbatch options, '--' and the overrides as separate words"
    if [ "$arg" = "--" ]; then
      [ "$seen" = 0 ] || usage_error "more than one '--' (sbatch options -- deck overrides)"
      seen=1
      sbatch_options=(${task_arguments[@]+"${task_arguments[@]}"}) task_arguments=()
    else
      task_arguments+=("$arg")
    fi
  done
}

# comma_list NAME VALUE: sets the array `items` to the values of the comma list VALUE; usage_error (naming
# NAME) unless it has at least one, none empty, blank or given twice: the jobs split it again (IFS=, read,
# which drops a trailing empty item) and a repeated value would be a second task writing the same file.
comma_list() {
  [[ "$2" =~ ^[^,[:space:]]+(,[^,[:space:]]+)*$ ]] \
    || usage_error "$1 must be a comma list of values, none empty or blank, not '$2'"
  IFS=, read -r -a items <<< "$2"
  local twice
  twice=$(printf '%s\n' "${items[@]}" | sort | uniq -d | head -n 1)
  [ -z "$twice" ] || usage_error "$1 names '$twice' twice, in '$2'"
}

# sweep_outdir OUTDIR: sets outdir to its absolute path, created (created_outdir=1 when this call made it).
sweep_outdir() {
  [ -n "$1" ] || usage_error "OUTDIR is empty"
  local fresh=0
  [ -d "$1" ] || fresh=1
  mkdir -p -- "$1" 2>/dev/null || usage_error "cannot create OUTDIR '$1'"
  outdir=$(realpath -- "$1")
  created_outdir=$fresh
}

# slurm_ready: usage_error unless sbatch is on PATH and a Slurm controller answers `scontrol ping` within
# 5 s (without one, sbatch and sinfo print DNS SRV errors, or wait a minute first).
slurm_ready() {
  command -v sbatch >/dev/null && command -v scontrol >/dev/null \
    || usage_error "no Slurm commands (sbatch, scontrol) on PATH: submit from a cluster's login node, or install Slurm with jobscripts/install-deps-debian.sh and start it with jobscripts/local-slurm.sh start"
  timeout 5 scontrol ping 2>/dev/null | grep -q ' is UP' \
    || usage_error "no Slurm controller: start one with jobscripts/local-slurm.sh start"
}

# check_jobs TASKS TRIES PYTHON TASK_SCRIPT ARGS...: what the jobs will need, checked before anything is
# submitted, under the jobs' own set-up (lib-job.sh: TOKDYN_SETUP, TOKDYN, TOKDYN_PYTHON): the binary runs,
# the interpreter imports numpy, h5py, matplotlib and scipy (PYTHON = python: a fit or summary job follows),
# OUTDIR is writable, and TASK_SCRIPT ARGS passes `tokdyn --dry-run` (deck, files, lock: the checks of the run
# itself but the memory, which the job checks on its node) for TRIES of the TASKS array tasks, spread evenly,
# the first and the last among them.
# Else usage_error with the first problem.
check_jobs() {
  local log rc=0 problem
  log=$(mktemp)
  (job_checks "$@") > "$log" 2>&1 || rc=$?
  problem=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 || true)
  rm -f "$log"
  [ "$rc" -eq 0 ] && return 0
  usage_error "${problem:-the check of the jobs failed (exit $rc)}"
}

# job_checks: check_jobs's checks, in a subshell of their own (lib-job.sh's set-up stays there); the last
# line printed says what failed.
job_checks() {
  local tasks=$1 tries=$2 python=$3 task_script=$4 k i out probe
  shift 4
  stop() { echo "$*"; exit 2; }
  source "$(dirname "${BASH_SOURCE[0]}")/lib-job.sh"
  "$TOKDYN" --version > /dev/null 2>&1 \
    || stop "the jobs' tokdyn '$TOKDYN' does not run (set TOKDYN, put tokdyn on PATH or build $TOKDYN_SRC/build)"
  if [ "$python" = python ]; then
    out=$(python_problem)
    [ -z "$out" ] || stop "$out"
  fi
  probe=$(mktemp -p "$outdir" .tokdyn-write-check.XXXXXX 2>/dev/null) || stop "OUTDIR '$outdir' is not writable"
  rm -f -- "$probe"
  [ "$tries" -le "$tasks" ] || tries=$tasks
  for ((k = 0; k < tries; k++)); do
    i=$(( tries > 1 ? k * (tasks - 1) / (tries - 1) : 0 ))
    out=$(TOKDYN_DRY_RUN=1 SLURM_ARRAY_TASK_ID=$i bash "$task_script" "$@" 2>&1) \
      || stop "array task $i of $(basename "$task_script") would fail: $(grep -v '^[[:space:]]*$' <<< "$out" | tail -n 1)"
  done
}

# watch_hint NAME SUMMARY_LABEL IDS...: where the logs go and how to follow the jobs, on stderr (stdout is
# the job ids, for scripts). With a SUMMARY_LABEL the IDS are the array's and the summary job's.
watch_hint() {
  local name=$1 label=$2 ids
  shift 2
  ids=$(IFS=,; echo "$*")
  {
    if [ -n "$label" ]; then
      echo "logs: $outdir/$name-${1}_<task>.out, $outdir/$label-$2.out"
    else
      echo "logs: $outdir/$name-<job>_<task>.out"
    fi
    echo "watch: squeue -j $ids; when done: sacct -j $ids (without slurmdbd, as on jobscripts/local-slurm.sh's Slurm: sacct -c -j $ids)"
  } >&2
}

# sweep_paths DECK OUTDIR: sets deck and outdir to their absolute paths (OUTDIR created) and exports TOKDYN_SRC
# (default: the repository holding this script) for the jobs.
sweep_paths() {
  export TOKDYN_SRC=${TOKDYN_SRC:-$(dirname "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)")}
  [ -n "$1" ] || usage_error "DECK is empty"
  [ -f "$1" ] || usage_error "no deck '$1'"
  deck=$(realpath -- "$1")
  sweep_outdir "$2"
}

# submit_with_summary TASKS OUTDIR NAME TASK_SCRIPT SUMMARY_SCRIPT SUMMARY_PREFIX [TASK ARGS...]: the array
# 0 .. TASKS-1 of TASK_SCRIPT TASK ARGS (logs OUTDIR/NAME-<job>_<task>.out), then SUMMARY_SCRIPT OUTDIR
# SUMMARY_PREFIX once every task succeeded (log OUTDIR/<label>-<job>.out), both with sbatch_options, after
# slurm_ready and check_jobs. Prints "sweep <id> <label> <id>" (the label is $SUMMARY_LABEL, default fit),
# then (stderr) where the logs go and how to watch the jobs.
submit_with_summary() {
  local tasks=$1 outdir=$2 name=$3 task_script=$4 summary_script=$5 prefix=$6
  shift 6
  local sweep summary
  [ "$tasks" -ge 1 ] || usage_error "no task to submit"
  slurm_ready
  check_jobs "$tasks" 8 python "$task_script" "$@"
  sweep=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --array=0-$((tasks - 1)) \
    --output="$outdir/$name-%A_%a.out" "$task_script" "$@")
  sweep=${sweep%%;*}
  summary=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --dependency=afterok:"$sweep" \
    --output="$outdir/${SUMMARY_LABEL:-fit}-%j.out" "$summary_script" "$outdir" "$prefix")
  echo "sweep $sweep ${SUMMARY_LABEL:-fit} ${summary%%;*}"
  watch_hint "$name" "${SUMMARY_LABEL:-fit}" "$sweep" "${summary%%;*}"
}
