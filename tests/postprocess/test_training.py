"""Tests for postprocess/training.py: the summary and figures of real `tokdyn train` runs, the intervals
against closed forms, the verdicts on constructed samples, and the errors.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_TRAINDIR names a directory of 8 train runs (2 seeds x {ecd, adamw} x {symmetric, b_Q}; CTest: the
fixture tests/cli/produce_study_runs.sh writes it).
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
SCRIPT = REPO / "postprocess" / "training.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (300, 600)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_TRAINDIR", "directory"  # conftest.py's real_input

spec = importlib.util.spec_from_file_location("training", SCRIPT)
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)


def test_real_sweep(tmp_path, real_input, run_script, check_png):
    """Four groups of two seeds; each group's numbers are the mean and Student interval of its files'
    attributes; the figures and a CSV row per run exist; the alignment covers every head."""
    sweep = tmp_path / "sweep"
    shutil.copytree(real_input, sweep)
    result = run_script(sweep)
    assert result.returncode == 0, result.stderr
    prefix = sweep / "training"
    for name in ("losses", "charges", "alignment"):
        check_png(Path(f"{prefix}-{name}.png"))
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert data["runs"] == 8 and data["status"] == "complete"
    groups = {(g["optimizer"], g["symmetry"]): g for g in data["groups"]}
    assert {g["activation"] for g in data["groups"]} == {"gelu"}
    assert set(groups) == {("ecd", "symmetric"), ("ecd", "b_Q"), ("adamw", "symmetric"), ("adamw", "b_Q")}
    g = groups[("adamw", "b_Q")]
    ends = [h5py.File(sweep / f"train-adamw-bq-s{s}.h5", "r")["train"].attrs["final_val_loss_ema"] for s in (1, 2)]
    # Two seeds: half width t_{0.975, 1} s / sqrt(2), t = 12.706.
    assert g["seeds"] == [1, 2]
    assert g["final_val_loss_ema"] == pytest.approx(np.mean(ends), rel=1e-12)
    assert g["final_val_loss_ema_ci95"] == pytest.approx(12.7062 * np.std(ends, ddof=1) / math.sqrt(2), rel=1e-4)
    assert {(e["optimizer"], e["symmetry"]) for e in data["bias_effects"]} == {("ecd", "b_Q"), ("adamw", "b_Q")}
    assert data["alignment"]["b_Q"]["heads"] == 4 * 2 * 2  # 4 runs x 2 layers x 2 heads
    assert len(prefix.with_suffix(".csv").read_text().strip().splitlines()) == 9
    assert "end EMA" in result.stdout and "alignment, b_Q" in result.stdout
    # The mean of the last 10 raw validation losses (records 1.. only), and the Markdown table's row.
    val = h5py.File(sweep / "train-adamw-bq-s1.h5", "r")["diagnostics/val_loss"][()]
    last = h5py.File(sweep / "train-adamw-bq-s2.h5", "r")["diagnostics/val_loss"][()]
    assert g["last_mean"] == pytest.approx((val[1:][-10:].mean() + last[1:][-10:].mean()) / 2, rel=1e-12)
    md = prefix.with_suffix(".md").read_text()
    assert f"| gelu | adamw | b_Q | 2 | {g['final_val_loss_ema']:.3f} +- {g['final_val_loss_ema_ci95']:.3f} |" in md


def test_interval_closed_form():
    """The 95% Student interval of 1, 2, 3: mean 2, half width t_{0.975, 2} * 1 / sqrt(3) = 2.4841."""
    mean, half = tr.interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert math.isnan(tr.interval([5.0])[1])


def test_welch_and_verdicts():
    """Welch's interval against its formula; the verdict follows the interval's sign; with the same seeds
    on both sides the interval is the paired one."""
    a, b = [3.0, 3.1, 2.9], [2.0, 2.2, 2.1, 1.9]
    diff, half = tr.welch(a, b)
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    dof = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    from scipy import stats
    assert diff == pytest.approx(np.mean(b) - np.mean(a), rel=1e-12)
    assert half == pytest.approx(stats.t.ppf(0.975, dof) * math.sqrt(va + vb), rel=1e-12)
    runs = []
    for sym, values in (("symmetric", a), ("b_Q", b)):
        for seed, v in enumerate(values):
            runs.append({"activation": "gelu", "optimizer": "ecd", "symmetry": sym, "seed": seed,
                         "final_val_loss_ema": v, "final_val_loss": v, "min_val_loss": v, "last_mean": v,
                         "final_train_loss_ema": v})
    lines = []
    _, effects = tr.summarise(runs, lines)  # seeds 0..2 against 0..3: Welch
    assert effects[0]["interval"] == "Welch" and effects[0]["ci95"] == pytest.approx(half, rel=1e-12)
    assert effects[0]["verdict"].startswith("the biases help")
    # Paired: b_Q = symmetric - 0.1 + a seed-independent wobble of 1e-3: the interval is tight.
    pairs = [dict(r) for r in runs if r["symmetry"] == "symmetric"]
    pairs += [dict(r, symmetry="b_Q", final_val_loss_ema=r["final_val_loss_ema"] - 0.1 + 1e-3 * (-1) ** r["seed"])
              for r in runs if r["symmetry"] == "symmetric"]
    _, effects = tr.summarise(pairs, [])
    d = np.array([-0.1 + 1e-3, -0.1 - 1e-3, -0.1 + 1e-3])
    assert effects[0]["interval"] == "paired by seed"
    assert effects[0]["difference"] == pytest.approx(d.mean(), rel=1e-9)
    assert effects[0]["ci95"] == pytest.approx(4.302653 * d.std(ddof=1) / math.sqrt(3), rel=1e-6)
    for r in runs:
        if r["symmetry"] == "b_Q":
            r["final_val_loss_ema"] += 1.0  # centred on a: the interval holds 0
    _, effects = tr.summarise(runs, [])
    assert effects[0]["verdict"].startswith("no difference")


def test_activation_contrast():
    """The difference of the biases' effects between PReLU and GELU, paired by seed: (b - s)_prelu - (b - s)_gelu
    per seed, its mean and Student interval."""
    effect = {"gelu": [-0.01, 0.0, 0.01], "prelu": [-0.2, -0.25, -0.15]}
    runs = []
    for act in ("gelu", "prelu"):
        for seed in range(3):
            runs.append({"activation": act, "optimizer": "ecd", "symmetry": "symmetric", "seed": seed,
                         "final_val_loss_ema": 3.0 + 0.1 * seed})
            runs.append({"activation": act, "optimizer": "ecd", "symmetry": "b_Q", "seed": seed,
                         "final_val_loss_ema": 3.0 + 0.1 * seed + effect[act][seed]})
    lines = []
    (c,) = tr.activation_contrast(runs, lines)
    d = np.array(effect["prelu"]) - np.array(effect["gelu"])
    assert c["difference"] == pytest.approx(d.mean(), rel=1e-12)
    assert c["ci95"] == pytest.approx(4.302653 * d.std(ddof=1) / math.sqrt(3), rel=1e-6)
    assert c["verdict"] == "larger gain with PReLU" and "PReLU - with GELU" in lines[0]


def test_errors(tmp_path, run_script):
    """A missing path, a directory without train runs, a partial run without --allow-partial: one line, 2."""
    result = run_script(tmp_path / "missing")
    assert result.returncode == 2 and result.stderr.startswith("training.py: error: no such file")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_script(empty)
    assert result.returncode == 2 and "no tokdyn train run files" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = run_script(empty, "--last", "0")
    assert result.returncode == 2 and "--last must be at least 1" in result.stderr


def test_partial_run(tmp_path, real_input, run_script):
    """A run whose status is not complete is refused, then summarised with --allow-partial."""
    src = Path(real_input) / "train-ecd-symmetric-s1.h5"
    part = tmp_path / "train-ecd-symmetric-s1.h5"
    shutil.copy(src, part)
    with h5py.File(part, "r+") as h5:
        h5.attrs["status"] = "checkpointed"
    result = run_script(part, "-o", tmp_path / "t")
    assert result.returncode == 2 and "not complete" in result.stderr
    result = run_script(part, "-o", tmp_path / "t", "--allow-partial")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "t.json").read_text())["status"] == "partial"
