#!/usr/bin/env bash
# tokdyn markov (doc/science.md section 8) at test size: the flow's claims from its run files.
# - eps -> 0: the initial loss is ln d, the attention uniform; the loss never increases along the flow;
# - stage I: log sigma_1(W0) grows at the rate sigma* (the top singular value of G, printed next to
#   sigma_1 = |pi| |pi - 1/d|) within 2 %, u_1(W0) aligns with u_1(G) (cos > 0.999), |WQ| stays at its
#   initial scale; the stage-I time moves by ln(10)/sigma* per decade of eps (3 %);
# - the detected onsets come in order: t_I < t_II < t_III for eps = 1e-3, 1e-4, 1e-5, and < t_IV with
#   delta = 0.05; before focus |WQ| grows at the focus rate sigma_max(W0^T H W0) (2 %), which bounds the
#   attention maps' growth rate at every record;
# - conserved quantities: under RK at tight tolerance C_m and C_k drift at the tolerance's level; under
#   gradient descent the drift halves with lr;
# - 1, 2 and 3 ranks agree (1e-12); stopped and resumed at 2 ranks: bit for bit; a text run on the shipped text;
#   (the claims above are checked on 1-rank runs: ranks that wait on each other spin on the test machine's cores)
# - the console shows record lines at the progress cadence, the log every one;
# - weights out and in: WQ, WK, W1 stored at flow.weights_every; a run from model.init_file (a run file or a
#   plain HDF5 file) starts at those weights, a stationary start stays, bad files are refused;
# - dense output: the trajectory independent of the records, close to the matched one, resumed bit for bit.
source "$(dirname "$0")/common.sh"
D="$SRC/input/markov.ini"

run 1 markov "$D" --flow.time=30 --flow.records=30 --model.eps=1e-6 --run.output=stage1.h5 > stage1.out
grep -q "sigma\* = " stage1.out || fail "no stage-I line: $(cat stage1.out)"
# The onsets' dependence on the thresholds is printed; an onset read between records too far apart is warned
# about (t_I about 16 with records 20 apart), one between close records not; the thresholds are deck keys,
# written into the run file's criteria.
grep -q "^stage onsets with each threshold halved and doubled (stages.\*): t_I " stage1.out \
  || fail "no sensitivity line: $(grep stage stage1.out)"
! grep -q "^warning: t_I" stage1.out || fail "a warning with records 1 apart: $(grep warning stage1.out)"
run 1 markov "$D" --flow.time=100 --flow.records=5 --stages.loss_drop=0.2 --run.output=coarse.h5 > coarse.out
grep -q "^warning: t_I = [0-9.]* is read between records 20 apart" coarse.out || fail "coarse records: $(grep -E 'stages|warning' coarse.out)"
"$PYTHON" -c "import h5py; assert '0.2 below ln d' in h5py.File('coarse.h5')['markov'].attrs['stage_criteria']" \
  || fail "stage_criteria does not name stages.loss_drop = 0.2"
# Record lines at the progress cadence (default 10 s: a short run shows records 0, 1 and the last), every
# one in the run's log.
shown=$(grep -c "^record [0-9]*/30: t = " stage1.out)
logged=$(grep -c "^record [0-9]*/30: t = " stage1.log)
[ "$shown" -le 3 ] && [ "$logged" = 31 ] || fail "record lines: $shown on the console (expected <= 3), $logged in the log (31)"
"$PYTHON" - stage1.h5 <<'PY' || fail "stage I"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
g, dg = f["markov"], f["diagnostics"]
t, loss = dg["time"][()], dg["loss"][()]
sigma = g.attrs["sigma_star"]
print(f"sigma* = {sigma:.6f}, sigma_1 = {g.attrs['sigma_1']:.6f}, predicted t_I = {g.attrs['t_I_predicted']:.3f}")
assert abs(loss[0] - np.log(4)) < 1e-9, loss[0]
assert abs(dg["entropy"][0] - 1) < 1e-9
assert np.all(np.diff(loss) <= 1e-12), np.diff(loss).max()
# Growth of the top singular value of W0 well inside stage I (t in [5, 20], before t_I ~ 30).
s0 = g["sv_w0"][:, 0]
k = (t >= 5) & (t <= 20)
rate = np.polyfit(t[k], np.log(s0[k]), 1)[0]
print(f"measured growth rate of sigma_1(W0): {rate:.6f} against sigma* {sigma:.6f} ({100 * (rate / sigma - 1):+.3f} %)")
assert abs(rate / sigma - 1) < 0.02
# The other directions decay at e^{-(sigma_1 - sigma_2) t} relative to u_1(G): aligned from t ~ 10 on.
cos = dg["cos_w0_g"][()][(t >= 10) & (t <= 20)]
print(f"cos(u1(W0), u1(G)) over t in [10, 20]: min {cos.min():.6f}")
assert cos.min() > 0.999
wq = dg["norm_wq"][()]
assert wq[k].max() < 2 * wq[0], (wq[0], wq[k].max())
PY

# The stage-I time against eps: the loss falls to 0.1 below ln d at t_I(eps); one decade of eps moves it by
# ln(10)/sigma*. Every stage in order (s = 12 keeps the population small: 1 820 items).
for e in 1e-3 1e-4 1e-5; do
  run 1 markov "$D" --markov.s=12 --flow.time=320 --flow.records=1600 --model.eps=$e --run.output=eps$e.h5 > eps$e.log
done
run 1 markov "$D" --markov.s=12 --flow.time=400 --flow.records=200 --model.eps=1e-3 --markov.family_c=1,0,-1 \
  --markov.delta=0.05 --run.output=delta.h5 > delta.log
"$PYTHON" - eps1e-3.h5 eps1e-4.h5 eps1e-5.h5 delta.h5 <<'PY' || fail "stages"
import sys, h5py, numpy as np
onsets = []
for name in sys.argv[1:4]:
    f = h5py.File(name, "r")
    g = f["markov"]
    t, loss = f["diagnostics/time"][()], f["diagnostics/loss"][()]
    level = np.log(4) - 0.1
    i = np.argmax(loss < level)
    onsets.append(t[i - 1] + (t[i] - t[i - 1]) * (loss[i - 1] - level) / (loss[i - 1] - loss[i]))
    sigma = g.attrs["sigma_star"]
    stages = [g.attrs[k] for k in ("t_I", "t_II", "t_III")]
    print(name, "t_I, t_II, t_III =", np.round(stages, 3), "predicted t_I", round(g.attrs["t_I_predicted"], 3),
          "stage-I rate", np.round(g["stage_I_rate"][()], 5), "sigma*", round(sigma, 5))
    assert abs(stages[0] - onsets[-1]) < 1e-12
    assert stages[0] < stages[1] < stages[2], stages
    assert abs(g["stage_I_rate"][0] / sigma - 1) < 0.02
# The focus rate sigma_max(W0^T H W0) bounds the growth rate of the attention maps at every record (1e-12), and
# that rate is what the records show: central differences of ln sqrt(|WQ|^2 + |WK|^2) over records 0.2 apart
# (O(h^2): 1e-4 of the rate's size). Over the second half of [t_I, t_II] |WQ| grows at the focus rate once
# WQ, WK have turned to A's top singular pair, which takes longer the larger eps is: within 2 % at eps = 1e-4
# and 1e-5 (measured -0.35 % and -0.08 %; -5.7 % at 1e-3, not tested).
for name in sys.argv[2:4]:
    f = h5py.File(name, "r")
    dg = f["diagnostics"]
    t, rate, qk = dg["time"][()], dg["focus_rate"][()], dg["qk_rate"][()]
    size = 0.5 * np.log(dg["norm_wq"][()] ** 2 + dg["norm_wk"][()] ** 2)
    fd = (size[2:] - size[:-2]) / (t[2:] - t[:-2])
    grown, predicted = f["markov/focus_growth"][0], f["markov"].attrs["focus_rate"]
    print(name, f"focus: |WQ| grows at {grown:.6f} against the focus rate {predicted:.6f} ({100 * (grown / predicted - 1):+.2f} %);",
          f"records' rate against qk_rate {abs(fd - qk[1:-1]).max():.2e}")
    assert np.all(qk <= rate * (1 + 1e-12) + 1e-300), (qk - rate).max()
    assert abs(fd - qk[1:-1]).max() < 1e-3 * abs(qk).max()
    assert abs(grown / predicted - 1) < 0.02
shifts = np.diff(onsets)
print("stage-I onsets", np.round(onsets, 4), "shifts per decade", np.round(shifts, 4), "predicted", np.log(10) / sigma)
assert np.all(np.abs(shifts / (np.log(10) / sigma) - 1) < 0.03)
g = h5py.File(sys.argv[4], "r")["markov"]
four = [g.attrs[k] for k in ("t_I", "t_II", "t_III", "t_IV")]
print("delta = 0.05: t_I .. t_IV =", np.round(four, 3))
assert four[0] < four[1] < four[2] < four[3], four
PY

# Conserved quantities: RK at rtol 1e-10 against gradient descent at lr and lr/2.
run 1 markov "$D" --flow.time=20 --flow.records=4 --model.eps=0.1 --flow.rtol=1e-10 --flow.atol=1e-14 \
  --run.output=rk.h5 > rk.log
run 1 markov "$D" --flow.time=20 --flow.records=4 --model.eps=0.1 --flow.method=gd --flow.lr=0.02 --run.output=gd1.h5 > gd1.log
run 1 markov "$D" --flow.time=20 --flow.records=4 --model.eps=0.1 --flow.method=gd --flow.lr=0.01 --run.output=gd2.h5 > gd2.log
"$PYTHON" - rk.h5 gd1.h5 gd2.h5 <<'PY' || fail "conservation"
import sys, h5py
d = [h5py.File(n, "r")["diagnostics"] for n in sys.argv[1:]]
rk, g1, g2 = (max(x["drift_cm"][-1], x["drift_ck"][-1]) for x in d)
print(f"drift of C_m, C_k at t = 20: RK (rtol 1e-10) {rk:.3e}; GD lr 0.02 {g1:.3e}, lr 0.01 {g2:.3e}, ratio {g1 / g2:.3f} (expected 2)")
assert rk < 1e-7
assert abs(g1 / g2 - 2) < 0.2
assert all(x["loss"][-1] < x["loss"][0] for x in d)
PY

# Rank independence and restart.
for np in 1 3; do
  run $np markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --run.output=np$np.h5 > np$np.log
done
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --run.output=np2.h5 > np2.log
compare np1.h5 np2.h5 --tol 1e-12 || fail "1 and 2 ranks differ"
compare np1.h5 np3.h5 --tol 1e-12 || fail "1 and 3 ranks differ"
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --run.output=stop.h5 --$STOP=4 > stop.log
[ "$(status_of stop.h5.part)" = checkpointed ] || fail "stop_at: not checkpointed"
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --run.output=stop.h5 --resume > resume.log
compare np2.h5 stop.h5 --tol 0 || fail "resumed run differs from the uninterrupted one"
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --flow.method=gd --flow.lr=0.05 --run.output=gdfull.h5 > /dev/null
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --flow.method=gd --flow.lr=0.05 --run.output=gdstop.h5 --$STOP=3 > /dev/null
run 2 markov "$D" --flow.time=25 --flow.records=10 --model.eps=1e-3 --flow.method=gd --flow.lr=0.05 --run.output=gdstop.h5 --resume > /dev/null
compare gdfull.h5 gdstop.h5 --tol 0 || fail "resumed gd run differs"

# Dense output: the integrator's steps do not depend on the records (10 or 50 records: the record at
# t = 25 bit for bit the same, and the step counts equal); the records agree with the matched ones to the
# tolerance (rtol 1e-8: 1e-6 on the loss); stopped and resumed (the last step replayed): bit for bit.
dense=(--flow.time=25 --model.eps=1e-3 --flow.output=dense)
run 1 markov "$D" "${dense[@]}" --flow.records=10 --run.output=dense10.h5 > dense10.log
run 1 markov "$D" "${dense[@]}" --flow.records=50 --run.output=dense50.h5 > dense50.log
run 1 markov "$D" "${dense[@]}" --flow.records=10 --run.output=densestop.h5 --$STOP=4 > /dev/null
[ "$(status_of densestop.h5.part)" = checkpointed ] || fail "dense stop_at: not checkpointed"
run 1 markov "$D" "${dense[@]}" --flow.records=10 --run.output=densestop.h5 --resume > /dev/null
compare dense10.h5 densestop.h5 --tol 0 || fail "resumed dense run differs from the uninterrupted one"
"$PYTHON" - dense10.h5 dense50.h5 np2.h5 <<'PY' || fail "dense output"
import sys, h5py, numpy as np
d10, d50, match = (h5py.File(p, "r") for p in sys.argv[1:])
t10, t50 = d10["diagnostics/time"][()], d50["diagnostics/time"][()]
assert np.array_equal(t10, np.linspace(0, 25, 11)) and t50[-1] == 25, (t10, t50[-1])
e10, e50 = d10["markov/embedding"][()], d50["markov/embedding"][()]
assert np.array_equal(e10[-1], e50[-1]), abs(e10[-1] - e50[-1]).max()
assert np.array_equal(e10, e50[::5]), abs(e10 - e50[::5]).max()
s10, s50 = d10["diagnostics/steps"][()], d50["diagnostics/steps"][()]
assert s10[-1] == s50[-1], (s10[-1], s50[-1])
diff = abs(d10["diagnostics/loss"][()] - match["diagnostics/loss"][()]).max()
print(f"dense: records 10 and 50 identical at shared times, {int(s10[-1])} steps either way "
      f"(matched: {int(match['diagnostics/steps'][-1])}); |loss dense - matched| <= {diff:.2e}")
assert diff < 1e-6, diff
PY

# A sample loss, -ts_* options, a text run, errors.
run 1 markov "$D" --flow.time=5 --flow.records=5 --markov.loss=sample --markov.N=500 --run.output=sample.h5 -ts_rk_type 3bs > sample.log
run 1 markov "$SRC/input/markov-text.ini" --flow.time=2 --flow.records=2 --run.output=text.h5 > text.log
grep -q "tokdyn markov: text" text.log || fail "text banner: $(cat text.log)"
# Words: the 49 most frequent words and punctuation marks of the shipped text and <unk>, d = 50.
run 1 markov "$SRC/input/markov-text.ini" --markov.tokenizer=words --markov.vocabulary_max=50 --flow.time=2 \
  --flow.records=2 --run.output=words.h5 > words.log
grep -q "tokdyn markov: text .*, d = 50," words.log || fail "words banner: $(head -n 2 words.log)"
"$PYTHON" -c "
import h5py
v = h5py.File('words.h5', 'r')['markov'].attrs['vocabulary'].split('\n')[:-1]
assert len(v) == 50 and v[-1] == '<unk>' and '.' in v and all(' ' not in w for w in v), v" || fail "word vocabulary"
expect_error 2 "markov.pi must sum to 1" markov "$D" --markov.pi=0.5,0.4 --run.output=bad.h5
expect_error 2 "exceed markov.max_states" markov "$D" --markov.s=4000 --run.output=bad.h5
expect_error 2 "whole number of steps" markov "$D" --flow.method=gd --flow.lr=0.07 --run.output=bad.h5
expect_error 2 "flow.output = dense needs flow.method = rk" markov "$D" --flow.output=dense --flow.method=gd --run.output=bad.h5
expect_error 2 "must stay matchstep" markov "$D" --run.output=bad.h5 -ts_exact_final_time interpolate
expect_error 2 "cannot be opened" markov "$SRC/input/markov-text.ini" --markov.text_file=nothing.txt --run.output=bad.h5

# Weights out and in. stage1.h5 (30 records, flow.weights_every = 1) holds WQ, WK, W1 at every record; with
# flow.weights_every = 4 a run keeps records 0, 4, 8 and its last, 10. A run started from stage1.h5
# (model.init_file: its last stored weights) begins where it ended: its record 0 has stage1's last weights bit
# for bit and the same loss (1e-13). A plain file with W0 = W1 = 0 and random WQ, WK is a stationary point
# (every gradient has a factor W0 or W1): the flow keeps every weight, the loss stays ln d (to the sum's rounding). A file of another
# shape, or holding NaN, is refused.
run 1 markov "$D" --flow.time=10 --flow.records=10 --flow.weights_every=4 --model.eps=1e-3 --run.output=every4.h5 \
  > every4.out
run 1 markov "$D" --flow.time=4 --flow.records=2 --model.init_file=stage1.h5 --run.output=from.h5 > from.out
grep -q "the weights start from model.init_file 'stage1.h5', record 30" from.out || fail "from.h5: $(head -n 4 from.out)"
"$PYTHON" - <<'PY' || fail "weights out and in"
import h5py, numpy as np
m = h5py.File("every4.h5", "r")["markov"]
assert list(m["weights_record"][()]) == [0, 4, 8, 10], m["weights_record"][()]
assert m["WQ"].shape == (4, 16, 16) and m["W1"].shape == (4, 16, 4) and m["embedding"].shape == (11, 4, 16)
a, b = h5py.File("stage1.h5", "r"), h5py.File("from.h5", "r")
ma, mb = a["markov"], b["markov"]
assert list(ma["weights_record"][()]) == list(range(31))
for name in ("WQ", "WK", "W1"):
    assert np.array_equal(mb[name][0], ma[name][-1]), name
assert np.array_equal(mb["embedding"][0], ma["embedding"][-1])
la, lb = a["diagnostics/loss"][-1], b["diagnostics/loss"][0]
assert abs(la - lb) <= 1e-13 * abs(la), (la, lb)
print(f"from stage1.h5: record 0 has its last weights, loss {lb:.15f} against {la:.15f}")
rng = np.random.default_rng(3)
with h5py.File("zero.h5", "w") as f:
    f["W0"], f["W1"] = np.zeros((4, 16)), np.zeros((16, 4))
    f["WQ"], f["WK"] = rng.normal(size=(16, 16)), rng.normal(size=(16, 16))
with h5py.File("nan.h5", "w") as f:
    f["W0"], f["W1"], f["WQ"], f["WK"] = np.zeros((4, 16)), np.zeros((16, 4)), np.zeros((16, 16)), np.zeros((16, 16))
    f["WK"][3, 5] = np.nan
PY
run 1 markov "$D" --flow.time=20 --flow.records=4 --model.init_file=zero.h5 --run.output=zero-run.h5 > zero-run.out
"$PYTHON" - <<'PY' || fail "a stationary start"
import h5py, math, numpy as np
r, z = h5py.File("zero-run.h5", "r"), h5py.File("zero.h5", "r")
m = r["markov"]
assert not np.any(m["embedding"][()]) and not np.any(m["W1"][()])
for name in ("WQ", "WK"):
    assert all(np.array_equal(row, z[name][()]) for row in m[name][()]), name
loss = r["diagnostics/loss"][()]
# The same at every record, bit for bit; ln 4 to the rounding of a sum over 23936 items (about 1e-14).
assert np.all(loss == loss[0]) and abs(loss[0] - math.log(4)) < 1e-13, loss
print(f"W0 = W1 = 0 stays: {len(loss)} records, loss {loss[-1]:.15f} = ln 4")
PY
expect_error 2 "model.init_file 'zero.h5': dataset 'W0' has shape \[4, 16\], expected \[4, 8\]" markov "$D" \
  --model.m=8 --model.init_file=zero.h5 --run.output=bad.h5
expect_error 2 "model.init_file 'nan.h5': WK holds NaN or Inf" markov "$D" --model.init_file=nan.h5 --run.output=bad.h5
expect_error 2 "model.init_file 'none.h5'" markov "$D" --model.init_file=none.h5 --run.output=bad.h5
echo "markov: all checks passed"
