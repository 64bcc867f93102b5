"""Tests for postprocess/synchronization.py on a result of the real `tokdyn synchronize`.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_SYNCFILE names the result (CTest: the fixture tests/cli/produce_study_runs.sh writes it).
"""

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "synchronization.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (300, 600)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_SYNCFILE", "file"  # conftest.py's real_input


def test_real_result(tmp_path, real_input, run_script, check_png):
    """The figure is written, and the printed rate is the file's."""
    out = tmp_path / "sync.png"
    result = run_script(real_input, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out)
    check_png(out)
    with h5py.File(real_input, "r") as h5:
        g = h5["synchronization"]
        rate = g["decay_rate"][()]
        # The schema the script relies on: [R, S] energies whose mean is mean_energy.
        assert np.allclose(g["energy"][()].mean(axis=0), g["mean_energy"][()], rtol=1e-12)
        assert g["bound"][0] == pytest.approx(g["mean_energy"][0], rel=1e-14)
    assert f"decay rate {rate[0]:.4f} [{rate[1]:.4f}, {rate[2]:.4f}]" in result.stdout


def test_default_output(tmp_path, real_input, run_script, check_png):
    copy = tmp_path / "result.h5"
    shutil.copy(real_input, copy)
    result = run_script(copy)
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "result.png")


def test_errors(tmp_path, run_script):
    """Missing file, wrong command, missing dataset: one line, exit status 2."""
    wrong = tmp_path / "wrong.h5"
    with h5py.File(wrong, "w") as h5:
        h5.attrs["command"] = "transformer"
    partial = tmp_path / "partial.h5"
    with h5py.File(partial, "w") as h5:
        h5.attrs["command"] = "synchronize"
        h5.attrs["status"] = "complete"  # a complete run missing a dataset (test_partial.py: other statuses)
        h5.create_group("synchronization")["time"] = np.arange(3.0)
    for path, message in ((tmp_path / "none.h5", "no such file"), (wrong, "not 'synchronize'"),
                          (partial, "missing dataset /synchronization/mean_energy")):
        result = run_script(path)
        assert result.returncode == 2
        assert result.stderr.startswith("synchronization.py: error:") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
