#!/usr/bin/env bash
# The fuzz tests of ctest. run.sh build DIR: configures and builds tests/fuzz in DIR with clang++-15
# (exit 77, skipped, when the machine has no clang++-15). run.sh fuzz DIR TARGET RUNS: replays the
# checked-in corpus of TARGET, then tries RUNS inputs from a fixed seed (the same inputs on every machine:
# a CI failure is reproducible, never the luck of a slower machine); a crash prints the input and fails.
# Longer, random searches by hand: doc/testing.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 dir=$(realpath -m "$2")
case $mode in
  build)
    command -v clang++-15 > /dev/null || { echo "skipped: no clang++-15 (apt install clang-15 libfuzzer-15-dev)"; exit 77; }
    cmake -S "$here" -B "$dir" -DCMAKE_CXX_COMPILER=clang++-15 -DCMAKE_C_COMPILER=clang-15 \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
    cmake --build "$dir" -j2 ;;
  fuzz)
    target=$3 runs=$4
    binary=$dir/fuzz_$target
    [ -x "$binary" ] || { echo "skipped: $binary was not built (no clang++-15)"; exit 77; }
    work=$dir/work-$target
    rm -rf "$work" && mkdir -p "$work/found"
    # Open MPI's leaks are not ours (LeakSanitizer also fails under its threads); its signal handlers
    # would hide a crash from libFuzzer.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 OMPI_MCA_opal_signal= \
      TMPDIR=$work
    rc=0
    "$binary" -seed=1 -runs="$runs" -max_total_time=120 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$work/" "$work/found" "$here/corpus/$target" > "$work/log" 2>&1 || rc=$?
    grep -E "^stat::number_of_executed_units|^Done" "$work/log" || true
    if [ $rc -ne 0 ]; then
      grep -vE "^#[0-9]+|^INFO:" "$work/log" | tail -n 40
      for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [ -e "$f" ] || continue
        echo "fuzz_$target: input $(basename "$f") (base64 $(base64 -w0 "$f")): fix the reader, then add the input"
        echo "  to tests/fuzz/corpus/$target/ so that it is replayed on every run"
      done
      exit 1
    fi ;;
  *) echo "usage: run.sh build DIR | run.sh fuzz DIR TARGET RUNS" >&2; exit 2 ;;
esac
