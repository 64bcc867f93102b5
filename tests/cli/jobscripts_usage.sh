# The sweep scripts (jobscripts/sweep.sh, grid-sweep.sh, markov-sweep.sh, train-sweep.sh) refuse a bad
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
chmod +x bin/sbatch
export PATH="$scratch/bin:$PATH" SBATCH_LOG="$scratch/sbatch.log"
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

# Good calls: the array and its fit or summary job, the sbatch options before `--`, the overrides after it.
expect_submitted 2 "^--parsable -p short --array=0-1 .*markov.sbatch .* eps 1e-3,1e-4 --flow.time=5$" \
  markov-sweep.sh eps "$M" out 1e-3,1e-4 -p short -- --flow.time=5
expect_submitted 2 "^--parsable --array=0-7 .*train.sbatch .* 1,2 ecd,adamw symmetric,bq$" \
  train-sweep.sh "$T" out 1,2 ecd,adamw symmetric,bq
expect_submitted 2 "^--parsable --array=0-3 .*sweep-depth.sbatch .* --model.N=8$" sweep.sh depth "$C" out 2 2 --model.N=8
expect_submitted "$(ls "$SRC"/input/grid-*.ini | wc -l)" "^--parsable --hold --output=.*grid.sbatch .* --model.L=3$" \
  grid-sweep.sh out --hold -- --model.L=3
echo "jobscripts_usage: all checks passed"
