#!/usr/bin/env bash
# Submits a `tokdyn train` sweep as a Slurm array, one task per (seed, optimizer, symmetry), each its own
# run file, and the summary as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]
#
# SEEDS, OPTIMIZERS (those `tokdyn train --help` lists: ecd, ecdsep, sgdm, adamw) and SYMMETRIES (symmetric, bq, bqbv) are comma lists (no empty
# item, no value twice), e.g.
#   jobscripts/train-sweep.sh input/train.ini runs/train 1,2,3 ecd,sgdm,adamw symmetric,bq,bqbv -p short --
# Task files: OUTDIR/train-<optimizer>-<symmetry>-s<seed>.h5; the summary: OUTDIR/training.{json,csv,md} and
# OUTDIR/training-{losses,charges,alignment}.png. Options for sbatch itself (partition, account, time, job
# name) come before a `--` and reach the array and the summary.
# First checks what the jobs need (a Slurm controller, the binary, the fit's Python modules, a writable OUTDIR,
# `tokdyn --dry-run` of the tasks): else one line, exit 2, nothing submitted. Prints the two job ids (and on
# stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC (default: this repository),
# TOKDYN_LAUNCH, TOKDYN_PYTHON (the summary's interpreter), TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 5 "usage: jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]" "$@"
seeds=$3 optimizers=$4 symmetries=$5
comma_list SEEDS "$seeds"
tasks=${#items[@]}
comma_list OPTIMIZERS "$optimizers"
# The optimizers the binary knows (built in or linked in), from its help.
tokdyn=${TOKDYN:-$(command -v tokdyn || echo "$here/../build/tokdyn")}
known=$("$tokdyn" train --help 2>/dev/null | sed -n 's/^  optimizer = .*(\([a-z0-9|-]*\))$/\1/p') || true
[ -n "$known" ] || usage_error "cannot list the optimizers of '$tokdyn' (set TOKDYN to the tokdyn binary)"
for o in "${items[@]}"; do
  case "|$known|" in *"|$o|"*) ;; *) usage_error "optimizer '$o' is not one of ${known//|/, }" ;; esac
done
tasks=$((tasks * ${#items[@]}))
comma_list SYMMETRIES "$symmetries"
for y in "${items[@]}"; do
  case "$y" in symmetric|bq|bqbv) ;; *) usage_error "symmetry '$y' is not symmetric, bq or bqbv" ;; esac
done
tasks=$((tasks * ${#items[@]}))
split_sbatch_options "${@:6}"  # refused arguments leave no OUTDIR behind
sweep_paths "$1" "$2"
SUMMARY_LABEL=summary submit_with_summary "$tasks" "$outdir" train "$here/train.sbatch" "$here/training.sbatch" \
  "$outdir/training" "$deck" "$outdir" "$seeds" "$optimizers" "$symmetries" ${task_arguments[@]+"${task_arguments[@]}"}
