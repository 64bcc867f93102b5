# Shared by the CLI tests: a scratch directory per test, the binary, mpiexec, and checks.
# Environment (from CTest): TOKDYN, MPIEXEC, PYTHON, SRC.
set -euo pipefail
: "${TOKDYN:?}" "${MPIEXEC:?}" "${PYTHON:=/usr/bin/python3}" "${SRC:?}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Scripts run with arguments (restart.sh NP) get one directory per argument list, so ctest -j is safe.
name=$(basename "$0" .sh)${TEST_SUFFIX:-}${*:+$(printf -- "-%s" "$@")}
scratch="$PWD/cli-scratch/$name"
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch"

fail() { echo "FAIL: $*" >&2; exit 1; }
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

# No file in the scratch directory may claim status complete.
no_complete_file() {
  local f
  for f in *.h5 *.h5.part; do
    [ -e "$f" ] || continue
    if [ "$(status_of "$f" 2>/dev/null || echo unreadable)" = complete ]; then fail "$f claims status complete"; fi
  done
}
