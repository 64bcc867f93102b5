"""Tests for postprocess/plot_meanfield.py on runs of the real `tokdyn meanfield` (a grid run on S^1 and a
quadrature run on S^2; CTest: the fixture tests/cli/produce_study_runs.sh writes them into the directory
TOKDYN_MEANFIELDDIR names).

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
"""

import importlib.util
import math
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


def write_grid_run(path):
    """A small grid run on S^1 with the datasets plot_meanfield.py reads and a deck."""
    theta = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = "meanfield"
        h5.attrs["status"] = "complete"
        h5.attrs["deck"] = "[model]\nd = 2\nT = 0.5\n\n[meanfield]\nsolver = grid\ncells = 32\npoints = 99\n"
        d = h5.create_group("diagnostics")
        for name in ("time", "mass", "energy", "order_parameter", "min_density"):
            d[name] = np.linspace(0.1, 0.5, 5)
        g = h5.create_group("meanfield")
        g.attrs["solver"] = "grid"
        g["snapshot_time"] = np.array([0.0, 0.5])
        g["theta"] = theta
        g["density"] = np.stack([(1 + 0.5 * np.cos(theta)) / (2 * np.pi)] * 2)
    return path


def test_angle_ticks_and_title(tmp_path):
    """The angle axis runs over [0, 2 pi] with ticks at the multiples of pi/2 labelled in pi; the title names
    the run's parameters (the grid's cells, not the quadrature's points)."""
    spec = importlib.util.spec_from_file_location("plot_meanfield", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fig = module.make_figure(module.read_run(str(write_grid_run(tmp_path / "grid.h5"))))
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, 2 * math.pi)
    ticks = [(x, label.get_text()) for x, label in zip(ax.get_xticks(), ax.get_xticklabels()) if 0 <= x <= 2 * math.pi]
    assert np.allclose([x for x, _ in ticks], np.arange(5) * math.pi / 2)
    assert [text for _, text in ticks] == ["0", r"$\pi/2$", r"$\pi$", r"$3\pi/2$", r"$2\pi$"]
    title = fig._suptitle.get_text()
    assert title.splitlines()[0] == "tokdyn meanfield"
    assert any(t.get_text() == "grid.h5" for t in fig.texts)  # the footer
    assert "d = 2, T = 0.5" in title and "solver = grid, cells = 32" in title and "points" not in title
    import matplotlib.pyplot as plt

    plt.close(fig)
