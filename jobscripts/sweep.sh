#!/usr/bin/env bash
# Submits a convergence sweep as a Slurm array (one task per level and replica, each its own result
# file) and the fit as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/sweep.sh depth|width|tokens DECK OUTDIR LEVELS REPLICAS [--section.key=value ...]
#
# depth, width: L = L0 2^level layers, m = m0 2^level MLP width, one rank a task; tokens: propagation of
# chaos, N = N0 2^level tokens against the mean-field solution, two ranks a task (the --ntasks of
# sweep-<study>.sbatch).
#
# Prints the two job ids. TOKDYN (the binary) and TOKDYN_SRC (this repository) pass to the jobs.
set -euo pipefail
study=${1:?usage: jobscripts/sweep.sh depth|width|tokens DECK OUTDIR LEVELS REPLICAS [overrides...]}
deck=${2:?deck}; outdir=${3:?outdir}; levels=${4:?levels}; replicas=${5:?replicas}
shift 5
case "$study" in depth|width|tokens) ;; *) echo "sweep.sh: study must be depth, width or tokens, not '$study'" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
export TOKDYN_SRC=${TOKDYN_SRC:-$(dirname "$here")}
deck=$(realpath "$deck")
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
sweep=$(sbatch --parsable --array=0-$((levels * replicas - 1)) --output="$outdir/$study-%A_%a.out" \
  "$here/sweep-$study.sbatch" "$deck" "$outdir" --converge.levels="$levels" --converge.replicas="$replicas" "$@")
sweep=${sweep%%;*}
fit=$(sbatch --parsable --dependency=afterok:"$sweep" --output="$outdir/fit-%j.out" \
  "$here/convergence.sbatch" "$outdir" "$outdir/convergence-$study")
echo "sweep $sweep fit ${fit%%;*}"
