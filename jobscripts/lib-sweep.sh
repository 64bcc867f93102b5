# Shared by the sweep scripts (sourced, not run): the sbatch options before a `--`, and the submission of an
# array with a job that starts only if every task succeeded (--dependency=afterok).
#
# The convention of every sweep script: SCRIPT ARGS... [sbatch options --] [--section.key=value ...]. Options
# for sbatch itself (-p/--partition, -A/--account, --time, --job-name, --comment, --qos...) come before a
# `--` and reach every job the script submits; what follows the `--` (everything, without one) goes to
# tokdyn as deck overrides. sbatch also reads SBATCH_PARTITION, SBATCH_ACCOUNT... from the environment.

# usage_error MESSAGE: one line on stderr, exit 2.
usage_error() { echo "$(basename "$0"): $*" >&2; exit 2; }

# split_sbatch_options ARGS...: sets sbatch_options to the arguments before a `--` (none without one) and
# task_arguments to the rest.
split_sbatch_options() {
  sbatch_options=()
  if [[ " $* " == *" -- "* ]]; then
    while [ "$1" != "--" ]; do sbatch_options+=("$1"); shift; done
    shift
  fi
  task_arguments=("$@")
}

# sweep_paths DECK OUTDIR: sets deck and outdir to their absolute paths (OUTDIR created) and exports TOKDYN_SRC
# (default: the repository holding this script) for the jobs.
sweep_paths() {
  export TOKDYN_SRC=${TOKDYN_SRC:-$(dirname "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)")}
  [ -f "$1" ] || usage_error "no deck '$1'"
  deck=$(realpath "$1")
  mkdir -p "$2"
  outdir=$(realpath "$2")
}

# submit_with_summary TASKS OUTDIR NAME TASK_SCRIPT SUMMARY_SCRIPT SUMMARY_PREFIX [TASK ARGS...]: the array
# 0 .. TASKS-1 of TASK_SCRIPT TASK ARGS (logs OUTDIR/NAME-<job>_<task>.out), then SUMMARY_SCRIPT OUTDIR
# SUMMARY_PREFIX once every task succeeded (log OUTDIR/<label>-<job>.out), both with sbatch_options. Prints
# "sweep <id> <label> <id>"; the label is $SUMMARY_LABEL (default fit).
submit_with_summary() {
  local tasks=$1 outdir=$2 name=$3 task_script=$4 summary_script=$5 prefix=$6
  shift 6
  local sweep summary
  sweep=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --array=0-$((tasks - 1)) \
    --output="$outdir/$name-%A_%a.out" "$task_script" "$@")
  sweep=${sweep%%;*}
  summary=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --dependency=afterok:"$sweep" \
    --output="$outdir/${SUMMARY_LABEL:-fit}-%j.out" "$summary_script" "$outdir" "$prefix")
  echo "sweep $sweep ${SUMMARY_LABEL:-fit} ${summary%%;*}"
}
