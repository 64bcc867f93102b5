"""Hostile input never ends the postprocess scripts in a Python traceback.

- A `$` in a file name (matplotlib reads text between two `$` as mathtext, and fails on "$^$"): every
  figure is drawn, the name shown as it is.
- A `tokdyn train` run that failed with NaN (status failed, NaN and Inf in its loss series, no end-of-run
  attributes) with --allow-partial: the finite part is drawn, the figures marked partial.
- A checkpointed `tokdyn markov` run (*.h5.part, no stage onsets t_I .. t_IV) with --allow-partial: drawn,
  marked partial; the same for a sweep holding one.
- An empty dataset, two series of different lengths, text where a number belongs (dataset or attribute):
  one line on stderr naming the file and the dataset or attribute, exit status 2.
- Anything else unexpected (data no check foresees, or a bug): one line naming the exception and where it
  was raised, exit status 2.

The inputs are copies of the files the real code produced (CTest fixtures, the variables of test_partial.py;
a test is skipped when its variable names nothing), edited with h5py, and synthetic converge files. The
scripts run in this process (their main()), for speed; one case runs as a process of its own.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
"""

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
POSTPROCESS = REPO / "postprocess"
sys.path.insert(0, str(POSTPROCESS))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
# The produced input of each script: (variable, file in the directory it names, or None: the file itself).
INPUT = {
    "plot_run": ("TOKDYN_RUNFILE", None),
    "spectrum": ("TOKDYN_SPECTRUMFILE", None),
    "power": ("TOKDYN_POWERFILE", None),
    "synchronization": ("TOKDYN_SYNCFILE", None),
    "phase": ("TOKDYN_PHASEFILE", None),
    "mlmc": ("TOKDYN_MLMCFILE", None),
    "plot_meanfield": ("TOKDYN_MEANFIELDDIR", "grid.h5"),
    "focus_dilution": ("TOKDYN_MARKOVDIR", "eps-0.h5"),
    "training": ("TOKDYN_TRAINDIR", "train-adamw-bq-s1.h5"),
    "lens": ("TOKDYN_LENSFILE", None),
    "paper_figures": ("TOKDYN_GRIDDIR", "grid-d5-bias0-relu-f1.h5"),
    "animate": ("TOKDYN_RUNFILE", None),
}


def produced(script):
    variable, name = INPUT[script]
    path = os.environ.get(variable, "")
    path = os.path.join(path, name) if name else path
    if not os.path.isfile(path):
        pytest.skip(f"{variable} names no produced input")
    return Path(path)


def copy_input(script, tmp_path, name):
    """A copy of the script's produced input named `name` (paper_figures: the whole grid directory); returns
    (the path to give the script, the file to edit)."""
    source = produced(script)
    if script == "paper_figures":
        shutil.copytree(source.parent, tmp_path / "grid")
        return tmp_path / "grid", tmp_path / "grid" / source.name
    shutil.copy(source, tmp_path / name)
    return tmp_path / name, tmp_path / name


def arguments(script, target, tmp_path):
    out = tmp_path / "out"
    if script == "focus_dilution":
        return ["run", target, "-o", f"{out}.png"]
    if script in ("training", "paper_figures", "report"):
        return [target, "-o", out]
    if script == "animate":  # a movie: a GIF of small frames
        return [target, "-o", f"{out}.gif", "--dpi", "40"]
    return [target, "-o", f"{out}.png"]


def call(script, args, capsys):
    """main(args) of a postprocess script in this process: (exit status, stderr lines)."""
    import matplotlib.pyplot as plt

    module = importlib.import_module(script)
    capsys.readouterr()
    try:
        code = module.main([str(a) for a in args])
    finally:
        plt.close("all")
    return code, capsys.readouterr().err.strip().splitlines()


def png_description(path):
    from PIL import Image

    with Image.open(path) as img:
        return img.text.get("Description")


# ------------------------------------------------------------------------------------- a `$` in a name

@pytest.mark.parametrize("script", [s for s in INPUT if s != "paper_figures"])  # its file names are fixed
def test_dollar_in_file_name(tmp_path, capsys, script):
    target, _ = copy_input(script, tmp_path, "run$^$x.h5")
    code, err = call(script, arguments(script, target, tmp_path), capsys)
    assert code == 0, err
    assert list(tmp_path.glob("out*.gif" if script == "animate" else "out*.png"))


def test_dollar_in_file_name_of_report(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    shutil.copy(produced("plot_run"), tmp_path / "runs" / "a$^$b.h5")
    code, err = call("report", [tmp_path / "runs", "-o", tmp_path / "r.html"], capsys)
    assert code == 0, err
    assert "files not used" not in (tmp_path / "r.html").read_text()


def test_title_escapes_dollar():
    import tokdyn_h5

    title = tokdyn_h5.title_for("markov", {"markov.data": "a$b$c.txt"}, "x$y.h5")
    assert r"x\$y.h5" in title and r"a\$b\$c.txt" in title
    assert tokdyn_h5.plain_text("$^$") == r"\$^\$"


# ------------------------------------------------------------------------------------- partial runs

def test_failed_train_run_with_nan(tmp_path, capsys):
    """A run that failed with NaN: no end-of-run attributes, NaN and Inf at the end of its losses."""
    path, _ = copy_input("training", tmp_path, "train.h5.part")
    with h5py.File(path, "r+") as h5:
        h5.attrs["status"] = "failed"
        g = h5["train"]
        for name in ("final_val_loss", "final_val_loss_ema", "min_val_loss", "min_val_step",
                     "final_train_loss_ema", "tokens_per_second", "charge_relative_max", "charge_drift_max"):
            del g.attrs[name]
        del g["alignment"], g["alignment_cos"]
        d = h5["diagnostics"]
        for name in ("val_loss", "val_loss_ema", "train_loss_ema"):
            values = d[name][()]
            values[-2:] = (np.inf, np.nan)
            d[name][...] = values
    code, err = call("training", [path, "-o", tmp_path / "t", "--allow-partial"], capsys)
    assert code == 0, err
    for name in ("losses", "charges", "alignment"):
        assert png_description(tmp_path / f"t-{name}.png").startswith("partial (status:")


def checkpointed(path):
    """Make a markov run file look checkpointed: status, and none of the end-of-run results."""
    with h5py.File(path, "r+") as h5:
        h5.attrs["status"] = "checkpointed"
        g = h5["markov"]
        for name in ("t_I", "t_II", "t_III", "t_IV", "final_loss", "stage_criteria", "steps", "evaluations"):
            del g.attrs[name]
        del g["stage_I_rate"]


def test_checkpointed_markov_run(tmp_path, capsys):
    path, _ = copy_input("focus_dilution", tmp_path, "m.h5.part")
    checkpointed(path)
    code, err = call("focus_dilution", ["run", path, "-o", tmp_path / "m.png"], capsys)
    assert code == 2 and len(err) == 1 and "status is 'checkpointed'" in err[0], err
    code, err = call("focus_dilution", ["run", path, "-o", tmp_path / "m.png", "--allow-partial"], capsys)
    assert code == 0, err
    for png in ("m.png", "m-pca.png"):
        assert png_description(tmp_path / png) == "partial (status: checkpointed)"


def test_sweep_with_a_checkpointed_run(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    shutil.copytree(produced("focus_dilution").parent, sweep)
    checkpointed(sweep / "eps-2.h5")
    code, err = call("focus_dilution", ["sweep", sweep, "-o", tmp_path / "s", "--allow-partial"], capsys)
    assert code == 0, err
    assert png_description(tmp_path / "s.png") == "partial (status: checkpointed,complete)"


# ------------------------------------------------------------------------------------- hostile data

def edit(path, where, change):
    """Edit a dataset ("group/name") or an attribute ("group@name", "@name" at the root) of a file: change is
    empty (no entries), short (one entry less along the first axis) or text (strings instead of numbers)."""
    with h5py.File(path, "r+") as h5:
        if "@" in where:
            group, name = where.split("@")
            (h5[group] if group else h5).attrs[name] = "abc"
            return
        value = h5[where][()]
        del h5[where]
        if change == "empty":
            h5[where] = np.zeros((0,) + value.shape[1:], value.dtype)
        elif change == "short":
            h5[where] = value[:-1]
        else:
            h5[where] = np.array(["x"] * len(value), dtype=h5py.string_dtype())


WHAT = {"empty": "is empty", "short": "not the same number of", "text": "holds text, not numbers",
        "attribute": "is 'abc', not a number"}
CASES = [
    ("plot_run", "diagnostics/min_cosine", "empty"), ("plot_run", "diagnostics/time", "short"),
    ("plot_run", "diagnostics/energy", "text"), ("plot_run", "diagnostics@beta", "attribute"),
    ("spectrum", "spectrum/gap", "empty"), ("spectrum", "spectrum/eigenvalues_im", "short"),
    ("spectrum", "spectrum/converged", "text"), ("spectrum", "spectrum@nev", "attribute"),
    ("power", "power/rho", "empty"), ("power", "power/gamma_q1", "short"), ("power", "steer/strength", "empty"),
    ("power", "power/layer", "text"), ("power", "power@baseline", "attribute"),
    ("synchronization", "synchronization/bound", "empty"), ("synchronization", "synchronization/time", "short"),
    ("synchronization", "synchronization/energy", "text"), ("synchronization", "synchronization@lambdabar", "attribute"),
    ("phase", "phase/beta", "empty"), ("phase", "phase/time", "short"), ("phase", "phase/density", "text"),
    ("mlmc", "mlmc/var_y", "empty"), ("mlmc", "mlmc/kurtosis", "short"), ("mlmc", "mlmc/mean_y", "text"),
    ("mlmc", "mlmc@estimate", "attribute"),
    ("plot_meanfield", "diagnostics/energy", "empty"), ("plot_meanfield", "meanfield/theta", "short"),
    ("plot_meanfield", "meanfield/snapshot_time", "text"),
    ("focus_dilution", "markov/pi", "empty"), ("focus_dilution", "markov/mass", "short"),
    ("focus_dilution", "diagnostics/loss", "text"), ("focus_dilution", "markov@sigma_star", "attribute"),
    ("training", "diagnostics/step", "empty"), ("training", "diagnostics/charge_relative", "short"),
    ("training", "diagnostics/val_loss", "text"), ("training", "train@final_val_loss_ema", "attribute"),
    ("training", "@seed", "attribute"),
    ("lens", "lens/step", "empty"), ("lens", "lens/gap", "short"), ("lens", "lens/gamma_mean", "text"),
    ("lens", "lens@baseline", "attribute"),
    ("paper_figures", "diagnostics/energy", "empty"), ("paper_figures", "diagnostics/cosine_bin_edges", "short"),
    ("paper_figures", "diagnostics/layer", "text"),
    ("animate", "tokens/X", "empty"), ("animate", "tokens/time", "short"), ("animate", "tokens/layer", "text"),
]


@pytest.mark.parametrize("script,where,change", CASES)
def test_hostile_data(tmp_path, capsys, script, where, change):
    target, path = copy_input(script, tmp_path, "run.h5")
    edit(path, where, change)
    code, err = call(script, arguments(script, target, tmp_path), capsys)
    name = where.split("@")[-1].split("/")[-1]
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"{script}.py: error: {path}: "), err
    assert name in err[0] and WHAT[change] in err[0], err


def test_converge_attribute_text(tmp_path, capsys):
    import test_convergence as tc

    tc.write_tokens_split(tmp_path / "sweep", tc.synthetic_tokens(-0.5, replicas=3))
    path = sorted((tmp_path / "sweep").glob("*.h5"))[0]
    edit(path, "converge@bound_slope", "attribute")
    code, err = call("convergence", [tmp_path / "sweep", "-o", tmp_path / "c"], capsys)
    assert code == 2 and err == [f"convergence.py: error: {path}: attribute /converge/bound_slope is 'abc', "
                                 f"not a number"], err


def test_one_line_as_a_process(tmp_path):
    """The same as a process: exit status 2, one line, no traceback."""
    path, _ = copy_input("plot_run", tmp_path, "run.h5")
    edit(path, "diagnostics@beta", "attribute")
    result = subprocess.run([PYTHON, str(POSTPROCESS / "plot_run.py"), str(path), "-o", str(tmp_path / "r.png")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"plot_run.py: error: {path}: attribute /diagnostics/beta is 'abc', not a number"]


def test_unexpected_error_is_one_line(tmp_path, capsys, monkeypatch):
    """An error no check foresees (here: raised under the figure): one line naming the exception, the files
    read and the script's line it came through; exit status 2."""
    import test_convergence as tc

    tc.write_split(tmp_path / "sweep", tc.synthetic_errors(replicas=3))
    module = importlib.import_module("convergence")

    def broken(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(module, "make_figure", broken)
    code, err = call("convergence", [tmp_path / "sweep", "-o", tmp_path / "c"], capsys)
    assert code == 2 and len(err) == 1, err
    assert re.match(r"convergence\.py: error: \S+\.h5 and \d+ other files: ZeroDivisionError: float division by zero "
                    r"\(convergence\.py line \d+, in figure_of\)", err[0]), err
