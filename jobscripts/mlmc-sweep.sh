#!/usr/bin/env bash
# Submits the complexity test of `tokdyn mlmc` (doc/commands/mlmc.md) as a Slurm array, one task per eps: task i
# runs the multilevel estimate at the i-th eps and plain Monte Carlo at the finest depth it reached
# (jobscripts/mlmc.sbatch), and a figure job that starts only if every task succeeded (--dependency=afterok)
# draws them all: the complexity panel with its fitted exponents, and every estimate with its interval.
#
#   jobscripts/mlmc-sweep.sh DECK OUTDIR EPS,EPS,... [sbatch options --] [--section.key=value ...]
#
# At least two eps, none empty or twice. Task files: OUTDIR/<deck>-eps<eps>.h5 and OUTDIR/<deck>-eps<eps>-mc.h5;
# the figure OUTDIR/<deck>.png. Options for sbatch itself (partition, account, time, job name, --ntasks) come
# before a `--` and reach the array and the figure job, e.g.
#   jobscripts/mlmc-sweep.sh input/mlmc.ini runs/cx 2e-2,1e-2,5e-3,2e-3,1e-3 -p short --ntasks=4 -- --model.T=2
# First checks what the jobs need (a Slurm controller, the binary, the figure's Python modules, a writable OUTDIR,
# `tokdyn --dry-run` of the tasks): else one line, exit 2, nothing submitted. Prints the two job ids (and on
# stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC
# (default: this repository), TOKDYN_LAUNCH, TOKDYN_PYTHON, TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 3 "usage: jobscripts/mlmc-sweep.sh DECK OUTDIR EPS,EPS,... [sbatch options --] [--section.key=value ...]" "$@"
eps_list=$3
comma_list EPS "$eps_list"
[ "${#items[@]}" -ge 2 ] || usage_error "give at least two eps (a comma list), not '$eps_list'"
for eps in "${items[@]}"; do
  [[ "$eps" =~ ^[0-9.eE+-]+$ ]] || usage_error "EPS must be numbers separated by commas, not '$eps_list'"
done
split_sbatch_options "${@:4}"  # refused arguments leave no OUTDIR behind
sweep_paths "$1" "$2"
SUMMARY_LABEL=figure submit_with_summary "${#items[@]}" "$outdir" mlmc "$here/mlmc.sbatch" "$here/mlmc-figure.sbatch" \
  "$outdir/$(basename "$deck" .ini)" "$deck" "$outdir" "$eps_list" ${task_arguments[@]+"${task_arguments[@]}"}
