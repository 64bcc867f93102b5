# Shared by the sweep scripts (sourced, not run): the sbatch options before a `--`, and the submission of an
# array with a job that starts only if every task succeeded (--dependency=afterok).
#
# The convention of every sweep script: SCRIPT ARGS... [sbatch options --] [--section.key=value ...]. Options
# for sbatch itself (-p/--partition, -A/--account, --time, --job-name, --comment, --qos...) come before a
# `--` and reach every job the script submits; what follows the `--` (everything, without one) goes to
# tokdyn as deck overrides. sbatch also reads SBATCH_PARTITION, SBATCH_ACCOUNT... from the environment.
# A bad command line (a missing or empty argument, an empty item or a value twice in a comma list, an argument
# holding ` -- `, a second `--`) is refused before anything is submitted or created: one line on stderr, exit 2.

# usage_error MESSAGE: one line on stderr, exit 2.
usage_error() { echo "$(basename "$0"): $*" >&2; exit 2; }

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

# sweep_outdir OUTDIR: sets outdir to its absolute path, created.
sweep_outdir() {
  [ -n "$1" ] || usage_error "OUTDIR is empty"
  mkdir -p -- "$1" 2>/dev/null || usage_error "cannot create OUTDIR '$1'"
  outdir=$(realpath -- "$1")
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
# SUMMARY_PREFIX once every task succeeded (log OUTDIR/<label>-<job>.out), both with sbatch_options. Prints
# "sweep <id> <label> <id>"; the label is $SUMMARY_LABEL (default fit).
submit_with_summary() {
  local tasks=$1 outdir=$2 name=$3 task_script=$4 summary_script=$5 prefix=$6
  shift 6
  local sweep summary
  [ "$tasks" -ge 1 ] || usage_error "no task to submit"
  sweep=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --array=0-$((tasks - 1)) \
    --output="$outdir/$name-%A_%a.out" "$task_script" "$@")
  sweep=${sweep%%;*}
  summary=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --dependency=afterok:"$sweep" \
    --output="$outdir/${SUMMARY_LABEL:-fit}-%j.out" "$summary_script" "$outdir" "$prefix")
  echo "sweep $sweep ${SUMMARY_LABEL:-fit} ${summary%%;*}"
}
