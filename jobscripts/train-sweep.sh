#!/usr/bin/env bash
# Submits a `tokdyn train` sweep as a Slurm array, one task per (seed, optimizer, symmetry), each its own
# run file, and the summary as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]
#
# SEEDS, OPTIMIZERS (ecd, ecdsep, sgdm, adamw) and SYMMETRIES (symmetric, bq, bqbv) are comma lists, e.g.
#   jobscripts/train-sweep.sh input/train.ini runs/train 1,2,3 ecd,sgdm,adamw symmetric,bq,bqbv -p short --
# Task files: OUTDIR/train-<optimizer>-<symmetry>-s<seed>.h5; the summary: OUTDIR/training.{json,csv} and
# OUTDIR/training-{losses,charges,alignment}.png. Options for sbatch itself come before a `--`.
# Prints the two job ids. TOKDYN (the binary), TOKDYN_SRC (this repository) and PYTHON pass to the jobs.
set -euo pipefail
usage="usage: jobscripts/train-sweep.sh DECK OUTDIR SEEDS OPTIMIZERS SYMMETRIES [sbatch options --] [--section.key=value ...]"
deck=${1:?$usage}; outdir=${2:?$usage}; seeds=${3:?$usage}; optimizers=${4:?$usage}; symmetries=${5:?$usage}
shift 5
[ -f "$deck" ] || { echo "train-sweep.sh: no deck '$deck'" >&2; exit 2; }
count() { local IFS=,; local -a a; read -r -a a <<< "$1"; echo "${#a[@]}"; }
for y in ${symmetries//,/ }; do
  case "$y" in symmetric|bq|bqbv) ;; *) echo "train-sweep.sh: symmetry '$y' is not symmetric, bq or bqbv" >&2; exit 2 ;; esac
done
for o in ${optimizers//,/ }; do
  case "$o" in ecd|ecdsep|sgdm|adamw) ;; *) echo "train-sweep.sh: optimizer '$o' is not ecd, ecdsep, sgdm or adamw" >&2; exit 2 ;; esac
done
tasks=$(( $(count "$seeds") * $(count "$optimizers") * $(count "$symmetries") ))
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
split_sbatch_options "$@"
sweep_paths "$deck" "$outdir"
SUMMARY_LABEL=summary submit_with_summary "$tasks" "$outdir" train "$here/train.sbatch" "$here/training.sbatch" \
  "$outdir/training" "$deck" "$outdir" "$seeds" "$optimizers" "$symmetries" "${task_arguments[@]}"
