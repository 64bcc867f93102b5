# Shared by the CLI tests: a scratch directory per test, the binary, mpiexec, and checks.
# Environment (from CTest): TOKDYN, MPIEXEC, PYTHON, SRC.
set -uo pipefail; [ -n "${SOFT_FAIL:-}" ] || set -e
: "${TOKDYN:?}" "${MPIEXEC:?}" "${PYTHON:=/usr/bin/python3}" "${SRC:?}"
export PYTHONPATH="$SRC/tests/cli${PYTHONPATH:+:$PYTHONPATH}"  # the scripts' shared Python helpers
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Scripts run with arguments (restart.sh NP) get one directory per argument list, so ctest -j is safe.
name=$(basename "$0" .sh)${TEST_SUFFIX:-}${*:+$(printf -- "-%s" "$@")}
scratch="$PWD/cli-scratch/$name"
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch"

# SOFT_FAIL=1 reports every failed check and goes on (to list what an older binary gets wrong).
fail() { echo "FAIL: $*" >&2; [ -n "${SOFT_FAIL:-}" ] && return 0; exit 1; }
run() { local np=$1; shift; "$MPIEXEC" -n "$np" "$TOKDYN" "$@"; }
status_of() { "$PYTHON" -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['status'])" "$1"; }
compare() { "$PYTHON" "$SRC/tests/cli/compare_runs.py" "$@"; }

# expect_error NP REGEX ARGS...: exit code 2 on every rank and a message matching REGEX on stderr.
expect_error() {
  local np=$1 regex=$2; shift 2
  rm -f codes.txt
  # Each rank runs under a shell that records the rank's own exit code.
  "$MPIEXEC" -n "$np" bash -c '"$0" "$@"; echo $? >> codes.txt' "$TOKDYN" "$@" > out.txt 2> err.txt || true
  touch codes.txt  # no rank finished (killed by a timeout): reported as no exit codes below
  local codes
  codes=$(sort codes.txt | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
  [ "$codes" = "${np}x2 " ] || fail "'$*': exit codes per rank '$codes', expected ${np} x 2; stderr: $(cat err.txt)"
  grep -qE "$regex" err.txt || fail "'$*': stderr does not match /$regex/: $(cat err.txt)"
  [ "$(grep -c 'tokdyn: error' err.txt)" = 1 ] || fail "'$*': expected one error line, got: $(cat err.txt)"
  echo "ok: $* -> $(grep 'tokdyn: error' err.txt)"
}

# deck_command DECK: the command a shipped deck names in its "# command: NAME" line (default transformer).
deck_command() {
  local c
  c=$(sed -n 's/^# command: *\([a-z]*\).*/\1/p' "$1" | head -n 1)
  echo "${c:-transformer}"
}

# deck_test_size COMMAND: sets the array `extra` to the overrides that run a shipped deck of COMMAND at test
# size (the long studies reduced; a transformer deck to 40 layers: grid-d128 and fig1 run 150 and 2000).
deck_test_size() {
  extra=()
  case "$1" in
    converge) extra=(--converge.levels=2 --converge.replicas=2 --model.N=16 --meanfield.points=1024) ;;
    lyapunov) extra=(--lyapunov.replicas=100) ;;
    phase) extra=(--phase.systems=4 --phase.betas=3 --phase.records=5 --model.T=1) ;;
    synchronize) extra=(--synchronize.replicas=2 --model.N=16 --mlp.width=64 --model.L=100 --run.progress_interval=1000) ;;
    transformer) extra=(--model.L=40 --run.progress_interval=1000) ;;
    sde) extra=(--run.progress_interval=1000) ;;
    mlmc) extra=(--mlmc.eps=2e-2 --mlmc.min_levels=2 --mlmc.max_levels=4 --run.progress_interval=1000) ;;
    meanfield) extra=(--model.L=4 --model.T=0.2) ;;
    spectrum) extra=(--synthetic.d=256 --run.progress_interval=0) ;;
    markov) extra=(--flow.time=5 --flow.records=5) ;;
    train) extra=(--train.steps=20 --train.eval_every=10 --train.alignment_null=20 --run.progress_interval=1000) ;;
  esac
}

# No file in the scratch directory may claim status complete.
no_complete_file() {
  local f
  for f in *.h5 *.h5.part; do
    [ -e "$f" ] || continue
    if [ "$(status_of "$f" 2>/dev/null || echo unreadable)" = complete ]; then fail "$f claims status complete"; fi
  done
}

# The key that checkpoints and stops after a number of steps (overridable to replay a test on an older binary).
STOP=${STOP_KEY:-run.stop_at}

# wait_for FILE REGEX [SECONDS]: waits until FILE has a line matching REGEX.
wait_for() {
  local file=$1 regex=$2 limit=${3:-60} i
  for i in $(seq $((limit * 20))); do
    grep -qE "$regex" "$file" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "waited ${limit} s for /$regex/ in $file: $(cat "$file" 2>/dev/null)"
}

# signal_ranks SIGNAL PATTERN: signals the rank processes (not the launcher) whose command line matches.
signal_ranks() { pkill "-$1" -f "^$TOKDYN $2" || fail "no rank process matches '$2'"; }

# expect_job_error NP CODE REGEX ARGS...: the job (mpiexec) exits with CODE within 60 s, stderr has exactly
# one 'tokdyn: error' line, matching REGEX, and no internal-error wording.
expect_job_error() {
  local np=$1 code=$2 regex=$3; shift 3
  local rc=0 t0=$SECONDS
  timeout 60 "$MPIEXEC" -n "$np" "$TOKDYN" "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = "$code" ] || fail "'$*': exit code $rc, expected $code; stderr: $(cat err.txt)"
  grep -qE "$regex" err.txt || fail "'$*': stderr does not match /$regex/: $(cat err.txt)"
  [ "$(grep -c 'tokdyn: error' err.txt)" = 1 ] || fail "'$*': expected one error line, got: $(cat err.txt)"
  echo "ok ($((SECONDS - t0)) s): $* -> $(grep 'tokdyn: error' err.txt)"
}

# expect_script_error REGEX SCRIPT ARGS...: a postprocess script exits 2 with one stderr line matching REGEX.
expect_script_error() {
  local regex=$1 rc=0; shift
  "$PYTHON" "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = 2 ] || fail "$*: exit status $rc, expected 2; stderr: $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] && grep -qE "$regex" err.txt || fail "$*: expected one error line /$regex/, got: $(cat err.txt)"
  echo "ok: $(basename "$1") -> $(cat err.txt)"
}
