#!/usr/bin/env bash
# Submits a `tokdyn markov` sweep as a Slurm array (one task per value of eps or delta, each its own run
# file) and the stage fit as a job that starts only if every task succeeded (--dependency=afterok).
#
#   jobscripts/markov-sweep.sh eps|delta DECK OUTDIR V1,V2,... [sbatch options --] [--section.key=value ...]
#
# eps: model.eps = V_i (onsets of the four stages against ln(1/eps), doc/science.md section 8.4);
# delta: markov.delta = V_i (the stage-IV family; the deck or the overrides give markov.family_c).
# Task i writes OUTDIR/<eps|delta>-i.h5; the fit writes OUTDIR/focus-dilution-<eps|delta>.{json,csv,png}.
# Options for sbatch itself (partition, account, time) come before a `--`, e.g.
#   jobscripts/markov-sweep.sh eps input/markov-sweep.ini runs/eps 1e-2,1e-3,1e-4,1e-5,1e-6 -p short -- --flow.time=400
# Prints the two job ids. TOKDYN (the binary), TOKDYN_SRC (this repository) and PYTHON pass to the jobs.
set -euo pipefail
usage="usage: jobscripts/markov-sweep.sh eps|delta DECK OUTDIR V1,V2,... [sbatch options --] [--section.key=value ...]"
kind=${1:?$usage}; deck=${2:?$usage}; outdir=${3:?$usage}; values=${4:?$usage}
shift 4
case "$kind" in eps|delta) ;; *) echo "markov-sweep.sh: the swept parameter must be eps or delta, not '$kind'" >&2; exit 2 ;; esac
[ -f "$deck" ] || { echo "markov-sweep.sh: no deck '$deck'" >&2; exit 2; }
IFS=, read -r -a list <<< "$values"
[ "${#list[@]}" -ge 2 ] || { echo "markov-sweep.sh: give at least two values (a comma list), not '$values'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib-sweep.sh"
split_sbatch_options "$@"
sweep_paths "$deck" "$outdir"
submit_with_summary "${#list[@]}" "$outdir" "$kind" "$here/markov.sbatch" "$here/focus-dilution.sbatch" \
  "$outdir/focus-dilution-$kind" "$deck" "$outdir" "$kind" "$values" "${task_arguments[@]}"
