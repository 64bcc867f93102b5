# The command line helps a user who got it wrong, and never runs something other than what was asked:
# "did you mean" for keys, values and commands; a deck given where the command belongs; a deck's
# "# command:" line against the command; bare tokdyn is a usage error; tokdyn decks lists every shipped
# deck; --dry-run resolves everything and writes nothing; --help lists each section once.
source "$(dirname "$0")/common.sh"

# Bare tokdyn: the usage on stderr, one error line, exit 2 on every rank.
expect_error 2 "no command given" 
grep -q "^usage: mpiexec -n P tokdyn <command>" err.txt || fail "bare tokdyn: no usage on stderr: $(cat err.txt)"
"$TOKDYN" --help > help.txt || fail "tokdyn --help exits $?"

# Did you mean: a command, a key on the command line or in a deck, a choice.
expect_error 2 "unknown command 'transformr' \(did you mean 'transformer'\?\)" transformr
expect_error 2 "unknown key 'model.width' on the command line \(did you mean 'mlp.width'\?\)" transformer --model.width=64
printf '[model]\nN = 8\n[mlp]\nwidht = 3\n' > typo.ini
expect_error 2 "deck 'typo.ini': unknown key 'mlp.widht' \(did you mean 'mlp.width'\?\)" transformer typo.ini
expect_error 2 "'mlp.activation' = 'gleu': unknown value \(choose one of .*\) \(did you mean 'gelu'\?\)" \
  transformer --mlp.activation=gleu

# A deck where the command belongs: the command line it meant, with the deck's own command.
expect_error 2 "unknown command '.*lyapunov.ini' \(the command comes first: tokdyn lyapunov .*lyapunov.ini \.\.\.\)" \
  "$SRC/input/lyapunov.ini"
printf '[model]\nN = 8\n' > plain.ini
expect_error 2 "the command comes first: tokdyn transformer plain.ini" plain.ini

# A deck that names its command is refused under another; a deck naming none runs under any.
expect_error 2 "deck '.*lyapunov.ini' is for tokdyn lyapunov \(its '# command:' line\), not tokdyn transformer" \
  transformer "$SRC/input/lyapunov.ini"
expect_error 2 "is for tokdyn converge .* not tokdyn sde" sde "$SRC/input/converge-depth.ini"

# tokdyn decks: every input/*.ini once, with the command its "# command:" line names (transformer without).
run 1 decks > decks.txt || fail "tokdyn decks: $(cat decks.txt)"
for deck in "$SRC"/input/*.ini; do
  name=$(basename "$deck")
  want=$(deck_command "$deck")
  grep -qE "^  $name +$want " decks.txt || fail "tokdyn decks: no line '$name $want': $(cat decks.txt)"
done
[ "$(grep -c '\.ini ' decks.txt)" = "$(ls "$SRC"/input/*.ini | wc -l)" ] || fail "tokdyn decks lists another count: $(cat decks.txt)"
TOKDYN_DECKS=/nonexistent expect_error 1 "deck directory '/nonexistent' cannot be listed" decks

# --dry-run: the resolved deck (overrides applied, defaults filled in), the memory per rank, the run and its
# files; nothing written, exit 0 on every rank; refused where there is no run.
mkdir dry && cd dry
run 2 transformer "$SRC/input/default.ini" --model.N=5000 --attention.enabled=true --dry-run > out.txt ||
  fail "--dry-run exit code: $(cat out.txt)"
for want in "^dry run of tokdyn transformer \(nothing is written\)" "^N = 5000$" "^enabled = true$" "^pairs = auto$" \
  "^# memory per rank: about .* of .* available; largest: " "^# run: tokdyn transformer: N = 5000, d = 4, L = 400" \
  "^# writes 'default.h5' \(as 'default.h5.part' until complete\)"; do
  grep -qE "$want" out.txt || fail "--dry-run output lacks /$want/: $(cat out.txt)"
done
grep -qxF "# work: 400 layers; attention (softmax): N^2 = 2.5e+07 pairs a layer, 1e+10 in all (5e+09 per rank); \
diagnostics on 201 layers, pair statistics exact (1.25e+07 pairs each); 9 token snapshots of 0.16 MB; \
MLP (relu, m = 512): 2.56e+06 token-neurons a layer" out.txt || fail "--dry-run's planned work: $(grep '^# work' out.txt)"
grep -qE "^# writes .* checkpoints 'default.ckpt.h5' \(on SIGTERM/SIGINT/SIGUSR1\)$" out.txt ||
  fail "--dry-run's checkpoints: $(grep '^# writes' out.txt)"
[ "$(ls | grep -v '^out.txt$' | wc -l)" = 0 ] || fail "--dry-run wrote: $(ls)"
# The planned diagnostic layers and snapshots are those the run then writes (cadences not dividing L).
plan=(--model.N=40 --model.L=7 --diagnostics.every=3 --diagnostics.snapshot_every=2 --diagnostics.pairs=sampled
      --diagnostics.sample_tokens=20 --run.checkpoint_every=4 --run.output=plan.h5)
run 2 transformer "$SRC/input/default.ini" "${plan[@]}" --dry-run > plan.txt || fail "--dry-run: $(cat plan.txt)"
grep -qE "^# work: 7 layers; attention off; diagnostics on 4 layers, pair statistics sampled \(190 pairs each\); \
5 token snapshots of 0.00128 MB;" plan.txt || fail "--dry-run's planned work: $(grep '^# work' plan.txt)"
grep -qE "checkpoints 'plan.ckpt.h5' \(every 4 steps, on SIGTERM/SIGINT/SIGUSR1\)$" plan.txt ||
  fail "--dry-run's checkpoints: $(grep '^# writes' plan.txt)"
run 2 transformer "$SRC/input/default.ini" "${plan[@]}" > run.txt || fail "the planned run: $(cat run.txt)"
written=$("$PYTHON" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r'); print(len(f['diagnostics/layer']), len(f['tokens/layer']))" plan.h5)
[ "$written" = "4 5" ] || fail "the run wrote diagnostics, snapshots '$written', the dry run planned '4 5'"
# A dry run makes the run's checks and exits as the run would: an existing output, a leftover checkpoint or
# more memory than allowed is refused with the run's message (exit 2; a live run's lock: lock.sh); with
# --force, or a --resume of the finished run (nothing to do), it says yes. Nothing is written or removed.
expect_error 2 "output 'plan.h5' exists \(pass --force to replace it\)" transformer "$SRC/input/default.ini" \
  "${plan[@]}" --dry-run
run 2 transformer "$SRC/input/default.ini" "${plan[@]}" --dry-run --force > force.txt || fail "--force: $(cat force.txt)"
run 2 transformer "$SRC/input/default.ini" "${plan[@]}" --dry-run --resume > resume.txt ||
  fail "--resume of the finished run: $(cat resume.txt)"
grep -q "is complete with this deck: nothing to do" resume.txt || fail "--dry-run --resume said: $(cat resume.txt)"
touch left.ckpt.h5
expect_error 2 "checkpoint 'left.ckpt.h5' exists: continue it with --resume, or pass --force" transformer \
  "$SRC/input/default.ini" --model.L=2 --run.output=left.h5 --dry-run
[ -e left.ckpt.h5 ] || fail "a dry run removed a checkpoint"
rm left.ckpt.h5
expect_error 2 "memory" transformer "$SRC/input/default.ini" --model.N=100000000 --run.max_memory=1MB --dry-run
[ "$(ls | grep -Ev '^(out|plan|run|force|resume)\.txt$|^plan\.(h5|log)$|^(codes|err)\.txt$' | wc -l)" = 0 ] ||
  fail "a dry run wrote: $(ls)"
cd ..
expect_error 2 "tokdyn bench keeps no run file or checkpoints: --dry-run does not apply" bench --dry-run

# --help: each section once (converge's schema adds [noise] and [converge] keys after other sections).
for c in transformer converge synchronize; do
  "$TOKDYN" "$c" --help > help.txt
  dup=$(grep '^\[' help.txt | sort | uniq -d)
  [ -z "$dup" ] || fail "$c --help lists sections twice: $dup"
done
echo "usage: all checks passed"
