"""Tests for postprocess/power.py on a run file of the real `tokdyn power`.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_POWERFILE names the run (CTest: the fixture tests/cli/produce_power_run.sh writes it).
"""

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "power.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (500, 700)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_POWERFILE", "file"  # conftest.py's real_input


def test_real_result(tmp_path, real_input, run_script, check_png):
    """The figure is written, the printed numbers are the file's, and the schema holds together."""
    out = tmp_path / "power.png"
    result = run_script(real_input, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out)
    check_png(out)
    with h5py.File(real_input, "r") as h5:
        g, s = h5["power"], h5["steer"]
        layers, n = len(g["layer"]), int(g.attrs["N"])
        assert g["plane_last"].shape == (layers + 1, n, 2) and g["plane_first"].shape == (layers + 1, n, 2)
        # Quartiles are order statistics of values in [0, 1]; rho's mean is the attribute.
        assert np.all(g["gamma_q1"][()] <= g["gamma_median"][()]) and np.all(g["gamma_median"][()] <= g["gamma_q3"][()])
        assert np.isclose(g["rho"][()].mean(), g.attrs["rho_mean"], rtol=1e-12)
        # The plane coordinates are projections of unit tokens onto an orthonormal basis: inside the unit disk,
        # and equal to the stored tokens times the stored basis.
        x = h5["tokens/X"][-1]
        assert np.allclose(x @ g["basis_last"][()].T, g["plane_last"][-1], atol=1e-12)
        assert np.all(np.linalg.norm(g["plane_last"][()], axis=2) <= 1 + 1e-12)
        k = int(np.argmax(s["strength"][()]))
        assert f"steering: alignment min {s['alignment_min'][k]:.6f}" in result.stdout
        assert f"final state: {g.attrs['state']}" in result.stdout


def test_first_plane_and_default_output(tmp_path, real_input, run_script, check_png):
    copy = tmp_path / "result.h5"
    shutil.copy(real_input, copy)
    result = run_script(copy, "--plane", "first", "--tokens", "5")
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "result.png")


def test_without_steering(tmp_path, real_input, run_script, check_png):
    """A run without a target has no /steer: panel (d) shows the error decay instead."""
    copy = tmp_path / "plain.h5"
    shutil.copy(real_input, copy)
    with h5py.File(copy, "a") as h5:
        del h5["steer"]
    result = run_script(copy)
    assert result.returncode == 0, result.stderr
    assert "steering: alignment" not in result.stdout
    check_png(tmp_path / "plain.png")


def test_errors(tmp_path, run_script):
    """Missing file, wrong command, missing dataset: one line, exit status 2."""
    wrong = tmp_path / "wrong.h5"
    with h5py.File(wrong, "w") as h5:
        h5.attrs["command"] = "transformer"
    partial = tmp_path / "partial.h5"
    with h5py.File(partial, "w") as h5:
        h5.attrs["command"] = "power"
        h5.attrs["status"] = "complete"  # a complete run missing a dataset (test_partial.py: other statuses)
        h5.create_group("power")["layer"] = np.arange(3)
    for path, message in ((tmp_path / "none.h5", "no such file"), (wrong, "not 'power'"),
                          (partial, "missing dataset /power/gamma_mean")):
        result = run_script(path)
        assert result.returncode == 2
        assert result.stderr.startswith("power.py: error:") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def write_power_run(path, sin_mean, residual, pair_last=0, closed=0.85):
    """A power run with the datasets power.py reads: the mean sine given, the rest constant."""
    n = len(sin_mean)
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = "power"
        h5.attrs["status"] = "complete"
        h5.attrs["deck"] = f"[power]\nattention = softmax\nresidual = {'true' if residual else 'false'}\nN = 4\n"
        g = h5.create_group("power")
        g["layer"] = np.arange(1, n + 1)
        for name in ("gamma_mean", "gamma_median", "gamma_q1", "gamma_q3", "gamma_in_mean", "rho", "gap",
                     "lambda1_abs", "lambda2_abs", "rotation", "angle"):
            g[name] = np.full(n, 0.5)
        g["sin_mean"] = np.asarray(sin_mean, dtype=float)
        g["pair"] = np.r_[np.zeros(n - 1), pair_last].astype(np.int64)
        g["plane_first"] = g["plane_last"] = np.zeros((n + 1, 4, 2))
        for name, value in (("state", "consensus"), ("attention", "softmax"), ("baseline", 0.1),
                            ("baseline_plane", 0.15), ("error_ratio", closed), ("error_ratio_closed_form", closed),
                            ("rho_mean", 0.6), ("d", 8), ("N", 4), ("residual", int(residual))):
            g.attrs[name] = value


@pytest.mark.parametrize("residual, pair", [(True, 0), (False, 1)])
def test_reference_rate_through_the_fitted_layers(tmp_path, residual, pair):
    """A transient of 20 layers at sine 1, then 0.85^t: the closed-form line runs over the layers the file's
    ratio is fitted on (the later half above round-off, as tokdyn power fits), through the data there, not
    from layer 1; its label names the ratio of the run's matrix (of 1 + lambda for I + F; lambda_3 after a
    complex pair) and its value."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("power", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    layer = np.arange(1, 81)
    sin = np.minimum(1.0, 0.85 ** (layer - 20.0))
    path = tmp_path / "p.h5"
    write_power_run(path, sin, residual, pair)
    fig = module.make_figure(module.read_result(str(path)))
    decay = fig.axes[3]
    [line] = [ln for ln in decay.lines if ln.get_label().startswith("closed form")]
    x, y = line.get_xdata(), line.get_ydata()
    assert x[0] == 41 and x[-1] == 80  # the later half of 80 layers
    assert np.allclose(y, sin[x.astype(int) - 1], rtol=1e-9)
    k = 3 if pair else 2
    name = rf"|1 + \lambda_{k}|\,/\,|1 + \lambda_1|" if residual else rf"|\lambda_{k}|\,/\,|\lambda_1|"
    assert line.get_label() == rf"closed form $({name})^t$ = 0.8500$^t$ (fit window)"
    assert ("I + F" in fig._suptitle.get_text()) == residual
    import matplotlib.pyplot as plt

    plt.close(fig)
