"""Tests for postprocess/paper_figures.py on grid and Fig. 1 runs of the real `tokdyn transformer`.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_GRIDDIR names a directory of small grid runs (CTest: the fixture tests/cli/produce_study_runs.sh
writes a handful of combinations at reduced N and L).
"""

import os
import re
import shutil
from pathlib import Path

import h5py

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "paper_figures.py"
TIMEOUT = 300
PNG_MIN_SHAPE = (500, 800)  # conftest.py's run_script and check_png
INPUT_ENV, INPUT_KIND = "TOKDYN_GRIDDIR", "directory"  # conftest.py's real_input
# jobscripts/grid.sbatch's names: <deck>-<activation>-f<factor>.h5 (the factor may be negative).
DECK = re.compile(r"^(grid-d\d+-bias\w+?)-(?:relu|silu|sigmoid|tanh|none)-f-?\d+\.h5$")


def test_real_grid_runs(tmp_path, real_input, run_script, check_png):
    """One PNG per (d, bias) found and one for Fig. 1; missing combinations are tolerated."""
    out = tmp_path / "figures"
    result = run_script(real_input, "-o", out)
    assert result.returncode == 0, result.stderr
    names = sorted(f for f in os.listdir(real_input) if f.endswith(".h5"))
    decks = sorted({DECK.match(f).group(1) for f in names if DECK.match(f)})
    expected = [out / f"{deck}.png" for deck in decks]
    if any(f.startswith("fig1-") for f in names):
        expected.append(out / "fig1.png")
    assert result.stdout.split() == [str(p) for p in expected]
    assert len(decks) >= 1
    for path in expected:
        check_png(path)


def test_incomplete_run_is_labelled(tmp_path, real_input, run_script, check_png):
    """A run whose status is not complete is drawn as a labelled empty panel, not an error."""
    rundir = tmp_path / "runs"
    shutil.copytree(real_input, rundir)
    victim = sorted(rundir.glob("grid-*.h5"))[0]
    with h5py.File(victim, "a") as h5:
        h5.attrs["status"] = "checkpointed"
    result = run_script(rundir, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "out" / (DECK.match(victim.name).group(1) + ".png"))


def test_empty_folder_fails_clearly(tmp_path, run_script):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "unrelated.h5").write_text("not a grid run")
    for folder, message in ((tmp_path / "empty", "holds no grid run files"), (tmp_path / "nope", "no such directory")):
        result = run_script(folder, "-o", tmp_path / "out")
        assert result.returncode == 2
        assert result.stderr.startswith("paper_figures.py: error:") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists()


def test_energy_axis_readable():
    """The E_beta twin axes: labelled, tick labels of at least 8 pt; the title names the runs' shared parameters."""
    import importlib.util

    import matplotlib.pyplot as plt
    import numpy as np

    spec = importlib.util.spec_from_file_location("paper_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def run(activation):
        return {"status": "complete", "layer": np.arange(6.0), "energy": np.geomspace(1, 1e-4, 6),
                "cosine_histogram": np.ones((6, 10)), "cosine_bin_edges": np.linspace(-1, 1, 11),
                "parameters": {"model.N": 16, "model.d": 5, "mlp.activation": activation}}

    fig = module.make_grid_figure("grid-d5-bias0", {("relu", "1"): run("relu"), ("tanh", "0"): run("tanh")})
    fig.canvas.draw()
    twins = [ax for ax in fig.axes if ax.get_yscale() == "log" and ax.get_ylabel() != "fraction of pairs"]
    assert len(twins) == 2  # one per run drawn (the colour bar's log axis aside)
    for ax in twins:
        assert ax.get_ylabel() == r"$E_\beta$"
        sizes = [label.get_fontsize() for label in ax.get_yticklabels() if label.get_text()]
        assert sizes and min(sizes) >= 8
    title = fig._suptitle.get_text()
    assert title.startswith("tokdyn transformer\n") and "N = 16, d = 5" in title and "MLP" not in title
    assert any(t.get_text() == "grid-d5-bias0" for t in fig.texts)  # the footer
    plt.close(fig)
