"""Every postprocess script uses only complete runs unless told otherwise (tokdyn_h5.open_run).

A run file whose root attribute `status` is running, checkpointed or failed, or a file named *.part
(never complete, whatever it says), is refused by the one-file scripts: exit status 2 and one line on
stderr naming the file and its status and saying that --allow-partial plots it anyway. With
--allow-partial the figure carries a red "partial (status: X)" box (and the PNG's Description says the
same), and the JSON and CSV outputs carry the status. The directory scripts keep the complete runs
apart from the others: paper_figures.py leaves an incomplete run's panel empty and labelled,
convergence.py skips it with a warning; with --allow-partial both draw it and mark their outputs.

The inputs are copies of the files the real code produced (CTest fixtures; the variables TOKDYN_RUNFILE,
TOKDYN_SPECTRUMFILE, TOKDYN_POWERFILE, TOKDYN_SYNCFILE, TOKDYN_MEANFIELDDIR, TOKDYN_GRIDDIR name them;
a test is skipped when its variable names nothing) with the status rewritten by h5py, and synthetic
converge result files (test_convergence.py's writer).

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
"""

import csv
import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import run_in_process

REPO = Path(__file__).resolve().parents[2]
POSTPROCESS = REPO / "postprocess"
INCOMPLETE = ("running", "checkpointed", "failed")
# script: (variable naming the produced input, file in it when the variable names a directory)
ONE_FILE = {
    "plot_run.py": ("TOKDYN_RUNFILE", None),
    "spectrum.py": ("TOKDYN_SPECTRUMFILE", None),
    "power.py": ("TOKDYN_POWERFILE", None),
    "synchronization.py": ("TOKDYN_SYNCFILE", None),
    "plot_meanfield.py": ("TOKDYN_MEANFIELDDIR", "grid.h5"),
    "animate.py": ("TOKDYN_RUNFILE", None),
}
# animate.py writes a movie: here a GIF of small frames (each carries the mark; a GIF has no Description), and no
# XDMF (it would go beside the produced input).
MOVIE = {"animate.py": ("--format", "gif", "--dpi", "60", "--no-xdmf")}
RED = np.array([0xD6, 0x27, 0x28]) / 255  # matplotlib's tab:red, the mark's box


def run(script, *args):
    return run_in_process(POSTPROCESS / script, *args, *MOVIE.get(script, ()))


def picture(tmp_path, script, name):
    """The figure a one-file script writes for -o: NAME.png, or animate.py's movie NAME.gif."""
    return tmp_path / f"{name}.{'gif' if script in MOVIE else 'png'}"


def produced(variable, name=None):
    """The produced file (or directory, name None) a variable names; skip the test when there is none."""
    path = os.environ.get(variable, "")
    if name is not None:
        path = os.path.join(path, name) if os.path.isdir(path) else ""
    if not (os.path.isfile(path) or (name is None and os.path.isdir(path))):
        pytest.skip(f"{variable} names no produced input")
    return Path(path)


def with_status(source, target, status):
    """A copy of a run file (or the file itself) with its root attribute status rewritten; returns its path."""
    if Path(source) != Path(target):
        shutil.copy(source, target)
    with h5py.File(target, "r+") as h5:
        h5.attrs["status"] = status
    return target


def png_description(path):
    from PIL import Image

    with Image.open(path) as img:
        return img.text.get("Description")


def red_box_pixels(path):
    """Pixels of the mark's red in the top-left corner of a PNG, or of a GIF's first frame (where the mark goes)."""
    from PIL import Image

    with Image.open(path) as image:
        img = np.asarray(image.convert("RGB"), dtype=float) / 255
    corner = img[:60, : img.shape[1] // 3]
    return int((np.abs(corner - RED).max(axis=2) < 0.06).sum())


def assert_refused(result, script, path, status):
    """Exit 2 and exactly one line naming the file and its status and the way around it."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"{script}: error: {path}: status is '{status}', not complete (an unfinished or failed run); "
                     f"--allow-partial plots it anyway"], result.stderr


def assert_marked(png, status):
    assert Path(png).suffix == ".gif" or png_description(png) == f"partial (status: {status})"
    assert red_box_pixels(png) > 200, "no red 'partial' box in the top-left corner"


@pytest.mark.parametrize("script", ONE_FILE)
@pytest.mark.parametrize("status", INCOMPLETE)
def test_incomplete_run_is_refused(tmp_path, script, status):
    path = with_status(produced(*ONE_FILE[script]), tmp_path / "run.h5", status)
    result = run(script, path, "-o", picture(tmp_path, script, "run"))
    assert_refused(result, script, path, status)
    assert not picture(tmp_path, script, "run").exists()


@pytest.mark.parametrize("script", ONE_FILE)
def test_allow_partial_draws_it_marked(tmp_path, script):
    source = produced(*ONE_FILE[script])
    complete = picture(tmp_path, script, "complete")
    result = run(script, source, "-o", complete)
    assert result.returncode == 0, result.stderr
    assert (script in MOVIE or png_description(complete) is None) and red_box_pixels(complete) < 20
    path = with_status(source, tmp_path / "run.h5", "failed")
    result = run(script, path, "-o", picture(tmp_path, script, "run"), "--allow-partial")
    assert result.returncode == 0, result.stderr
    assert_marked(picture(tmp_path, script, "run"), "failed")


@pytest.mark.parametrize("script", ONE_FILE)
def test_part_file_is_never_complete(tmp_path, script):
    """OUTPUT.part is a run that was never renamed: refused even when its status says complete."""
    path = with_status(produced(*ONE_FILE[script]), tmp_path / "run.h5.part", "complete")
    out = picture(tmp_path, script, "run")
    assert_refused(run(script, path, "-o", out), script, path, "complete, but still named .part")
    result = run(script, path, "-o", out, "--allow-partial")
    assert result.returncode == 0, result.stderr
    assert_marked(out, "complete, but still named .part")


def test_spectrum_json_and_csv_carry_the_status(tmp_path):
    source = produced("TOKDYN_SPECTRUMFILE")
    for name, path in (("complete", source), ("checkpointed", with_status(source, tmp_path / "run.h5", "checkpointed"))):
        js, table = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
        result = run("spectrum.py", path, "-o", tmp_path / f"{name}.png", "--json", js, "--csv", table,
                     "--allow-partial")
        assert result.returncode == 0, result.stderr
        data = json.loads(js.read_text())
        assert data["status"] == name and data["partial"] == (name != "complete")
        with open(table, newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows and all(row["status"] == name for row in rows)


def test_paper_figures_label_or_draw_incomplete_runs(tmp_path):
    grid = tmp_path / "grid"
    shutil.copytree(produced("TOKDYN_GRIDDIR"), grid)
    failed = sorted(grid.glob("grid-d5-bias0-*.h5"))[0]
    with_status(failed, failed, "failed")
    result = run("paper_figures.py", grid, "-o", tmp_path / "plain")
    assert result.returncode == 0, result.stderr
    assert png_description(tmp_path / "plain" / "grid-d5-bias0.png") is None  # its panel is empty and labelled
    result = run("paper_figures.py", grid, "-o", tmp_path / "partial", "--allow-partial")
    assert result.returncode == 0, result.stderr
    assert_marked(tmp_path / "partial" / "grid-d5-bias0.png", "failed")
    assert png_description(tmp_path / "partial" / "grid-d5-bias01.png") is None  # only complete runs there


def test_convergence_skips_or_merges_incomplete_files(tmp_path):
    import test_convergence as tc

    errors = tc.synthetic_errors(replicas=5, seed=3)
    tc.write_split(tmp_path / "sweep", errors)
    extra = {m: errors[m][:1, :1] * 1.5 for m in tc.METRICS}
    tc.write_result(tmp_path / "sweep" / "zz_running.h5", [tc.LEVELS[0]], [7], extra, status="running")
    result = run("convergence.py", tmp_path / "sweep", "-o", tmp_path / "plain")
    assert result.returncode == 0, result.stderr
    assert "skipping" in result.stderr and "zz_running.h5" in result.stderr and "--allow-partial" in result.stderr
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert plain["status"] == "complete" and plain["partial_files"] == []
    assert png_description(tmp_path / "plain.png") is None

    result = run("convergence.py", tmp_path / "sweep", "-o", tmp_path / "partial", "--allow-partial")
    assert result.returncode == 0, result.stderr
    partial = json.loads((tmp_path / "partial.json").read_text())
    assert partial["status"] == "partial"
    assert partial["partial_files"] == [{"file": str(tmp_path / "sweep" / "zz_running.h5"), "status": "running"}]
    assert partial["n"][0] == plain["n"][0] + 1  # the running file's replica is merged
    with open(tmp_path / "partial.csv", newline="") as f:
        assert {row["status"] for row in csv.DictReader(f)} == {"partial (status: running)"}
    assert_marked(tmp_path / "partial.png", "running")
