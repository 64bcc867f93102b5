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


# ------------------------------------------------------------------ figures: title, footer, problems, saving

def _figure(panels=1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, panels, figsize=(6, 4), squeeze=False)


def test_figure_problems_empty_panel_needs_a_reason():
    """A panel with neither data nor text is a problem; one that says why it is empty is not."""
    fig, axes = _figure(2)
    axes[0][0].plot([0, 1], [0, 1])
    assert t.figure_problems(fig) == ["panel 'panel 2' is empty and says nothing about why"]
    axes[0][1].text(0.5, 0.5, "no run with b_Q", transform=axes[0][1].transAxes)
    assert t.figure_problems(fig) == []


def test_figure_problems_legend_over_a_curve_or_a_title():
    """A legend that a labelled curve passes under (the twin axis' too) is flagged, one beside the curves not;
    nor an unlabelled marker line (a stage boundary)."""
    fig, axes = _figure()
    ax = axes[0][0]
    ax.plot([0, 10], [0.5, 0.5], label="level")  # straight through the middle of the panel
    ax.legend(loc="center")
    assert t.figure_problems(fig) == ["the legend of panel 'panel 1' covers the curve 'level'"]
    ax.set_ylim(0, 3)
    ax.legend(loc="upper right")  # the line is at 1/6 of the height
    ax.axvline(9.5, color="k")  # unlabelled: a marker, not a curve
    assert t.figure_problems(fig) == []
    twin = ax.twinx()
    twin.plot([0, 10], [1, 1], label="twin")
    twin.set_ylim(0, 1.05)  # the twin's curve runs along the top, under the legend
    assert t.figure_problems(fig) == ["the legend of panel 'panel 1' covers the curve 'twin'"]
    fig2, axes2 = _figure()
    ax2 = axes2[0][0]
    ax2.set_title("a title")
    ax2.plot([0, 1], [0, 1], label="x")
    ax2.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0))  # on top of the title
    assert t.figure_problems(fig2) == ["the legend of panel 'a title' covers the title 'a title'"]


def test_figure_problems_single_tick_on_a_log_axis_and_its_cure():
    """A log axis over less than a decade can show one labelled tick (no scale); readable_log_axis gives it
    several, over a factor of 5 and of 1.2 alike."""
    from matplotlib import ticker

    for low, high in ((0.15, 0.8), (0.46, 0.55)):
        fig, axes = _figure()
        ax = axes[0][0]
        ax.plot([0, 1], [low, high])
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.yaxis.set_major_locator(ticker.FixedLocator([0.5]))  # what a decade-based locator leaves here
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        assert t.figure_problems(fig) == ["panel 'panel 1' has a single labelled tick on its logarithmic y axis"]
        t.readable_log_axis(ax.yaxis)
        assert t.figure_problems(fig) == []
        labels = [x.get_text() for x in ax.get_yticklabels() if x.get_text()]
        locs = [v for v in ax.yaxis.get_majorticklocs() if low <= v <= high]
        assert len(labels) >= 2 and len(locs) >= 2


def test_set_title_and_save_figure(tmp_path, monkeypatch):
    """The title holds the parameters, not the file name; the footer the file and the provenance; a title far
    wider than its figure is wrapped to it; the saved PNG has every text inside (its border rows and columns
    are background); a problem raises under TOKDYN_FIGURE_CHECK=error and only warns otherwise."""
    import matplotlib.image as mpimg

    fig, axes = _figure()
    axes[0][0].plot([0, 1], [0, 1])
    params = {f"model.{k}": v for k, v in (("N", 64), ("d", 4), ("L", 400), ("T", 20))}
    params.update({f"mlp.{k}": v for k, v in (("activation", "relu"), ("width", 512), ("sigma_u", 0.5),
                                               ("sigma_w", 0.25))})
    t.set_title(fig, "transformer", params, "run.h5", footer=["2 ranks", "tokdyn 0.1.0 (abc)"])
    title = fig._suptitle.get_text()
    assert title.startswith("tokdyn transformer\n") and "run.h5" not in title and "N = 64" in title
    assert max(len(line) for line in title.splitlines()) <= 6 * 72 / (0.6 * 12)  # wrapped to the figure's width
    assert [x.get_text() for x in fig.texts if x is not fig._suptitle] == ["run.h5  |  2 ranks  |  tokdyn 0.1.0 (abc)"]
    out = tmp_path / "f.png"
    t.save_figure(fig, str(out))
    img = mpimg.imread(str(out))[..., :3]
    for edge in (img[0], img[-1], img[:, 0], img[:, -1]):
        assert np.abs(edge - img[0, 0]).max() < 0.1  # nothing drawn up to the border: nothing cut off
    fig, axes = _figure(2)
    axes[0][0].plot([0, 1], [0, 1])
    monkeypatch.setenv(t.FIGURE_CHECK, "error")
    with pytest.raises(ValueError, match="figure: panel 'panel 2' is empty"):
        t.save_figure(fig, str(tmp_path / "g.png"))
    fig, axes = _figure(2)
    axes[0][0].plot([0, 1], [0, 1])
    monkeypatch.delenv(t.FIGURE_CHECK)
    with pytest.warns(t.FigureWarning, match="is empty"):
        t.save_figure(fig, str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").is_file()
