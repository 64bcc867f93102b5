#!/usr/bin/env bash
# Submits a `tokdyn markov` sweep as a Slurm array (one task per value of eps or delta, each its own run
# file) and the stage fit as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/markov-sweep.sh eps|delta DECK OUTDIR V1,V2,... [sbatch options --] [--section.key=value ...]
#
# eps: model.eps = V_i (onsets of the four stages against ln(1/eps), doc/science.md section 8.4);
# delta: markov.delta = V_i (the stage-IV family; the deck or the overrides give markov.family_c).
# At least two values, none empty or twice. Task i writes OUTDIR/<eps|delta>-i.h5; the fit writes
# OUTDIR/focus-dilution-<eps|delta>.{json,csv,png}.
# Options for sbatch itself (partition, account, time, job name) come before a `--` and reach the array and
# the fit, e.g.
#   jobscripts/markov-sweep.sh eps input/markov-sweep.ini runs/eps 1e-2,1e-3,1e-4,1e-5,1e-6 -p short -- --flow.time=400
# First checks what the jobs need (a Slurm controller, the binary, the fit's Python modules, a writable OUTDIR,
# `tokdyn --dry-run` of the tasks): else one line, exit 2, nothing submitted. Prints the two job ids (and on
# stderr where the logs go and how to watch the jobs). The jobs get this environment: TOKDYN, TOKDYN_SRC (default: this repository),
# TOKDYN_LAUNCH, TOKDYN_PYTHON (the fit's interpreter), TOKDYN_SETUP (jobscripts/lib-job.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
need_arguments 4 "usage: jobscripts/markov-sweep.sh eps|delta DECK OUTDIR V1,V2,... [sbatch options --] [--section.key=value ...]" "$@"
kind=$1 values=$4
case "$kind" in eps|delta) ;; *) usage_error "the swept parameter must be eps or delta, not '$kind'" ;; esac
comma_list VALUES "$values"
[ "${#items[@]}" -ge 2 ] || usage_error "give at least two values (a comma list), not '$values'"
split_sbatch_options "${@:5}"  # refused arguments leave no OUTDIR behind
sweep_paths "$2" "$3"
submit_with_summary "${#items[@]}" "$outdir" "$kind" "$here/markov.sbatch" "$here/focus-dilution.sbatch" \
  "$outdir/focus-dilution-$kind" "$deck" "$outdir" "$kind" "$values" ${task_arguments[@]+"${task_arguments[@]}"}
