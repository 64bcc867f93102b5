#!/usr/bin/env bash
# Submits a `tokdyn train` sweep as a Slurm array, one task per (seed, optimizer, symmetry), each its own
# run file, and the summary as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]
#
# SEEDS, OPTIMIZERS (ecd, ecdsep, sgdm, adamw) and SYMMETRIES (symmetric, bq, bqbv) are comma lists, e.g.
#   jobscripts/train-sweep.sh input/train.ini runs/train 1,2,3 ecd,sgdm,adamw symmetric,bq,bqbv -p short --
# Task files: OUTDIR/train-<optimizer>-<symmetry>-s<seed>.h5; the summary: OUTDIR/training.{json,csv} and
# OUTDIR/training-{losses,charges,alignment}.png. Options for sbatch itself (partition, account, time, job
# name) come before a `--` and reach the array and the summary.
# Prints the two job ids. The jobs get this environment: TOKDYN, TOKDYN_SRC (default: this repository),
# TOKDYN_LAUNCH, TOKDYN_PYTHON (the summary's interpreter), TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
[ $# -ge 5 ] || usage_error "usage: jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]"
seeds=$3 optimizers=$4 symmetries=$5
count() { local IFS=,; local -a a; read -r -a a <<< "$1"; echo "${#a[@]}"; }
for y in ${symmetries//,/ }; do
  case "$y" in symmetric|bq|bqbv) ;; *) usage_error "symmetry '$y' is not symmetric, bq or bqbv" ;; esac
done
for o in ${optimizers//,/ }; do
  case "$o" in ecd|ecdsep|sgdm|adamw) ;; *) usage_error "optimizer '$o' is not ecd, ecdsep, sgdm or adamw" ;; esac
done
tasks=$(( $(count "$seeds") * $(count "$optimizers") * $(count "$symmetries") ))
sweep_paths "$1" "$2"
shift 5
split_sbatch_options "$@"
SUMMARY_LABEL=summary submit_with_summary "$tasks" "$outdir" train "$here/train.sbatch" "$here/training.sbatch" \
  "$outdir/training" "$deck" "$outdir" "$seeds" "$optimizers" "$symmetries" ${task_arguments[@]+"${task_arguments[@]}"}
