"""Tests for postprocess/synchronization.py on a result of the real `tokdyn synchronize`.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_SYNCFILE names the result (CTest: the fixture tests/cli/produce_study_runs.sh writes it).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "synchronization.py"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SYNCFILE = os.environ.get("TOKDYN_SYNCFILE", "")
needs_result = pytest.mark.skipif(not os.path.isfile(SYNCFILE), reason="TOKDYN_SYNCFILE names no file")


def run_script(*args):
    return subprocess.run([PYTHON, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120)


def check_png(path):
    import matplotlib.image as mpimg

    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 300 and img.shape[1] > 600
    assert float(img[..., :3].std()) > 0.01


@needs_result
def test_real_result(tmp_path):
    """The figure is written, and the printed rate is the file's."""
    out = tmp_path / "sync.png"
    result = run_script(SYNCFILE, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out)
    check_png(out)
    with h5py.File(SYNCFILE, "r") as h5:
        g = h5["synchronization"]
        rate = g["decay_rate"][()]
        # The schema the script relies on: [R, S] energies whose mean is mean_energy.
        assert np.allclose(g["energy"][()].mean(axis=0), g["mean_energy"][()], rtol=1e-12)
        assert g["bound"][0] == pytest.approx(g["mean_energy"][0], rel=1e-14)
    assert f"decay rate {rate[0]:.4f} [{rate[1]:.4f}, {rate[2]:.4f}]" in result.stdout


@needs_result
def test_default_output(tmp_path):
    copy = tmp_path / "result.h5"
    shutil.copy(SYNCFILE, copy)
    result = run_script(copy)
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "result.png")


def test_errors(tmp_path):
    """Missing file, wrong command, missing dataset: one line, exit status 2."""
    wrong = tmp_path / "wrong.h5"
    with h5py.File(wrong, "w") as h5:
        h5.attrs["command"] = "transformer"
    partial = tmp_path / "partial.h5"
    with h5py.File(partial, "w") as h5:
        h5.attrs["command"] = "synchronize"
        h5.create_group("synchronization")["time"] = np.arange(3.0)
    for path, message in ((tmp_path / "none.h5", "no such file"), (wrong, "not 'synchronize'"),
                          (partial, "missing dataset /synchronization/mean_energy")):
        result = run_script(path)
        assert result.returncode == 2
        assert result.stderr.startswith("synchronization.py: error:") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
