"""Tests for the helpers the postprocess scripts share (postprocess/tokdyn_h5.py): the run's parameters from its
deck, the figures' titles, the angle ticks, the lower ends of intervals on a log axis and the verdict on a
measured interval against a prediction.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess/test_tokdyn_h5.py
"""

import math
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "postprocess"))
import tokdyn_h5 as t  # noqa: E402

# A resolved deck as tokdyn writes it: converge's names [noise] and [converge] twice.
DECK = """[run]
output = c.h5
seed = 3
checkpoint = 

[model]
N = 8
d = 5
T = 0.5

[attention]
enabled = false
beta = 1e-3

[noise]
field = features

[converge]
study = depth
L0 = 16

[noise]
enabled = true

[converge]
reference_scheme = heun
pi = 0.75, 0.25
"""


def test_deck_parameters_typed_and_merged():
    p = t.deck_parameters(DECK)
    assert p["model.N"] == 8 and isinstance(p["model.N"], int)
    assert p["model.T"] == 0.5 and p["attention.beta"] == 1e-3 and isinstance(p["attention.beta"], float)
    assert p["attention.enabled"] is False and p["noise.enabled"] is True
    assert p["noise.field"] == "features" and p["converge.reference_scheme"] == "heun"  # both copies kept
    assert p["run.checkpoint"] == "" and p["converge.pi"] == "0.75, 0.25"  # lists stay text
    assert "model.n" not in p  # keys keep their case


def test_run_parameters(tmp_path):
    with h5py.File(tmp_path / "r.h5", "w") as h5:
        h5.attrs["deck"] = DECK
    with h5py.File(tmp_path / "none.h5", "w") as h5:
        h5.attrs["command"] = "transformer"
    with h5py.File(tmp_path / "bad.h5", "w") as h5:
        h5.attrs["deck"] = "N = 8 without a section"

    class Bad(Exception):
        pass

    with h5py.File(tmp_path / "r.h5", "r") as h5:
        assert t.run_parameters(h5)["converge.L0"] == 16
    with h5py.File(tmp_path / "none.h5", "r") as h5:
        assert t.run_parameters(h5) == {}
    with h5py.File(tmp_path / "bad.h5", "r") as h5, pytest.raises(Bad, match="bad.h5: root attribute 'deck' is not"):
        t.run_parameters(h5, "bad.h5", Bad)


def test_common_parameters():
    a, b = {"x": 1, "y": 2, "z": "q"}, {"x": 1, "y": 3}
    assert t.common_parameters([a, b]) == {"x": 1}
    assert t.common_parameters([a]) == a and t.common_parameters([]) == {}


def test_title():
    p = t.deck_parameters(DECK)
    title = t.title_for("converge", p, "c.h5", "checkpointed", ["extra = 1"], width=40)
    lines = title.splitlines()
    assert lines[0] == "tokdyn converge: c.h5  [partial (status: checkpointed)]"
    # The deck's values, a switched-off section named once, wrapped between parameters only.
    text = ", ".join(lines[1:])
    assert text == "study = depth, N = 8, d = 5, T = 0.5, L0 = 16, attention off, noise = features, extra = 1"
    assert all(len(line) <= 40 for line in lines[1:])
    assert t.title_for("transformer", {}, "x.h5") == "tokdyn transformer: x.h5"
    # A switch shows its label when on, nothing when off.
    assert t.parameter_text("power", {"power.residual": True, "power.causal": False}) == "I + F"


def test_pi_ticks():
    labels = [t.pi_label(k * math.pi / 2) for k in range(-2, 6)]
    assert labels == [r"$-\pi$", r"$-\pi/2$", "0", r"$\pi/2$", r"$\pi$", r"$3\pi/2$", r"$2\pi$", r"$5\pi/2$"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 2 * math.pi], [0, 1])
    ax.set_xlim(0, 2 * math.pi)
    t.pi_axis(ax.xaxis)
    fig.canvas.draw()
    shown = [(x, label.get_text()) for x, label in zip(ax.get_xticks(), ax.get_xticklabels())
             if -1e-9 <= x <= 2 * math.pi + 1e-9]
    assert np.allclose([x for x, _ in shown], np.arange(5) * math.pi / 2)
    assert [text for _, text in shown] == ["0", r"$\pi/2$", r"$\pi$", r"$3\pi/2$", r"$2\pi$"]
    plt.close(fig)


def test_log_lower():
    """Ends at or below mean / 20 (negative and NaN included) are raised there and marked; others kept."""
    mean = np.array([1.0, 1.0, 2.0, 4.0])
    low = np.array([0.5, -0.3, 0.05, np.nan])
    ends, clipped = t.log_lower(mean, low)
    assert np.allclose(ends, [0.5, 0.05, 0.1, 0.2]) and clipped.tolist() == [False, True, True, True]
    assert np.all(ends > 0)


def test_interval_verdict():
    """As tokdyn's console (src/diagnostics/fit.cpp against_prediction): a prediction outside the interval, or
    a bound below its lower end, disagrees; no interval does not."""
    assert t.interval_verdict(0.03, 0.12, 0.2) == (True, "the interval excludes the prediction 0.2")
    assert t.interval_verdict(-1.2, -0.8, -1)[0] is False
    assert t.interval_verdict(-1.2, -1.0, -1)[0] is False  # the ends belong to the interval
    assert t.interval_verdict(-2.9, -2.4, -0.31, at_most=True)[0] is False
    assert t.interval_verdict(-0.2, 0.1, -0.31, at_most=True) == (True, "the interval lies above the bound -0.31")
    assert t.interval_verdict(math.nan, math.nan, 0.0) == (False, "no interval")


# ---- load(): the reader for users ----

def test_load_real_run_file():
    """A file of the real code (CTest's runfile fixture): typed parameters equal the deck's, every dataset
    read with its description, units and axes (one name per dimension), partial refused."""
    import os

    path = os.environ.get("TOKDYN_RUNFILE", "")
    if not os.path.isfile(path):
        pytest.skip("TOKDYN_RUNFILE names no file")
    run = t.load(path)
    assert run.command == "transformer" and run.status == "complete"
    assert run.params == {k: run.params[k] for k in t.deck_parameters(run.attrs["deck"])}
    n, d = run.params["model.N"], run.params["model.d"]
    assert isinstance(n, int) and not isinstance(n, bool) and isinstance(run.params["attention.enabled"], bool)
    assert run["tokens/X"].shape[1:] == (n, d)
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(run["diagnostics/energy"], f["diagnostics/energy"][()])
    for name in run.data:
        meta = run.info[name]
        assert meta["description"] and meta["units"]
        assert len(meta["axes"]) == max(run.data[name].ndim, 1)
    text = run.describe()
    assert all(name in text for name in run.data)


def test_load_group_attributes_and_axes(tmp_path):
    """Group attributes by group; a dataset whose dimensions are not its declared axes is refused."""
    path = tmp_path / "run.h5"
    with h5py.File(path, "w") as f:
        f.attrs["command"] = "markov"
        f.attrs["status"] = "complete"
        f.attrs["deck"] = "[markov]\nd = 3\n"
        g = f.create_group("markov")
        g.attrs["t_I"] = 16.5
        g.attrs["stage_criteria"] = "rank 0.1"
        f["markov/pi"] = np.ones(3) / 3
        f["markov/pi"].attrs["axes"] = "token"
    run = t.load(str(path))
    assert run.groups["markov"] == {"t_I": 16.5, "stage_criteria": "rank 0.1"}
    assert "markov@t_I = 16.5" in run.describe()
    with h5py.File(path, "a") as f:
        f["markov/pi"].attrs["axes"] = "row, token"
    with pytest.raises(ValueError, match="markov/pi has 1 dimensions, its declaration names 2 axes"):
        t.load(str(path))


def test_load_older_file_and_partial(tmp_path):
    """A file without typed root attributes: parameters from the stored deck; an unfinished run refused
    unless allow_partial."""
    path = tmp_path / "old.h5"
    with h5py.File(path, "w") as f:
        f.attrs["command"] = "transformer"
        f.attrs["status"] = "running"
        f.attrs["deck"] = "[model]\nN = 12\nbeta = 2.5\n\n[mlp]\nenabled = true\nactivation = tanh\n"
        f["diagnostics/energy"] = np.arange(3.0)
    with pytest.raises(ValueError, match="not complete"):
        t.load(str(path))
    run = t.load(str(path), allow_partial=True)
    assert run.params == {"model.N": 12, "model.beta": 2.5, "mlp.enabled": True, "mlp.activation": "tanh"}
    np.testing.assert_array_equal(run["/diagnostics/energy"], np.arange(3.0))
    assert "diagnostics/energy" in run and run.info["diagnostics/energy"] == {}
    assert run.groups["diagnostics"] == {}
    with pytest.raises(ValueError, match="no such file"):
        t.load(str(tmp_path / "missing.h5"))
