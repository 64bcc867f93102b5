# Every kind of bad input stops every rank with exit code 2 and one line naming the problem,
# leaving no file that claims status complete.
source "$(dirname "$0")/common.sh"
base=(transformer --model.L=5 --run.progress_interval=100)

expect_error 2 "unknown key 'model.foo'" "${base[@]}" --model.foo=1
printf '[model]\nN = 8\n[mlp]\nwidht = 3\n' > typo.ini
expect_error 2 "deck 'typo.ini': unknown key 'mlp.widht'" transformer typo.ini
# A key given twice in a deck (in one section, or in two sections of the same name) is refused;
# overrides on the command line keep their last-wins rule.
printf '[model]\nN = 64\nL = 5\nN = 32\n' > twice.ini
expect_error 2 "^tokdyn: error: deck 'twice.ini': key 'model.N' is given twice$" transformer twice.ini
printf '[model]\nN = 64\n[mlp]\nwidth = 8\n[model]\nN = 32\n' > twice2.ini
expect_error 2 "^tokdyn: error: deck 'twice2.ini': key 'model.N' is given twice$" transformer twice2.ini
printf '[model]\nN = 8\nL = 2\n[mlp]\nwidth = 8\n[model]\nT = 0.5\n' > sections.ini
run 2 transformer sections.ini --model.N=16 --model.N=12 --run.output=sections.h5 > /dev/null
[ "$("$PYTHON" -c "import h5py; print(h5py.File('sections.h5', 'r')['tokens/X'].shape[1])")" = 12 ] ||
  fail "sections.ini with --model.N twice: the last override should give N = 12"
rm sections.h5
expect_error 2 "'model.N' = 'abc': not an integer" "${base[@]}" --model.N=abc
# A value the stored deck cannot give back ('#' starts a comment there; a line break ends the line): before,
# the run went on, and its rerun and resume read 'x' for 'x#y.h5' (found by fuzz_deck's round trip).
expect_error 2 "deck key 'run.output': its value holds '#' or a line break" "${base[@]}" '--run.output=x#y.h5'
expect_error 2 "deck key 'run.output': its value holds '#' or a line break" "${base[@]}" "--run.output=x
y.h5"
expect_error 2 "'model.T' = 'fast': not a finite real number" "${base[@]}" --model.T=fast
expect_error 2 "'model.N' = '0': out of range" "${base[@]}" --model.N=0
expect_error 2 "'model.d' = '1': out of range" "${base[@]}" --model.d=1
expect_error 2 "'model.L' = '0': out of range" "${base[@]}" --model.L=0
expect_error 2 "'model.T' = '0': out of range \(must be > 0\)" "${base[@]}" --model.T=0
expect_error 2 "'model.T' = '-1': out of range" "${base[@]}" --model.T=-1
expect_error 2 "'mlp.width' = '0': out of range" "${base[@]}" --mlp.width=0
expect_error 2 "'mlp.activation' = 'cubic': unknown value" "${base[@]}" --mlp.activation=cubic
expect_error 2 "'attention.style' = 'linear': unknown value" "${base[@]}" --attention.style=linear
expect_error 2 "deck file 'missing.ini' does not exist" transformer missing.ini
printf '[model]\nN 8\n' > broken.ini
expect_error 2 "deck 'broken.ini'" transformer broken.ini
expect_error 2 "unknown command 'transformr'" transformr
expect_error 2 "unknown option '--frobnicate'" transformer --frobnicate
# Single-dash options go to PETSc/SLEPc: one that nothing reads is refused, naming it (a deck key given with
# one dash is told to take two); PETSc's global options still work.
expect_error 2 "option '-model.N=32' is not read by PETSc/SLEPc in tokdyn transformer \(deck keys take two dashes: --model.N=32\)" \
  "${base[@]}" -model.N=32
expect_error 2 "option '-eps_nev' is not read by PETSc/SLEPc in tokdyn transformer \(this command uses no PETSc/SLEPc solver" \
  "${base[@]}" -eps_nev 4
expect_error 3 "options '-eps_type', '-model.N' are not read by PETSc/SLEPc in tokdyn transformer \(deck keys take two dashes: --model.N=8\)" \
  "${base[@]}" -eps_type lapack -model.N 8
expect_error 2 "option '-da_refine' is not read by PETSc/SLEPc in tokdyn meanfield \(this command configures a PETSc DMDA grid" \
  meanfield "$SRC/input/meanfield-circle.ini" --model.L=2 -da_refine 2
run 2 "${base[@]}" --model.L=2 --run.output=petsc.h5 -log_view -malloc_dump -options_left > petsc.txt 2>&1 ||
  fail "PETSc's global options refused: $(cat petsc.txt)"
grep -q "There are no unused options" petsc.txt || fail "-options_left: $(cat petsc.txt)"
grep -q "Performance Summary" petsc.txt || fail "-log_view: $(cat petsc.txt)"
rm petsc.h5

# Input files: missing, not HDF5, wrong dataset, wrong shape, NaN rows.
expect_error 2 "token file 'none.h5' is missing or not an HDF5 file" "${base[@]}" --tokens.init=file --tokens.file=none.h5
echo "not hdf5" > text.h5
expect_error 2 "token file 'text.h5' is missing or not an HDF5 file" "${base[@]}" --tokens.init=file --tokens.file=text.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
with h5py.File("tokens.h5", "w") as f:
    f["X"] = np.ones((64, 3))
    f["Y"] = np.ones((64, 4))
    f["Y"][5, 2] = np.nan
with h5py.File("weights.h5", "w") as f:
    f["Q"] = np.eye(4); f["K"] = np.eye(3)
PY
expect_error 2 "has no dataset 'Z'" "${base[@]}" --tokens.init=file --tokens.file=tokens.h5 --tokens.dataset=Z
expect_error 2 "dataset 'X' has shape \[64,3\], expected \[64,4\]" "${base[@]}" --tokens.init=file --tokens.file=tokens.h5
expect_error 2 "row 5 is zero or holds NaN" "${base[@]}" --tokens.init=file --tokens.file=tokens.h5 --tokens.dataset=Y
expect_error 2 "dataset 'K' has shape \[3,3\], expected \[4,4\]" "${base[@]}" --attention.query=file --attention.key=file \
  --attention.weights_file=weights.h5
expect_error 2 "needs attention.weights_file" "${base[@]}" --attention.value=file
expect_error 2 "checkpoint 'nockpt.h5' is missing" "${base[@]}" --restart nockpt.h5

# Run options a command does not take are refused; --help lists the ones it takes.
expect_error 2 "tokdyn weights keeps no run file or checkpoints: --resume does not apply" weights --resume
expect_error 2 "tokdyn bench writes no file: --force does not apply" bench --force
"$TOKDYN" weights --help > help.txt
grep -q -- "--force" help.txt && ! grep -q -- "--resume" help.txt || fail "weights --help: $(cat help.txt)"
"$TOKDYN" synchronize --help > help.txt
for o in --resume --restart --status --force; do grep -q -- "$o" help.txt || fail "synchronize --help lacks $o"; done

# An existing output is never replaced without --force.
run 1 "${base[@]}" --run.output=keep.h5 > /dev/null
cp keep.h5 keep.orig
expect_error 2 "output 'keep.h5' exists \(pass --force" "${base[@]}" --run.output=keep.h5
cmp keep.h5 keep.orig || fail "keep.h5 was modified"
rm keep.h5 keep.orig

# NaN appearing in the state (USA with V = 1e300 I overflows at beta = 700): failed, not complete.
expect_error 3 "NaN or Inf in the token state after layer 1" "${base[@]}" --attention.style=unnormalized \
  --attention.beta=700 --attention.value_scale=1e300 --mlp.enabled=false --run.output=nan.h5
[ "$(status_of nan.h5.part)" = failed ] || fail "nan.h5.part should say failed"
[ ! -e nan.h5 ] || fail "nan.h5 must not exist"
no_complete_file

# Mean-field solver: the grid lives on the circle, needs cells for every rank, scalar Q, K, V, a CFL it can meet.
mf=(meanfield "$SRC/input/meanfield-circle.ini" --model.L=2 --model.T=0.1 --run.output=mf.h5 --force)
expect_error 2 "meanfield.solver = grid needs model.d = 2" "${mf[@]}" --model.d=3
expect_error 2 "deck key 'meanfield.cells' = '5': out of range" "${mf[@]}" --meanfield.cells=5
expect_error 2 "needs attention.query to be a multiple of the identity" "${mf[@]}" --attention.query=gaussian
expect_error 2 "more than 2\^2 sub-steps" "${mf[@]}" --meanfield.max_refinement=2
# An input error every rank meets in the middle of a run: the partial file says failed, and why.
[ "$(status_of mf.h5.part)" = failed ] || fail "mf.h5.part should say failed after the sub-step error"
expect_error 2 "deck key 'meanfield.cfl' = '0.7'" "${mf[@]}" --meanfield.cfl=0.7
expect_error 2 "attention style fourier works on the circle" "${mf[@]}" --meanfield.solver=quadrature \
  --attention.style=fourier --model.d=3
# NaN in the mean-field state (USA with V = 1e300 I overflows at beta = 700): the partial file says failed.
expect_error 3 "NaN or Inf in the mean-field state after layer 1" "${mf[@]}" --meanfield.solver=quadrature \
  --meanfield.points=64 --attention.style=unnormalized --attention.beta=700 --attention.value_scale=1e300 \
  --noise.enabled=false --run.output=nanmf.h5
[ "$(status_of nanmf.h5.part)" = failed ] || fail "nanmf.h5.part should say failed"
[ ! -e nanmf.h5 ] || fail "nanmf.h5 must not exist"
no_complete_file

# attention.beta is also the beta of E_beta, which reaches e^beta: above log(DBL_MAX) = 709.78 every command that
# records it refuses the deck before any work (it used to write a complete file of Inf/NaN energies). Below it the
# energy is finite: no sum of e^beta-sized terms is formed (at beta = 700 with 256 tokens they used to overflow; the
# grid's at beta = 705 stopped the run as "NaN or Inf in the mean-field state").
beta_limit="deck key 'attention.beta' = '800': out of range \(must be <= 709.78[0-9]*: the interaction energy E_beta reaches e\^beta"
expect_error 2 "$beta_limit" "${base[@]}" --attention.beta=800 --run.output=b800.h5
expect_error 2 "$beta_limit" sde --model.L=5 --attention.beta=800 --run.output=b800.h5
expect_error 2 "$beta_limit" "${mf[@]}" --attention.beta=800 --run.output=b800.h5
expect_error 2 "$beta_limit" synchronize "$SRC/input/synchronization-bound.ini" --attention.beta=800 --run.output=b800.h5
expect_error 2 "$beta_limit" converge "$SRC/input/converge-tokens.ini" --attention.beta=800 --run.output=b800.h5
[ ! -e b800.h5 ] && [ ! -e b800.h5.part ] || fail "a refused beta left a run file"
run 2 "${base[@]}" --model.N=256 --attention.beta=700 --run.output=b700.h5 > /dev/null
run 2 "${mf[@]}" --model.T=0.01 --attention.beta=705 --run.output=b705.h5 > /dev/null
"$PYTHON" - <<'PY' || fail "E_beta near the largest beta"
import h5py, numpy as np
for name, low in (("b700.h5", 1e303), ("b705.h5", 1e305)):
    e = h5py.File(name, "r")["diagnostics/energy"][()]
    # Spread tokens: E_beta = e^beta S with S near 1/2 (e^700 / 2 = 5.1e303, e^705 / 2 = 7.6e305).
    assert np.all(np.isfinite(e)) and np.all(e > low), (name, e)
print("ok: E_beta finite at beta = 700 (256 tokens) and 705 (mean-field grid)")
PY
echo "bad_input: all cases passed"
