"""Tests for postprocess/power.py on a run file of the real `tokdyn power`.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_POWERFILE names the run (CTest: the fixture tests/cli/produce_power_run.sh writes it).
"""

import shutil
from pathlib import Path

import h5py
import numpy as np

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
