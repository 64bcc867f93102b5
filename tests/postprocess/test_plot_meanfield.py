"""Tests for postprocess/plot_meanfield.py on runs of the real `tokdyn meanfield` (a grid run on S^1 and a
quadrature run on S^2; CTest: the fixture tests/cli/produce_study_runs.sh writes them into the directory
TOKDYN_MEANFIELDDIR names).

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
"""

import shutil
from pathlib import Path

import h5py
import numpy as np

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "plot_meanfield.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (300, 900)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_MEANFIELDDIR", "directory"  # conftest.py's real_input


def test_real_runs(tmp_path, real_input, run_script, check_png):
    """Both solvers' runs plot; the files hold what the script draws (mass 1, unit-sum masses)."""
    for name in ("grid.h5", "points.h5"):
        out = tmp_path / name.replace(".h5", ".png")
        result = run_script(Path(real_input) / name, "-o", out)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == str(out)
        check_png(out)
        with h5py.File(Path(real_input) / name, "r") as h5:
            assert np.allclose(h5["diagnostics/mass"][()], 1.0, atol=1e-12)
            g = h5["meanfield"]
            assert len(g["snapshot_time"][()]) >= 2
            if "masses" in g:
                assert abs(g["masses"][()].sum() - 1) < 1e-12


def test_default_output(tmp_path, real_input, run_script):
    copy = tmp_path / "run.h5"
    shutil.copy(Path(real_input) / "grid.h5", copy)
    result = run_script(copy)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run.png").exists()


def test_errors(tmp_path, run_script):
    """Missing file, not HDF5, another command's file: one line, exit status 2."""
    bad = tmp_path / "bad.h5"
    bad.write_text("not hdf5")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as h5:
        h5.attrs["command"] = "transformer"
    for path, message in [(tmp_path / "none.h5", "no such file"), (bad, "cannot open"), (other, "not 'meanfield'")]:
        result = run_script(path)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
