#!/usr/bin/env bash
# Submits a convergence sweep as a Slurm array (one task per level and replica, each its own result
# file) and the fit as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/sweep.sh depth|width|tokens DECK OUTDIR LEVELS REPLICAS [sbatch options --] [--section.key=value ...]
#
# depth, width: L = L0 2^level layers, m = m0 2^level MLP width, one rank a task; tokens: propagation of
# chaos, N = N0 2^level tokens against the mean-field solution, two ranks a task (the --ntasks of
# sweep-<study>.sbatch). Task i writes OUTDIR/<study>-i.h5; the fit OUTDIR/convergence-<study>.{json,csv,png}.
# Options for sbatch itself (partition, account, time, job name) come before a `--` and reach the array and
# the fit, e.g.
#   jobscripts/sweep.sh depth input/converge-depth.ini runs/depth 7 16 -p short --time=02:00:00 -- --model.N=64
# First checks what the jobs need (a Slurm controller, the binary, the fit's Python modules, a writable OUTDIR,
# `tokdyn --dry-run` of the tasks): else one line, exit 2, nothing submitted. Prints the two job ids (and on
# stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC (default: this repository),
# TOKDYN_LAUNCH, TOKDYN_PYTHON, TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 5 "usage: jobscripts/sweep.sh depth|width|tokens DECK OUTDIR LEVELS REPLICAS [sbatch options --] [--section.key=value ...]" "$@"
study=$1 levels=$4 replicas=$5
case "$study" in depth|width|tokens) ;; *) usage_error "study must be depth, width or tokens, not '$study'" ;; esac
[[ "$levels" =~ ^[1-9][0-9]*$ && "$replicas" =~ ^[1-9][0-9]*$ ]] || usage_error "LEVELS and REPLICAS must be positive integers, not '$levels' '$replicas'"
split_sbatch_options "${@:6}"  # refused arguments leave no OUTDIR behind
sweep_paths "$2" "$3"
submit_with_summary $((levels * replicas)) "$outdir" "$study" "$here/sweep-$study.sbatch" "$here/convergence.sbatch" \
  "$outdir/convergence-$study" "$deck" "$outdir" --converge.levels="$levels" --converge.replicas="$replicas" \
  ${task_arguments[@]+"${task_arguments[@]}"}
