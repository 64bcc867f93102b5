#!/usr/bin/env bash
# Submits the whole grid of doc/science.md section 6.5: one array job (15 tasks, jobscripts/grid.sbatch) per
# grid deck in input/, each task its own run file OUTDIR/<deck>-<activation>-f<factor>.h5.
#
#   jobscripts/grid-sweep.sh OUTDIR [sbatch options --] [--section.key=value ...]
#
# Options for sbatch itself (partition, account, time, job name) come before a `--` and reach every array;
# deck overrides come after it (everything, without a `--`), e.g.
#   jobscripts/grid-sweep.sh runs/grid -p short --time=01:00:00 -- --model.N=32
# First checks what the jobs need (a Slurm controller, the binary, a writable OUTDIR, `tokdyn --dry-run` of
# each array's first and last task): else one line, exit 2, nothing submitted. Prints one job id a deck (and
# on stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC (default: this repository),
# TOKDYN_LAUNCH, TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 1 "usage: jobscripts/grid-sweep.sh OUTDIR [sbatch options --] [--section.key=value ...]" "$@"
export TOKDYN_SRC=${TOKDYN_SRC:-$(dirname "$here")}
split_sbatch_options "${@:2}"  # refused arguments leave no OUTDIR behind
sweep_outdir "$1"
slurm_ready
# Each array's first and last task (relu at attention factor +1, no MLP at -1) are dry-run before any is
# submitted.
decks=("$(dirname "$here")"/input/grid-*.ini)
for deck in "${decks[@]}"; do
  check_jobs 15 2 no "$here/grid.sbatch" "$deck" "$outdir" ${task_arguments[@]+"${task_arguments[@]}"}
done
ids=()
for deck in "${decks[@]}"; do
  id=$(sbatch --parsable ${sbatch_options[@]+"${sbatch_options[@]}"} --output="$outdir/grid-%A_%a.out" \
    "$here/grid.sbatch" "$deck" "$outdir" ${task_arguments[@]+"${task_arguments[@]}"})
  echo "$(basename "$deck" .ini) ${id%%;*}"
  ids+=("${id%%;*}")
done
watch_hint grid "" "${ids[@]}"
