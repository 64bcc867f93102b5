# tokdyn rerun: every shipped deck run at 1 rank is repeated bit for bit by `tokdyn rerun FILE --check`
# (decks.sh does the same at 2 ranks), and what rerun refuses: another rank count, another binary's file,
# an unfinished run, an existing rerun output; a changed byte is found and named (exit 1).
source "$(dirname "$0")/common.sh"
for deck in "$SRC"/input/*.ini; do
  out=$(basename "$deck" .ini).h5
  command=$(deck_command "$deck")
  deck_test_size "$command"
  run 1 "$command" "$deck" --run.output="$out" "${extra[@]}" > log.txt || fail "$deck: $(cat log.txt)"
  run 1 rerun "$out" --check > rerun.txt 2>&1 || fail "$deck: rerun --check at 1 rank: $(cat rerun.txt)"
  grep -q "bit for bit" rerun.txt || fail "$deck: rerun --check said: $(cat rerun.txt)"
  echo "ok: $(basename "$deck") ($command) at 1 rank: $(grep 'bit for bit' rerun.txt)"
done

# The refusals, on the default deck's run of 1 rank.
expect_error 2 "was run on 1 rank: rerun it on as many \(mpiexec -n 1 tokdyn rerun default.h5\)" rerun default.h5
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
