# tokdyn rerun at 1 rank: the default deck's run repeated bit for bit by `tokdyn rerun FILE --check` (decks.sh
# does it for every shipped deck at 2 ranks), and what rerun refuses: another rank count, another binary's
# file, an unfinished run, an existing rerun output; a changed byte is found and named (exit 1).
source "$(dirname "$0")/common.sh"
run 1 transformer "$SRC/input/default.ini" --run.progress_interval=1000 --run.output=default.h5 > log.txt || fail "default: $(cat log.txt)"
run 1 rerun default.h5 --check > rerun.txt 2>&1 || fail "rerun --check at 1 rank: $(cat rerun.txt)"
grep -q "bit for bit" rerun.txt || fail "rerun --check said: $(cat rerun.txt)"
echo "ok: default.ini at 1 rank: $(grep 'bit for bit' rerun.txt)"

# The refusals, on the default deck's run of 1 rank.
expect_error 2 "was run on 1 rank: rerun it on as many \(mpiexec -n 1 tokdyn rerun default.h5\)" rerun default.h5
expect_error 2 "was run on 1 rank: rerun it on as many \(mpiexec -n 1 tokdyn rerun default.h5 --check\)" rerun \
  default.h5 --check  # the hint keeps the options given
expect_error 1 "output .default.rerun.h5. exists \(pass --force" rerun default.h5
run 1 rerun default.h5 --check --force > again.txt 2>&1 || fail "rerun --force: $(cat again.txt)"
run 1 rerun default.h5 --check --run.output=elsewhere.h5 > named.txt 2>&1 || fail "rerun to a named output: $(cat named.txt)"
grep -q "'elsewhere.h5' equals 'default.h5' bit for bit" named.txt || fail "rerun --run.output: $(cat named.txt)"
expect_error 2 "needs a run file" rerun
expect_error 2 "run file 'missing.h5' is missing" rerun missing.h5
expect_error 2 "[-]-check belongs to tokdyn rerun" transformer --check
"$PYTHON" - <<'PY'
import shutil, h5py
for name, attr, value in [("older.h5", "tokdyn_version", "0.0.1"), ("unfinished.h5", "status", "running")]:
    shutil.copy("default.h5", name)
    with h5py.File(name, "r+") as f:
        f.attrs[attr] = value
shutil.copy("default.h5", "changed.h5")
with h5py.File("changed.h5", "r+") as f:
    e = f["diagnostics/energy"]
    e[2] = e[2] * (1 + 2 ** -52)  # one ulp
PY
expect_error 2 "written by tokdyn 0.0.1 .* another build may give other bits" rerun older.h5
expect_error 2 "not complete \(status running\)" rerun unfinished.h5
# A changed value: exit 1 on every rank, the dataset named on one line.
set +e
"$MPIEXEC" -n 1 "$TOKDYN" rerun changed.h5 --check > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" = 1 ] || fail "rerun --check of a changed file: exit $rc, expected 1: $(cat err.txt)"
grep -q "differ: dataset 'diagnostics/energy' differs in" err.txt || fail "rerun --check: $(cat err.txt)"
echo "ok: a changed value -> $(grep 'tokdyn: error' err.txt)"

# rerun certifies only what it checked (markov at test size: a group attribute holds its results).
markov=(markov "$SRC/input/markov.ini" --flow.time=5 --flow.records=5)
run 1 "${markov[@]}" --run.output=m.h5 > /dev/null
# (a) an edited result attribute is a difference, not "equal bit for bit".
"$PYTHON" - <<'PY'
import shutil, h5py
shutil.copy("m.h5", "m-edited.h5")
with h5py.File("m-edited.h5", "r+") as f:
    f["markov"].attrs["final_loss"] = f["markov"].attrs["final_loss"] * (1 + 2 ** -52)
shutil.copy("m.h5", "m-ranks.h5")
with h5py.File("m-ranks.h5", "r+") as f:
    f.attrs["ranks"] = "two"
PY
set +e
"$MPIEXEC" -n 1 "$TOKDYN" rerun m-edited.h5 --check > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "attribute 'markov@final_loss' differs" err.txt || fail "an edited attribute: exit $rc: $(cat err.txt)"
echo "ok: an edited result attribute -> $(grep 'tokdyn: error' err.txt)"
# (f) a root attribute of the wrong type is an input error.
expect_error 1 "m-ranks.h5.*attribute 'ranks' is not a number" rerun m-ranks.h5
# (b) PETSc's logging options are not replayed into a database that started without them: no abort.
run 1 "${markov[@]}" --run.output=logged.h5 -log_view > /dev/null
run 1 rerun logged.h5 --check > logged.txt 2>&1 || fail "rerun of a -log_view run: exit $?: $(tail -n 5 logged.txt)"
grep -q "bit for bit" logged.txt || fail "rerun of a -log_view run: $(tail -n 3 logged.txt)"
# (c) run control (stop_at, checkpoint cadence) is not replayed: the rerun runs to the end.
run 1 "${markov[@]}" --run.output=stopped.h5 --run.stop_at=3 --run.checkpoint_every=2 > /dev/null
run 1 "${markov[@]}" --run.output=stopped.h5 --resume > /dev/null
run 1 rerun stopped.h5 --check > stopped.txt 2>&1 || fail "rerun of a stopped run: exit $?: $(tail -n 5 stopped.txt)"
grep -q "bit for bit" stopped.txt || fail "rerun of a stopped and resumed run: $(tail -n 3 stopped.txt)"
# (d) the rerun's output may not be the file it reruns.
expect_error 1 "is the file being rerun" rerun m.h5 --run.output=m.h5 --force
cmp -s m.h5 m-edited.h5 && fail "m.h5 was replaced"
# (e) a run continued on another rank count: said, and not certified bit for bit.
run 2 "${markov[@]}" --run.output=mixed.h5 --run.stop_at=2 > /dev/null
run 1 "${markov[@]}" --run.output=mixed.h5 --resume > /dev/null
[ "$("$PYTHON" -c "import h5py; print(h5py.File('mixed.h5','r').attrs['rank_history'])")" = "2,1" ] || fail "rank_history"
expect_error 1 "continued on other rank counts \(2,1\)" rerun mixed.h5 --check
# An input file changed since the run: refused, naming it.
printf 'abcabcabcabd%.0s' $(seq 100) > text.txt
text=(markov "$SRC/input/markov.ini" --markov.data=text --markov.text_file=text.txt --flow.time=2 --flow.records=2)
run 1 "${text[@]}" --run.output=t.h5 > /dev/null
printf 'x' >> text.txt
expect_error 1 "input file 'text.txt' \(markov.text_file\) is not the one the run 't.h5' was made from: 1200 bytes then, 1201 now" rerun t.h5
