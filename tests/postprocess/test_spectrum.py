"""Tests for postprocess/spectrum.py on a run of the real `tokdyn spectrum` and on small hand-made files.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_SPECTRUMFILE names the run (CTest: the fixture tests/cli/produce_spectrum_run.sh writes it from
input/spectrum.ini: 4 layers, complex leading pair e^{+-0.5 i}, outliers 0.7^k, top 8).
"""

import csv
import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "spectrum.py"
TIMEOUT = 120
PNG_MIN_SHAPE = (300, 800)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_SPECTRUMFILE", "file"  # conftest.py's real_input


def write_run(path, lam, converged, gap, residual=None, command="spectrum", drop=None):
    """A spectrum run file of layers 0.. with eigenvalues lam [n, nev] (NaN beyond converged)."""
    lam = np.asarray(lam, dtype=complex)
    n, nev = lam.shape
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = command
        h5.attrs["status"] = "complete"
        g = h5.create_group("spectrum")
        data = {"layer": np.arange(n), "eigenvalues_re": lam.real, "eigenvalues_im": lam.imag,
                "converged": np.asarray(converged), "gap": np.asarray(gap, dtype=float),
                "complex_leading": (lam[:, 0].imag != 0).astype(np.int64),
                "residual": np.full((n, nev), 1e-12) if residual is None else np.asarray(residual)}
        for name, value in data.items():
            if name != drop:
                g[name] = value
        for name, value in {"solver": "krylovschur", "eps_type": "krylovschur", "operator": "dense",
                            "which": "largest-magnitude", "nev": nev, "d": 16, "residual": 0}.items():
            g.attrs[name] = value


def test_real_run(tmp_path, real_input, run_script, check_png):
    """Figure, JSON and CSV written; their numbers are the file's."""
    out, js, cs = tmp_path / "s.png", tmp_path / "s.json", tmp_path / "s.csv"
    result = run_script(real_input, "-o", out, "--json", js, "--csv", cs)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-3:] == [str(out), str(js), str(cs)]
    check_png(out)
    with h5py.File(real_input, "r") as h5:
        g = h5["spectrum"]
        lam1 = g["eigenvalues_re"][:, 0] + 1j * g["eigenvalues_im"][:, 0]
        gap, conv, layers = g["gap"][()], g["converged"][()], g["layer"][()]
        nev = int(g.attrs["nev"])
        # The deck's prescribed spectrum, as the run found it (the script only reports it).
        assert np.allclose(np.abs(lam1), 1, atol=1e-10) and np.allclose(gap, 0.3, atol=1e-10)
    summary = json.loads(js.read_text())
    assert [row["layer"] for row in summary["layers"]] == list(layers)
    for row, l1, g_, c in zip(summary["layers"], lam1, gap, conv):
        assert row["abs_lambda1"] == pytest.approx(abs(l1), rel=1e-14)
        assert row["arg_lambda1"] == pytest.approx(np.angle(l1), abs=1e-14)
        assert row["gap"] == pytest.approx(g_, rel=1e-14) and row["converged"] == c and row["complex_leading"]
    assert summary["attributes"]["nev"] == nev and summary["attributes"]["solver"] == "krylovschur"
    rows = list(csv.DictReader(cs.open()))
    assert len(rows) == len(layers) and float(rows[0]["gap"]) == pytest.approx(gap[0], rel=1e-14)
    assert f"converged: fewest {conv.min()}/{nev}" in result.stdout
    assert "complex leading in 4 layer(s)" in result.stdout


def test_default_output(tmp_path, real_input, run_script, check_png):
    copy = tmp_path / "run.h5"
    shutil.copy(real_input, copy)
    result = run_script(copy)
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "run.png")


def test_unconverged_pairs_and_nan_gap(tmp_path, run_script, check_png):
    """A layer that converged fewer pairs than nev (NaN beyond) and one with too few for a gap: reported as
    such, with null in the JSON and the largest residual over converged pairs only."""
    nan = np.nan
    lam = [[2.0, -1.0, 0.5, nan], [1.5 + 1j, 1.5 - 1j, nan, nan]]
    residual = [[1e-13, 3e-12, 1e-14, nan], [2e-9, 2e-9, nan, nan]]
    path = tmp_path / "partial.h5"
    write_run(path, lam, converged=[3, 2], gap=[0.5, nan], residual=residual)
    js = tmp_path / "partial.json"
    result = run_script(path, "-o", tmp_path / "partial.png", "--json", js)
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "partial.png")
    assert "converged: fewest 2/4; largest residual 2.00e-09" in result.stdout
    assert "complex leading in 1 layer(s)" in result.stdout
    rows = json.loads(js.read_text())["layers"]
    assert rows[0]["max_residual"] == pytest.approx(3e-12) and rows[0]["abs_lambda1"] == 2.0
    assert rows[1]["gap"] is None and rows[1]["complex_leading"]
    assert rows[1]["abs_lambda1"] == pytest.approx(abs(1.5 + 1j))
    assert rows[1]["arg_lambda1"] == pytest.approx(np.angle(1.5 + 1j))


def test_errors(tmp_path, run_script):
    """Missing file, wrong command, missing dataset: one line, exit status 2."""
    wrong = tmp_path / "wrong.h5"
    write_run(wrong, [[1.0]], [1], [np.nan], command="transformer")
    partial = tmp_path / "partial.h5"
    write_run(partial, [[1.0]], [1], [np.nan], drop="gap")
    for path, message in ((tmp_path / "none.h5", "no such file"), (wrong, "not 'spectrum'"),
                          (partial, "missing dataset /spectrum/gap")):
        result = run_script(path)
        assert result.returncode == 2
        assert result.stderr.startswith("spectrum.py: error:") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def load_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("spectrum", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("residual", [0, 1])
def test_gap_and_modulus_apart(tmp_path, residual):
    """The gap and |lambda_1| (|1 + lambda_1| for I + F) on axes of their own, one above the other, each named
    in its legend; the title names the run's parameters."""
    module = load_module()
    path = tmp_path / "s.h5"
    write_run(path, [[1.2, 0.6, 0.3], [1.1 + 0.2j, 1.1 - 0.2j, 0.5]], converged=[3, 3], gap=[0.5, 0.55])
    with h5py.File(path, "a") as h5:
        h5["spectrum"].attrs["residual"] = residual
        h5.attrs["deck"] = "[spectrum]\nnev = 3\nwhich = largest-magnitude\n"
    r = module.read_run(str(path))
    fig = module.make_figure(r, module.layer_summary(r))
    fig.canvas.draw()
    lead = r"$|1 + \lambda_1|$" if residual else r"$|\lambda_1|$"
    gap = [ax for ax in fig.axes if "gap" in ax.get_ylabel()]
    modulus = [ax for ax in fig.axes if ax.get_ylabel() == lead]
    assert len(gap) == 1 and len(modulus) == 1
    gap, modulus = gap[0], modulus[0]
    assert gap.get_position().y0 > modulus.get_position().y1  # stacked, not drawn over each other
    assert [t.get_text() for t in gap.get_legend().get_texts()] == ["gap $g_t$", "complex leading pair"]
    assert [t.get_text() for t in modulus.get_legend().get_texts()] == [lead]
    assert np.allclose(modulus.lines[0].get_ydata(), [1.2, abs(1.1 + 0.2j)])
    # No two axes at the same place (twin axes were).
    boxes = [tuple(np.round(ax.get_position().bounds, 6)) for ax in fig.axes]
    assert len(set(boxes)) == len(boxes)
    assert "nev = 3, which = largest-magnitude" in fig._suptitle.get_text()
    import matplotlib.pyplot as plt

    plt.close(fig)
