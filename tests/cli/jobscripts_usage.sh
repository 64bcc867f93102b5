# The sweep scripts (jobscripts/sweep.sh, grid-sweep.sh, markov-sweep.sh, train-sweep.sh, phase-sweep.sh,
# mlmc-sweep.sh) refuse a bad
# command line before they submit anything: one line on stderr, exit 2, no sbatch call. Covered: missing
# or empty arguments, an empty OUTDIR or one that cannot be made, empty lists and empty list items, a
# value twice in a list, an argument holding ` -- ` (the words meant to be separate), a second `--`, and
# list values taken literally (a `*` is not expanded against the files of the current directory). A good
# call of each script submits its jobs. No Slurm: a fake sbatch first on PATH records its arguments.
source "$(dirname "$0")/common.sh"

mkdir -p bin work
cat > bin/sbatch <<'SH'
#!/usr/bin/env bash
# The test's sbatch: one line per call, its arguments; a job id as --parsable prints it.
printf '%s\n' "$*" >> "$SBATCH_LOG"
echo 4242
SH
cat > bin/scontrol <<'SH'
#!/usr/bin/env bash
# The test's scontrol: `ping` answers as a controller that is $FAKE_CONTROLLER (UP unless set); nothing else.
[ "$1" = ping ] && { echo "Slurmctld(primary) at test is ${FAKE_CONTROLLER:-UP}"; exit 0; }
exit 1
SH
# An interpreter that cannot import numpy: Debian's without its site directories (-S).
printf '#!/bin/sh\nexec %s -S "$@"\n' "$PYTHON" > bin/bare-python
chmod +x bin/sbatch bin/scontrol bin/bare-python
export PATH="$scratch/bin:$PATH" SBATCH_LOG="$scratch/sbatch.log" TOKDYN_PYTHON="$PYTHON"
unset TOKDYN_SETUP FAKE_CONTROLLER
# Files named like list values: a list expanded as a glob in work/ would pick them up.
touch work/symmetric work/adamw
J=$SRC/jobscripts M=$SRC/input/markov-sweep.ini T=$SRC/input/train.ini C=$SRC/input/converge-depth.ini

# expect_usage REGEX SCRIPT ARGS...: run in work/, exit 2, one stderr line matching REGEX, nothing submitted.
expect_usage() {
  local regex=$1 script=$2 rc=0
  shift 2
  rm -f "$SBATCH_LOG"
  (cd work && bash "$J/$script" "$@") > out.txt 2> err.txt || rc=$?
  [ "$rc" = 2 ] || fail "$script $*: exit status $rc, expected 2; stderr: $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] && grep -qE "$regex" err.txt || fail "$script $*: expected one line /$regex/, got: $(cat err.txt)"
  [ ! -e "$SBATCH_LOG" ] || fail "$script $*: submitted: $(cat "$SBATCH_LOG")"
  echo "ok: $script $* -> $(cat err.txt)"
}

# expect_submitted CALLS REGEX SCRIPT ARGS...: exit 0, CALLS sbatch calls, the first matching REGEX.
expect_submitted() {
  local calls=$1 regex=$2 script=$3 rc=0
  shift 3
  rm -f "$SBATCH_LOG"
  (cd work && bash "$J/$script" "$@") > out.txt 2> err.txt || rc=$?
  [ "$rc" = 0 ] || fail "$script $*: exit status $rc; stderr: $(cat err.txt)"
  [ "$(wc -l < "$SBATCH_LOG")" = "$calls" ] || fail "$script $*: expected $calls sbatch calls: $(cat "$SBATCH_LOG")"
  head -n 1 "$SBATCH_LOG" | grep -qE -- "$regex" || fail "$script $*: first sbatch call not /$regex/: $(cat "$SBATCH_LOG")"
  grep -q "^logs: $scratch/work/out/[a-z]*-\(4242\|<job>\)_<task>.out" err.txt && grep -q "^watch: squeue -j 4242,4242" err.txt \
    || fail "$script $*: no lines saying where the logs go and how to watch the jobs: $(cat err.txt)"
  echo "ok: $script $* -> $(head -n 1 "$SBATCH_LOG")"
}

# Empty lists and empty items.
expect_usage "VALUES .*not ',,'" markov-sweep.sh eps "$M" out ",,"
expect_usage "VALUES .*not '1e-3,,1e-4'" markov-sweep.sh eps "$M" out "1e-3,,1e-4"
expect_usage "VALUES .*not '1e-3,1e-4,'" markov-sweep.sh eps "$M" out "1e-3,1e-4,"
expect_usage "VALUES .*not '1e-3, 1e-4'" markov-sweep.sh eps "$M" out "1e-3, 1e-4"
expect_usage "at least two values" markov-sweep.sh eps "$M" out "1e-3"
expect_usage "VALUES .*'1e-3' twice" markov-sweep.sh eps "$M" out "1e-3,1e-3"
expect_usage "SEEDS .*not ''" train-sweep.sh "$T" out "" ecd symmetric
expect_usage "OPTIMIZERS .*not ','" train-sweep.sh "$T" out 1 , symmetric
expect_usage "SYMMETRIES .*not 'symmetric,'" train-sweep.sh "$T" out 1 ecd symmetric,
expect_usage "SEEDS .*'1' twice" train-sweep.sh "$T" out 1,2,1 ecd symmetric

# List values are taken literally, then refused as unknown.
expect_usage "symmetry '\*' is not" train-sweep.sh "$T" out 1 ecd '*'
expect_usage "symmetry 'sym\*' is not" train-sweep.sh "$T" out 1 ecd 'sym*'
expect_usage "optimizer 'adam\?' is not" train-sweep.sh "$T" out 1 'adam?' symmetric

# ` -- ` inside one argument, and a second `--`.
expect_usage "' -- '" markov-sweep.sh eps "$M" out 1e-3,1e-4 "-p short -- --flow.time=5"
expect_usage "' -- '" train-sweep.sh "$T" out 1 ecd symmetric "--time=1:00 -- x"
expect_usage "' -- '" sweep.sh depth "$C" out 2 2 "a -- b"
expect_usage "' -- '" grid-sweep.sh out "a -- b"
expect_usage "more than one '--'" markov-sweep.sh eps "$M" out 1e-3,1e-4 -p short -- --flow.time=5 -- x
expect_usage "empty argument" sweep.sh depth "$C" out 2 2 -p "" -- --model.N=8

# Empty OUTDIR, an OUTDIR that cannot be made, a missing deck, missing arguments.
expect_usage "OUTDIR is empty" markov-sweep.sh eps "$M" "" 1e-3,1e-4
expect_usage "OUTDIR is empty" train-sweep.sh "$T" "" 1 ecd symmetric
expect_usage "OUTDIR is empty" sweep.sh depth "$C" "" 2 2
expect_usage "OUTDIR is empty" grid-sweep.sh ""
expect_usage "cannot create OUTDIR 'symmetric'" grid-sweep.sh symmetric
expect_usage "cannot create OUTDIR 'adamw/x'" sweep.sh depth "$C" adamw/x 2 2
expect_usage "DECK is empty" train-sweep.sh "" out 1 ecd symmetric
expect_usage "no deck 'nosuch.ini'" markov-sweep.sh eps nosuch.ini out 1e-3,1e-4
expect_usage "^markov-sweep.sh: usage:" markov-sweep.sh eps "$M" out
expect_usage "^train-sweep.sh: usage:" train-sweep.sh "$T" out 1 ecd -- -p short
expect_usage "^sweep.sh: usage:" sweep.sh depth "$C" -- 2 2 x
expect_usage "^grid-sweep.sh: usage:" grid-sweep.sh
expect_usage "^grid-sweep.sh: usage:" grid-sweep.sh -- -p short
[ ! -e work/out ] || fail "a refused call created work/out"

# What the jobs need is checked before anything is submitted (or an OUTDIR made): a Slurm controller, a
# binary that runs, an interpreter for the fit that imports numpy, h5py, matplotlib and scipy, a writable
# OUTDIR, and a dry run of the tasks (a bad value in the list, an output the run would refuse).
FAKE_CONTROLLER=DOWN expect_usage "^sweep.sh: no Slurm controller: start one with jobscripts/local-slurm.sh start$" \
  sweep.sh depth "$C" fresh 2 2
TOKDYN_PYTHON=$scratch/bin/bare-python expect_usage "TOKDYN_PYTHON '.*bare-python' cannot import numpy: set TOKDYN_PYTHON" \
  sweep.sh depth "$C" fresh 2 2
TOKDYN_PYTHON=$scratch/bin/bare-python expect_usage "cannot import numpy" markov-sweep.sh eps "$M" fresh 1e-3,1e-4
TOKDYN_PYTHON=$scratch/bin/bare-python expect_usage "cannot import numpy" train-sweep.sh "$T" fresh 1 ecd symmetric
TOKDYN_PYTHON=no-such-python expect_usage "no Python interpreter 'no-such-python'" train-sweep.sh "$T" fresh 1 ecd symmetric
TOKDYN=/bin/false expect_usage "the jobs' tokdyn '/bin/false' does not run" markov-sweep.sh eps "$M" fresh 1e-3,1e-4
TOKDYN_SETUP=false expect_usage "TOKDYN_SETUP 'false' failed" grid-sweep.sh fresh
expect_usage "OUTDIR '/proc/1' is not writable" sweep.sh width "$SRC/input/converge-width.ini" /proc/1 2 2
expect_usage "array task 1 of markov.sbatch would fail: tokdyn: error: deck key 'model.eps' = 'abc'" \
  markov-sweep.sh eps "$M" fresh 1e-3,abc
expect_usage "array task 0 of sweep-depth.sbatch would fail: tokdyn: error: .*'nosuch'" \
  sweep.sh depth "$C" fresh 2 2 --converge.distance=nosuch
mkdir -p work/taken && echo "not a run file" > work/taken/delta-0.h5
expect_usage "array task 0 of markov.sbatch would fail: tokdyn: error: .*taken/delta-0.h5" \
  markov-sweep.sh delta "$M" taken 0,0.05
expect_usage "array task 0 of grid.sbatch would fail: tokdyn: error: .*'model.N'" grid-sweep.sh fresh -- --model.N=0
[ ! -e work/fresh ] || fail "a refused submission left OUTDIR work/fresh behind"
[ "$(cat work/taken/delta-0.h5)" = "not a run file" ] || fail "a refused submission changed work/taken/delta-0.h5"

# local-slurm.sh status answers within 5 s, whether or not a controller runs.
start=$(date +%s%N)
timeout 30 bash "$J/local-slurm.sh" status > status.txt 2>&1 || true
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed" -lt 5000 ] || fail "local-slurm.sh status took $elapsed ms: $(cat status.txt)"
grep -q "^node: " status.txt || fail "local-slurm.sh status prints no node line: $(cat status.txt)"
echo "ok: local-slurm.sh status in $elapsed ms: $(grep '^node:' status.txt)"

# Good calls: the array and its fit or summary job, the sbatch options before `--`, the overrides after it.
expect_submitted 2 "^--parsable -p short --array=0-1 .*markov.sbatch .* eps 1e-3,1e-4 --flow.time=5$" \
  markov-sweep.sh eps "$M" out 1e-3,1e-4 -p short -- --flow.time=5
expect_submitted 2 "^--parsable --array=0-7 .*train.sbatch .* 1,2 ecd,adamw symmetric,bq$" \
  train-sweep.sh "$T" out 1,2 ecd,adamw symmetric,bq
expect_submitted 2 "^--parsable --array=0-3 .*sweep-depth.sbatch .* --model.N=8$" sweep.sh depth "$C" out 2 2 --model.N=8
# The memory is the job's node's to judge, not the submitting machine's: a limit no run fits is not refused here.
expect_submitted 2 "^--parsable --array=0-3 .*sweep-depth.sbatch .* --run.max_memory=1KB$" sweep.sh depth "$C" out 2 2 \
  --run.max_memory=1KB
P=$SRC/input/phase.ini
expect_usage "BLOCKS must be a positive whole number, not '0'" phase-sweep.sh "$P" out 0
expect_usage "array task 0 of phase.sbatch would fail: tokdyn: error: deck key 'phase.blocks' = '40': more blocks than the 30 betas" \
  phase-sweep.sh "$P" out 40
expect_submitted 2 "^--parsable -p short --array=0-2 .*phase.sbatch .*phase.ini .*/out --phase.blocks=3 --model.N=8$" \
  phase-sweep.sh "$P" out 3 -p short -- --model.N=8
grep -q "dependency=afterok:4242 .*phase-merge.sbatch .*/out .*/out/phase$" "$SBATCH_LOG" \
  || fail "phase-sweep.sh: no merge job after the array: $(cat "$SBATCH_LOG")"
# mlmc-sweep.sh: one task per eps (at least two, numbers), the dry run of each task, then the figure job.
L=$SRC/input/mlmc.ini
expect_usage "^mlmc-sweep.sh: usage:" mlmc-sweep.sh "$L" out
expect_usage "EPS .*not '1e-2,,5e-3'" mlmc-sweep.sh "$L" out 1e-2,,5e-3
expect_usage "at least two eps" mlmc-sweep.sh "$L" out 1e-2
expect_usage "EPS must be numbers" mlmc-sweep.sh "$L" out "1e-2,5e-3;rm"
expect_usage "array task 1 of mlmc.sbatch would fail: tokdyn: error: deck key 'mlmc.eps'" mlmc-sweep.sh "$L" fresh 1e-2,-1
expect_submitted 2 "^--parsable -p short --array=0-1 .*mlmc.sbatch .*mlmc.ini .*/out 1e-2,5e-3 --model.N=4$" \
  mlmc-sweep.sh "$L" out 1e-2,5e-3 -p short -- --model.N=4
grep -q "dependency=afterok:4242 .*mlmc-figure.sbatch .*/out .*/out/mlmc$" "$SBATCH_LOG" \
  || fail "mlmc-sweep.sh: no figure job after the array: $(cat "$SBATCH_LOG")"
[ ! -e work/fresh ] || fail "a refused mlmc sweep left OUTDIR work/fresh behind"
expect_submitted "$(ls "$SRC"/input/grid-*.ini | wc -l)" "^--parsable --hold --output=.*grid.sbatch .* --model.L=3$" \
  grid-sweep.sh out --hold -- --model.L=3
echo "jobscripts_usage: all checks passed"
