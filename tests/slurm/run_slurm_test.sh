#!/usr/bin/env bash
# CTest driver: run one batch script on the local single-node Slurm and pass on its exit code.
#
#   run_slurm_test.sh <sbatch script> [sbatch args...] [-- [script args...]]
#
# Starts the local Slurm (jobscripts/local-slurm.sh start; idempotent), submits with
# `sbatch --wait --parsable`, prints the job's output file if the job failed (always with
# RUN_SLURM_TEST_VERBOSE=1) and exits with the job's exit code (1 if it was killed by a signal,
# cancelled or timed out; sbatch --wait cannot tell those apart). The daemons stay up afterwards.
#
# Defaults added unless the script (#SBATCH) or the arguments set them:
#   --output=<cwd>/<script name>-%j.out (array jobs: <script name>-%A_%a.out)
#   --time=$RUN_SLURM_TEST_TIME (minutes, default 15)   --job-name=<script name>
# Array jobs: sbatch --wait waits for all tasks and returns the largest task exit code; on failure
# every task's output file is printed.
# The time limit is a safety net: if this driver is SIGKILLed (ctest timeout), the job would
# otherwise occupy the node forever. Jobs of drivers that died are also cancelled on the next run.
# Environment: RUN_SLURM_TEST_NO_START=1 skips starting the local Slurm (use an existing one).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
local_slurm=$here/../../jobscripts/local-slurm.sh

usage() { echo "usage: $0 <sbatch script> [sbatch args...] [-- [script args...]]" >&2; exit 2; }
[ $# -ge 1 ] || usage
script=$1; shift
[ -f "$script" ] && [ -r "$script" ] || { echo "run_slurm_test: no readable script '$script'" >&2; exit 2; }

sbatch_args=()
script_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; script_args=("$@"); break; fi
  sbatch_args+=("$1"); shift
done

if [ "${RUN_SLURM_TEST_NO_START:-0}" != 1 ]; then
  # start prints progress on stderr; keep it, it is short and helps when start fails.
  "$local_slurm" start
fi

# True if option $1 (long form, e.g. --output) or $2 (short, e.g. -o; may be empty) is given on the command
# line or in an #SBATCH line of the script: command-line options override #SBATCH directives, so
# adding our default would silently replace the script's own choice.
has_opt() {
  local long=$1 short=${2:-} a re
  for a in ${sbatch_args[@]+"${sbatch_args[@]}"}; do
    case "$a" in "$long"|"$long"=*) return 0 ;; esac
    [ -n "$short" ] && case "$a" in "$short"*) return 0 ;; esac
  done
  re="$long([=[:space:]]|\$)"
  [ -n "$short" ] && re="$re|$short"
  grep -Eq "^#SBATCH([[:space:]].*)?[[:space:]]($re)" "$script"
}

name=$(basename "$script"); name=${name%.*}
defaults=()
is_array=0
has_opt --array -a && is_array=1
out_pattern=""
if ! has_opt --output -o; then
  if [ "$is_array" -eq 1 ]; then out_pattern="$PWD/$name-%A_%a.out"; else out_pattern="$PWD/$name-%j.out"; fi
  defaults+=("--output=$out_pattern")
fi
has_opt --time -t || defaults+=("--time=${RUN_SLURM_TEST_TIME:-15}")
has_opt --job-name -J || defaults+=("--job-name=$name")
# Tag the job with this driver's pid so a later run can cancel it if this driver was killed.
tag="run_slurm_test:$(hostname -s):$$"
has_opt --comment || defaults+=("--comment=$tag")

# Cancel leftovers of drivers that died without cleaning up (SIGKILL): they would block the node.
while read -r jid comment; do
  case "$comment" in
    "run_slurm_test:$(hostname -s):"*)
      pid=${comment##*:}
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "run_slurm_test: cancelling job $jid left by dead driver $pid" >&2
        scancel "$jid" 2>/dev/null || true
      fi ;;
  esac
done < <(squeue -h -o '%i %k' 2>/dev/null || true)

idfile=$(mktemp)
jobid=""
sbatch_pid=""
cleanup() { rm -f "$idfile"; }
# Killed (ctest timeout with SIGTERM, Ctrl-C): cancel the job so it does not hold the node.
on_signal() {
  local sig=$1
  trap - TERM INT HUP
  [ -n "$jobid" ] || jobid=$(head -n 1 "$idfile" 2>/dev/null | cut -d';' -f1)
  if [ -n "$jobid" ]; then
    echo "run_slurm_test: got SIG$sig, cancelling job $jobid" >&2
    scancel "$jobid" 2>/dev/null || true
  fi
  [ -n "$sbatch_pid" ] && kill "$sbatch_pid" 2>/dev/null || true
  cleanup
  exit $(( 128 + $(kill -l "$sig") ))
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP
trap cleanup EXIT

# In the background so the traps above run at once; --parsable prints "jobid" (or "jobid;cluster")
# as soon as the job is queued, then sbatch polls every 2 s until the job has finished.
sbatch --wait --parsable ${defaults[@]+"${defaults[@]}"} ${sbatch_args[@]+"${sbatch_args[@]}"} \
  "$script" ${script_args[@]+"${script_args[@]}"} >"$idfile" &
sbatch_pid=$!

# Learn the job id (and where its output goes) while the job still exists in slurmctld.
outputs=()
# StdOut/StdErr paths of every record of job $1 (one per started array task), one per line.
job_output_paths() {
  scontrol show job "$1" 2>/dev/null | sed -n 's/^ *Std\(Out\|Err\)=//p' | grep -v '^/dev/null$' || true
}
for _ in $(seq 1 100); do
  jobid=$(head -n 1 "$idfile" 2>/dev/null | cut -d';' -f1)
  [ -n "$jobid" ] && break
  kill -0 "$sbatch_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -n "$jobid" ]; then
  mapfile -t outputs < <(job_output_paths "$jobid")
  shown=${outputs[0]:-unknown}
  [ "$is_array" -eq 1 ] && shown=${out_pattern:-$shown}   # tasks' names are known only once they run
  echo "run_slurm_test: job $jobid submitted ($script), output $shown" >&2
fi

rc=0
wait "$sbatch_pid" || rc=$?
sbatch_pid=""
if [ -z "$jobid" ]; then
  echo "run_slurm_test: sbatch failed (exit $rc), no job submitted" >&2
  [ "$rc" -ne 0 ] || rc=1
  exit "$rc"
fi

if [ "$rc" -ne 0 ] || [ "${RUN_SLURM_TEST_VERBOSE:-0}" = 1 ]; then
  # One "JobState=.. Reason=.. ExitCode=.." group per record (array: per task).
  state=$(scontrol show job "$jobid" 2>/dev/null | grep -oE '(JobState|Reason|ExitCode)=[^ ]*' | tr '\n' ' ' || true)
  echo "run_slurm_test: job $jobid exit $rc ${state:+($state)}" >&2
  # Array tasks get their records (and expanded file names) only once they start: collect again
  # now, and with our own pattern also glob for the task files in case the records are purged.
  more=()
  mapfile -t more < <(job_output_paths "$jobid")
  outputs+=(${more[@]+"${more[@]}"})
  if [ "$is_array" -eq 1 ] && [ -n "$out_pattern" ]; then
    for f in "$PWD/$name-${jobid}"_*.out; do [ -e "$f" ] && outputs+=("$f"); done
  fi
  declare -A seen=()
  for f in ${outputs[@]+"${outputs[@]}"}; do
    [ -n "$f" ] && [ -z "${seen[$f]:-}" ] || continue
    seen[$f]=1
    if [ -f "$f" ]; then
      echo "===== $f =====" >&2
      cat "$f" >&2
      echo "===== end of $f =====" >&2
    elif [ "$is_array" -eq 0 ]; then
      echo "run_slurm_test: output file '$f' not found" >&2
    fi
  done
fi
exit "$rc"
