#!/usr/bin/env bash
# Submits a `tokdyn phase` diagram as a Slurm array over blocks of its betas (task k runs block k of BLOCKS:
# phase.block, phase.blocks) and the merge as a job that starts only if every block succeeded
# (--dependency=afterok). A block's systems draw what they draw in the whole grid's run, so the merged result
# equals the single run's bit for bit.
#
#   jobscripts/phase-sweep.sh DECK OUTDIR BLOCKS [sbatch options --] [--section.key=value ...]
#
# Task files: OUTDIR/<deck>-block<k>.h5; the merge writes OUTDIR/<deck>.h5 (one result, every beta) and
# OUTDIR/<deck>.png. Options for sbatch itself (partition, account, time, job name, --ntasks) come before a `--`
# and reach the array and the merge, e.g.
#   jobscripts/phase-sweep.sh input/phase-peers.ini runs/phase 9 -p short --ntasks=4 --
# First checks what the jobs need (a Slurm controller, the binary, the merge's Python modules, a writable OUTDIR,
# `tokdyn --dry-run` of the tasks): else one line, exit 2, nothing submitted. Prints the two job ids (and on
# stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC
# (default: this repository), TOKDYN_LAUNCH, TOKDYN_PYTHON (the merge's interpreter), TOKDYN_SETUP
# (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 3 "usage: jobscripts/phase-sweep.sh DECK OUTDIR BLOCKS [sbatch options --] [--section.key=value ...]" "$@"
blocks=$3
[[ "$blocks" =~ ^[1-9][0-9]*$ ]] || usage_error "BLOCKS must be a positive whole number, not '$blocks'"
split_sbatch_options "${@:4}"  # refused arguments leave no OUTDIR behind
sweep_paths "$1" "$2"
SUMMARY_LABEL=merge submit_with_summary "$blocks" "$outdir" phase "$here/phase.sbatch" "$here/phase-merge.sbatch" \
  "$outdir/$(basename "$deck" .ini)" "$deck" "$outdir" --phase.blocks="$blocks" \
  ${task_arguments[@]+"${task_arguments[@]}"}
