"""Tests for postprocess/focus_dilution.py: the stage figure and the sweep fits on runs of the real
`tokdyn markov`, the fits on synthetic files with known slopes and rates, and the errors.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_MARKOVDIR names a directory of three runs swept over eps (CTest: the fixture
tests/cli/produce_study_runs.sh writes it).
"""

import importlib.util
import json
import math
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "focus_dilution.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (300, 600)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_MARKOVDIR", "directory"  # conftest.py's real_input

spec = importlib.util.spec_from_file_location("focus_dilution", SCRIPT)
fd = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fd)


def test_real_run_figures(tmp_path, real_input, run_script, check_png):
    """run: the stage figure and the PCA figure; the printed onsets are the file's."""
    out = tmp_path / "stages.png"
    result = run_script("run", Path(real_input) / "eps-1.h5", "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-2:] == [str(out), str(tmp_path / "stages-pca.png")]
    check_png(out)
    check_png(tmp_path / "stages-pca.png")
    with h5py.File(Path(real_input) / "eps-1.h5", "r") as h5:
        t2 = h5["markov"].attrs["t_II"]
        mass, token_entropy = h5["markov/mass"][()], h5["diagnostics/token_entropy"][()]
    assert f"II focus           onset {t2:.4g}" in result.stdout
    # token_entropy is the entropy of the recorded mass per token over log d, record by record.
    d = mass.shape[1]
    expected = -np.sum(np.where(mass > 0, mass * np.log(np.where(mass > 0, mass, 1)), 0), axis=1) / np.log(d)
    assert np.allclose(token_entropy, expected, rtol=1e-12, atol=1e-15)
    # The attention by token at t = 0, each onset and the end: at t = 0 the masses are the tokens' frequencies
    # (the brackets), the most frequent token of pi first; it leads at every moment of this chain run.
    report = fd.token_report(fd.read_run(str(Path(real_input) / "eps-1.h5")))
    assert report[0][0] == "t = 0" and report[-1][0] == "end" and len(report) >= 3
    assert all(mass == start for _, mass, start in report[0][2])
    assert all(moment[2][0][0] == "0" for moment in report), report
    printed = [x for x in result.stdout.splitlines() if x.startswith("    t_I ") or x.startswith("    end ")]
    assert len(printed) == 2 and all(": '0' " in x for x in printed), result.stdout
    # Panel (b) draws both entropies.
    fig = fd.make_stage_figure(fd.read_run(str(Path(real_input) / "eps-1.h5")))
    labels = [ln.get_label() for ln in fig.axes[1].get_lines() if not ln.get_label().startswith("_")]
    assert any("positions" in x for x in labels) and any("tokens" in x for x in labels), labels
    fd.plt.close(fig)


def test_real_sweep(tmp_path, real_input, run_script, check_png):
    """sweep over eps: stage I moves by 1/sigma* per unit of ln(1/eps) (3 %: the cli_markov criterion), the
    four onsets in order in every run, and the CSV has a row per run."""
    sweep = tmp_path / "sweep"
    shutil.copytree(real_input, sweep)
    result = run_script("sweep", sweep)
    assert result.returncode == 0, result.stderr
    prefix = sweep / "focus-dilution-eps"
    check_png(prefix.with_suffix(".png"))
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert data["kind"] == "eps" and data["values"] == [1e-5, 1e-4, 1e-3]
    fit = data["fits"]["t_I"]
    assert fit["slope"] * data["sigma_star"][0] == pytest.approx(1, abs=0.03)
    assert fit["n"] == 3 and fit["low"] < fit["slope"] < fit["high"]
    for run in data["runs"]:
        onsets = [run[s] for s in fd.STAGES]
        assert onsets == sorted(onsets)
    assert len(prefix.with_suffix(".csv").read_text().strip().splitlines()) == 4
    assert "predicted 1/sigma*" in result.stdout
    # The onsets at half and double each threshold, refitted: 8 variants of each stage; stage I moves by little
    # (its criterion is the loss), and the stage-I rate's extrapolation to eps -> 0 is printed.
    variants = data["fits"]["t_I"]["sensitivity"]
    assert len(variants) == 8 and all(math.isfinite(v["slope"]) for v in variants)
    assert all(abs(v["slope"] / fit["slope"] - 1) < 0.2 for v in variants)
    rates = data["stage_I_rate"]
    assert len(rates["rate"]) == 3 and math.isfinite(rates["extrapolation"]["intercept"])
    assert "rate = r0 + b sqrt(eps)" in result.stdout
    # Each run's growth of |WQ| before focus next to its focus rate (the files of today's tokdyn have both).
    focus = data["focus_growth"]
    assert len(focus["growth"]) == 3 and all(math.isfinite(v) for v in focus["focus_rate"])
    assert "before focus: the growth rate of |WQ|" in result.stdout


def write_run(path, onsets, eps=1e-4, delta=0.0, flow="", sigma_star=0.5, time=None, sv2=None, status="complete",
              d=4, m=3, rate=None, sensitivity=None, family=None):
    """A file with the layout of a markov run (the datasets the script reads), values chosen by the test."""
    time = np.linspace(0, 100, 101) if time is None else time
    n = len(time)
    deck = f"[markov]\ns = 8\ndelta = {delta}\n" + (f"family_c = {family}\n" if family else "") + f"[model]\nm = {m}\neps = {eps}\n[flow]\n{flow}"
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = "markov"
        h5.attrs["status"] = status
        h5.attrs["deck"] = deck
        diag = h5.create_group("diagnostics")
        diag["time"] = time
        for name in fd.DIAGNOSTICS[1:]:
            diag[name] = np.linspace(1, 0.5, n)
        g = h5.create_group("markov")
        g["pi"] = np.array([0.4, 0.3, 0.2, 0.1])
        g["mass"] = np.full((n, d), 0.25)
        sv = np.ones((n, d))
        sv[:, 1] = np.ones(n) if sv2 is None else sv2
        for name in ("sv_w0", "sv_w1"):
            g[name] = sv
        for name in ("sv_wq", "sv_wk"):
            g[name] = np.ones((n, m))
        g["w0_row_norms"] = np.ones((n, d))
        g["embedding"] = np.random.default_rng(1).normal(size=(n, d, m))
        for name, value in zip(fd.STAGES, onsets):
            g.attrs[name] = value
        g.attrs["sigma_star"] = sigma_star
        g.attrs["sigma_1"] = sigma_star
        g.attrs["t_I_predicted"] = onsets[0]
        if rate is not None:
            g["stage_I_rate"] = np.array(rate, float)
        if sensitivity is not None:
            g["onset_sensitivity"] = np.array(sensitivity, float)


def test_stage_figure_with_a_zero_singular_value(tmp_path, run_script, check_png):
    """A singular value exactly 0 at one record (W_Q of a run at small eps had one): the singular-value panel
    keeps finite limits no lower than round-off of its largest value (it used to take the clipped 1e-300, and
    its headroom overflowed to Inf: the figure failed)."""
    path = tmp_path / "zero.h5"
    write_run(path, [10, 20, 30, 40], m=16)
    with h5py.File(path, "r+") as h5:
        sv = np.linspace(2.5e-6, 1.9, 101 * 16).reshape(101, 16)
        sv[50, 15] = 0.0
        del h5["markov/sv_wq"]
        h5["markov/sv_wq"] = sv
    result = run_script("run", path, "-o", tmp_path / "zero.png")
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "zero.png")
    fig = fd.make_stage_figure(fd.read_run(str(path)))
    [panel] = [a for a in fig.axes if a.get_ylabel().startswith("singular values")]
    low, high = panel.get_ylim()
    assert np.isfinite(low) and np.isfinite(high) and high * 1e-18 <= low < 2.5e-6, (low, high)
    fd.plt.close(fig)


def test_eps_fit_recovers_slopes(tmp_path, run_script):
    """Onsets placed on exact lines a + b ln(1/eps): the fitted slopes are b (to round-off), stage I is
    reported next to 1/sigma* with its relative difference, and an unreached stage leaves its run out."""
    slopes = {"t_I": 2.0, "t_II": 3.5, "t_III": 4.0, "t_IV": 9.0}
    for k, eps in enumerate([1e-2, 1e-3, 1e-4, 1e-5, 1e-6]):
        x = math.log(1 / eps)
        onsets = [1 + slopes[s] * x for s in fd.STAGES]
        if k == 4:
            onsets[3] = math.nan  # not reached
        write_run(tmp_path / f"eps-{k}.h5", onsets, eps=eps, sigma_star=0.52)
    result = run_script("sweep", tmp_path, "-o", tmp_path / "fit")
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "fit.json").read_text())
    for s, b in slopes.items():
        assert data["fits"][s]["slope"] == pytest.approx(b, rel=1e-12)
        assert data["fits"][s]["per_decade"] == pytest.approx(b * math.log(10), rel=1e-12)
    assert data["fits"]["t_IV"]["n"] == 4
    assert data["fits"]["t_I"]["relative_difference"] == pytest.approx(2.0 * 0.52 - 1, rel=1e-12)
    assert "OUTSIDE the interval" in result.stdout


def test_threshold_variants_and_rate_extrapolation(tmp_path, run_script):
    """Onsets of each threshold variant on exact lines (slope 1 + k + f/2 for threshold k, factor f): the refitted
    slopes are those (round-off). Stage-I rates on r0 + b sqrt(eps) with a small wobble: r0 and its 95% interval
    are least squares' (numpy's polyfit and the closed-form standard error)."""
    eps_values, r0, b = [1e-2, 1e-3, 1e-4, 1e-5], 0.47, 0.05
    wobble = [1e-5, -2e-5, 1.5e-5, -0.5e-5]
    for k, eps in enumerate(eps_values):
        x = math.log(1 / eps)
        sens = [[[1 + (1 + t + f / 2) * x for _ in fd.STAGES] for f in range(2)] for t in range(4)]
        rate = r0 + b * math.sqrt(eps) + wobble[k]
        write_run(tmp_path / f"eps-{k}.h5", [1 + 2 * x, 2 + 3 * x, 3 + 4 * x, 4 + 5 * x], eps=eps, sigma_star=0.47,
                  rate=[rate, rate - 1e-4, rate + 1e-4], sensitivity=sens)
    result = run_script("sweep", tmp_path, "-o", tmp_path / "fit")
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "fit.json").read_text())
    for v, (t, f) in zip(data["fits"]["t_II"]["sensitivity"], [(t, f) for t in range(4) for f in range(2)]):
        assert v["threshold"] == fd.THRESHOLDS[t] and v["factor"] == (0.5, 2.0)[f]
        assert v["slope"] == pytest.approx(1 + t + f / 2, rel=1e-12)
    x = np.sqrt(eps_values)
    y = np.array([r0 + b * math.sqrt(e) + w for e, w in zip(eps_values, wobble)])
    slope, intercept = np.polyfit(x, y, 1)
    s2 = ((y - intercept - slope * x) ** 2).sum() / 2
    from scipy import stats
    half = stats.t.ppf(0.975, 2) * math.sqrt(s2 * (1 / 4 + x.mean() ** 2 / ((x - x.mean()) ** 2).sum()))
    e = data["stage_I_rate"]["extrapolation"]
    assert e["intercept"] == pytest.approx(intercept, rel=1e-12) and e["slope"] == pytest.approx(slope, rel=1e-9)
    assert e["intercept_high"] - e["intercept"] == pytest.approx(half, rel=1e-9)
    assert data["stage_I_rate"]["extrapolation_inside"] == (e["intercept_low"] <= 0.47 <= e["intercept_high"])


def test_delta_fit_recovers_rate(tmp_path, run_script):
    """sigma_2 = e^{lambda t} with lambda = 0.01 + 0.2 delta: the escape rates, kappa = 0.2 and the exponent
    1 are recovered; a run that never reaches t_IV is fitted up to its end."""
    time = np.linspace(0, 200, 401)
    for k, delta in enumerate([0.0, 0.02, 0.04, 0.06]):
        rate = 0.01 + 0.2 * delta
        t4 = math.nan if delta == 0 else 150 - 1000 * delta
        write_run(tmp_path / f"delta-{k}.h5", [5, 20, 40, t4], delta=delta, time=time,
                  sv2=1e-3 * np.exp(rate * time))
    result = run_script("sweep", tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "focus-dilution-delta.json").read_text())
    assert data["escape_rate"] == pytest.approx([0.01, 0.014, 0.018, 0.022], rel=1e-9)
    assert data["linear"]["slope"] == pytest.approx(0.2, rel=1e-9)
    assert data["exponent"]["slope"] == pytest.approx(1, rel=1e-6)
    assert "not reached by T = 200 (stall)" in result.stdout
    assert "p = 1.000 [" in result.stdout and "p = 1 inside" in result.stdout


def test_escape_quadratic_odd_part_and_families(tmp_path, run_script):
    """sigma_2 = e^{lambda t} with lambda = 0.006 + 0.01 delta + k |c|^2 delta^2 on both signs of delta, for two
    families c: the quadratic fit recovers c1 = 0.01 and c2 = k |c|^2 (round-off), the odd part is 0.01 delta;
    `escape` puts the sweeps side by side with c2 / |c|^2 = k."""
    time = np.linspace(0, 200, 401)
    k = 1.5
    dirs = []
    for family, norm2 in (("1, 0, -1", 2.0), ("2, -1, -1", 6.0)):
        directory = tmp_path / f"c{int(norm2)}"
        directory.mkdir()
        dirs.append(directory)
        for i, delta in enumerate([-0.04, -0.02, 0.0, 0.02, 0.04, 0.06]):
            rate = 0.006 + 0.01 * delta + k * norm2 * delta ** 2
            write_run(directory / f"delta-{i}.h5", [5, 20, 40, math.nan], delta=delta, time=time, family=family,
                      sv2=1e-3 * np.exp(rate * time))
        result = run_script("sweep", directory)
        assert result.returncode == 0, result.stderr
        data = json.loads((directory / "focus-dilution-delta.json").read_text())
        q = data["quadratic"]
        assert q["c1"]["value"] == pytest.approx(0.01, rel=1e-7) and q["c2"]["value"] == pytest.approx(k * norm2, rel=1e-7)
        assert q["c1"]["low"] <= 0.01 <= q["c1"]["high"]
        assert [o["value"] for o in data["odd_part"]] == pytest.approx([0.0002, 0.0004], rel=1e-6)
        assert "exponent_negative" in data and "0 OUTSIDE the interval" in result.stdout
    result = run_script("escape", *dirs, "-o", tmp_path / "escape")
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "escape.json").read_text())["rows"]
    assert [r["c2_per_c_norm2"] for r in rows] == pytest.approx([k, k], rel=1e-7)
    assert (tmp_path / "escape.png").stat().st_size > 0 and result.stdout.count("\n  c = (") == 2
    # A sweep over eps is not a delta sweep.
    eps_dir = tmp_path / "eps"
    eps_dir.mkdir()
    for i, eps in enumerate([1e-3, 1e-4]):
        write_run(eps_dir / f"eps-{i}.h5", [1, 2, 3, 4], eps=eps)
    result = run_script("escape", eps_dir)
    assert result.returncode == 2 and "not markov.delta" in result.stderr


def test_errors(tmp_path, run_script):
    """Missing file or directory, another command's file, a partial run, runs differing in two keys or in
    none: one line, exit status 2."""
    wrong = tmp_path / "wrong.h5"
    with h5py.File(wrong, "w") as h5:
        h5.attrs["command"] = "transformer"
        h5.attrs["status"] = "complete"
    partial = tmp_path / "partial.h5"
    write_run(partial, [1, 2, 3, 4], status="checkpointed")
    two = tmp_path / "two"
    two.mkdir()
    write_run(two / "a.h5", [1, 2, 3, 4], eps=1e-3, flow="time = 5\n")
    write_run(two / "b.h5", [1, 2, 3, 4], eps=1e-4, flow="time = 6\n")
    same = tmp_path / "same"
    same.mkdir()
    for name in ("a", "b"):
        write_run(same / f"{name}.h5", [1, 2, 3, 4])
    cases = [(("run", tmp_path / "absent.h5"), "no such file"), (("run", wrong), "not 'markov'"),
             (("run", partial), "not complete"), (("sweep", tmp_path / "absent"), "no such directory"),
             (("sweep", two), "differ in flow.time, model.eps"), (("sweep", same), "differ in nothing")]
    for args, message in cases:
        result = run_script(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("focus_dilution.py: error:") and message in lines[0], lines
    # --allow-partial draws the partial run.
    result = run_script("run", partial, "--allow-partial", "-o", tmp_path / "p.png")
    assert result.returncode == 0, result.stderr
