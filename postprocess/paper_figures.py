#!/usr/bin/env python3
"""The paper's figures (doc/science.md section 6.5) from a directory of tokdyn transformer run files.

Usage:
    paper_figures.py RUNDIR [-o OUTDIR] [--allow-partial]

Input: the run files jobscripts/grid.sbatch writes, RUNDIR/<deck>-<activation>-f<factor>.h5 with
<deck> = grid-d<d>-bias<b> (grid-d5-bias0, grid-d64-bias01, ...), <activation> in relu silu sigmoid
tanh none (none: no MLP) and <factor> in 1 0 -1; and the Fig. 1 runs RUNDIR/fig1-relu.h5,
RUNDIR/fig1-tanh.h5 (the decks' default outputs) when present.

Output (OUTDIR, default ./figures, created when missing):
    grid-d<d>-bias<b>.png  for each (d, bias) with at least one run: a row per activation, a column per
                           attention factor; each panel the pairwise-cosine histogram against layer as
                           an image (colour: fraction of pairs, log scale) with E_beta against layer on a
                           twin log axis (white, labelled, its ticks at 8 pt). A missing run, or one whose
                           status is not complete, leaves its panel empty with a label saying so. The
                           title names the parameters the runs share (their decks).
    fig1.png               ReLU and Tanh (attention off): cosine histogram against layer, and the last
                           layer's cosine distribution (one cluster vs two antipodal ones); a missing
                           or incomplete run leaves its panels empty with a label likewise.
With --allow-partial the runs whose status is not complete are drawn too, each panel labelled
"partial (status: X)", and a figure holding one is marked partial.
The paths written are printed on stdout, one per line.

Errors (RUNDIR missing or without any grid or Fig. 1 run file, an unreadable file, a dataset that is empty (in
a complete run), of another length than those drawn with it or holding text) end with a one-line message
"paper_figures.py: error: ..." on stderr and exit status 2.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("paper_figures.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, common_parameters, open_run, partial_label,  # noqa: E402
                       plain_text, read_datasets, readable_log_axis, run_parameters, save_figure, set_title)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

PROG = "paper_figures.py"
ACTIVATIONS = ("relu", "silu", "sigmoid", "tanh", "none")
FACTORS = ("1", "0", "-1")
GRID_NAME = re.compile(r"^(grid-d(\d+)-bias(\w+?))-(" + "|".join(ACTIVATIONS) + r")-f(-?\d+)\.h5$")
FIG1 = ("relu", "tanh")
TICK_SIZE = 8  # points: the E_beta axes' tick labels (readable on a slide)
SHAPES = {"layer": ("layers",), "energy": ("layers",), "cosine_histogram": ("layers", "bins"),
          "cosine_bin_edges": ("bins+1",)}


class FigureError(Exception):
    """Input that cannot be turned into the figures."""


def read_run(path):
    """Return status, parameters (the resolved deck) and the per-layer diagnostics of a run file (of any
    status: the figures decide what an incomplete run shows)."""
    h5, status = open_run(path, FigureError, allow_partial=True)
    with h5:
        if "diagnostics" not in h5:
            raise FigureError(f"{path}: missing group /diagnostics")
        run = {"status": status, "parameters": run_parameters(h5, path, FigureError)}
        run.update(read_datasets(h5["diagnostics"], path, SHAPES, FigureError, np.float64))
    # An unfinished run may hold no layer yet (its panel stays empty, see shown).
    check_shapes(path, run, SHAPES, FigureError, "/diagnostics/", empty_ok=() if status == "complete" else ("layers",))
    return run


def find_runs(rundir):
    """Return ({deck: {(activation, factor): path}}, {activation: path}) of the files in rundir."""
    if not os.path.isdir(rundir):
        raise FigureError(f"no such directory: {rundir}")
    grids, fig1 = {}, {}
    for name in sorted(os.listdir(rundir)):
        m = GRID_NAME.match(name)
        if m:
            grids.setdefault(m.group(1), {})[(m.group(4), m.group(5))] = os.path.join(rundir, name)
        for act in FIG1:
            if name == f"fig1-{act}.h5":
                fig1[act] = os.path.join(rundir, name)
    if not grids and not fig1:
        raise FigureError(f"{rundir} holds no grid run files (grid-d<d>-bias<b>-<activation>-f<factor>.h5, "
                          f"see jobscripts/grid.sbatch) and no fig1-relu.h5 / fig1-tanh.h5")
    return grids, fig1


def energy_limits(runs):
    """Common E_beta axis limits of a figure's runs (positive values only), or None."""
    values = np.concatenate([r["energy"][r["energy"] > 0] for r in runs] or [np.empty(0)])
    return (max(values.min(), 1e-14) / 2, values.max() * 2) if values.size else None


def cosine_image(ax, run, energy_ylim=None):
    """Histogram of pairwise cosines against layer (fractions, log colour) and E_beta on a twin axis."""
    hist, edges, layer = run["cosine_histogram"], run["cosine_bin_edges"], run["layer"]
    frac = hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)
    positive = frac[frac > 0]
    norm = LogNorm(vmin=max(positive.min(), 1e-4), vmax=1) if positive.size else None
    extent = (layer[0], layer[-1] if layer[-1] > layer[0] else layer[0] + 1, edges[0], edges[-1])
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad(cmap(0.0))  # bins without pairs: the colour of the fewest
    image = ax.imshow(np.where(frac > 0, frac, np.nan).T, origin="lower", aspect="auto", extent=extent,
                      norm=norm, cmap=cmap, interpolation="nearest")
    ax.set_ylim(-1, 1)
    tx = ax.twinx()
    energy = run["energy"]
    ok = energy > 0
    tx.plot(layer[ok], energy[ok], color="white", lw=1.4)
    if ok.any():
        tx.set_yscale("log")
        if energy_ylim:
            tx.set_ylim(*energy_ylim)
        readable_log_axis(tx.yaxis)
    tx.tick_params(labelsize=TICK_SIZE)
    tx.set_ylabel(r"$E_\beta$", fontsize=TICK_SIZE + 1)
    return image


def shown(run, allow_partial):
    """Whether a run's data are drawn: complete, or any status with --allow-partial (and a layer to draw)."""
    return run is not None and run["layer"].size > 0 and (run["status"] == "complete" or allow_partial)


def partial_statuses(runs, allow_partial):
    """The statuses of the incomplete runs drawn in a figure, for its mark ('complete' when none)."""
    statuses = sorted({r["status"] for r in runs if r is not None and r["status"] != "complete"})
    return ", ".join(statuses) if allow_partial and statuses else "complete"


def label_partial(ax, run):
    """The panel's own mark when its run is not complete."""
    if run["status"] != "complete":
        ax.text(0.02, 0.95, plain_text(partial_label(run["status"])), transform=ax.transAxes, color="tab:red", va="top",
                fontsize=8, fontweight="bold", bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "tab:red"})


def make_grid_figure(deck, loaded, allow_partial=False):
    """One (d, bias) grid of runs read by read_run ({(activation, factor): run}): rows = activations,
    columns = attention factors."""
    fig, axes = plt.subplots(len(ACTIVATIONS), len(FACTORS), figsize=(13, 15), sharex=False, sharey=True,
                             squeeze=False)
    image = None
    ylim = energy_limits([r for r in loaded.values() if shown(r, allow_partial)])
    for i, act in enumerate(ACTIVATIONS):
        for j, factor in enumerate(FACTORS):
            ax = axes[i, j]
            run = loaded.get((act, factor))
            if not shown(run, allow_partial):
                why = "missing" if run is None else f"status {run['status'] or 'unknown'}"
                ax.text(0.5, 0.5, plain_text(f"{why}:\n{deck}-{act}-f{factor}.h5"), ha="center", va="center",
                        transform=ax.transAxes, fontsize=8, color="tab:red")
                ax.set_xticks([])
            else:
                image = cosine_image(ax, run, ylim)
                label_partial(ax, run)
            if i == 0:
                ax.set_title(f"attention factor {factor}", fontsize=10)
            if j == 0:
                ax.set_ylabel(("no MLP" if act == "none" else act) + "\ncosine", fontsize=10)
            if i == len(ACTIVATIONS) - 1:
                ax.set_xlabel("layer")
    if image is not None:
        fig.colorbar(image, cax=fig.add_axes((0.92, 0.3, 0.015, 0.4)), label="fraction of pairs")
    fig.subplots_adjust(left=0.07, right=0.86, top=0.92, bottom=0.04, hspace=0.25, wspace=0.4)
    drawn = [r for r in loaded.values() if shown(r, allow_partial)]
    set_title(fig, "transformer", common_parameters(r["parameters"] for r in drawn), deck,
              extra=["pairwise cosines against layer (image)", "E_beta (white, right log axis)"], fontsize=11)
    return fig


def grid_figure(deck, runs, outdir, allow_partial=False):
    """Write the figure of one (d, bias) grid ({(activation, factor): path}) into outdir; return its path."""
    loaded = {key: read_run(path) for key, path in runs.items()}
    fig = make_grid_figure(deck, loaded, allow_partial)
    out = os.path.join(outdir, f"{deck}.png")
    save_figure(fig, out, partial_statuses(loaded.values(), allow_partial))
    return out


def make_fig1_figure(loaded, allow_partial=False):
    """Fig. 1 from runs read by read_run ({activation: run}): ReLU vs Tanh, attention off: cosines against
    layer and at the last layer."""
    fig, axes = plt.subplots(2, len(FIG1), figsize=(11, 7), squeeze=False)
    image = None
    for j, act in enumerate(FIG1):
        top, bottom = axes[0, j], axes[1, j]
        top.set_title(f"fig1-{act}")
        run = loaded.get(act)
        if not shown(run, allow_partial):
            why = "missing" if run is None else f"status {run['status'] or 'unknown'}"
            for ax in (top, bottom):
                ax.text(0.5, 0.5, plain_text(f"{why}: fig1-{act}.h5"), ha="center", va="center", transform=ax.transAxes,
                        color="tab:red")
            continue
        image = cosine_image(top, run)
        top.set_xlabel("layer")
        top.set_ylabel("cosine")
        edges, last = run["cosine_bin_edges"], run["cosine_histogram"][-1]
        bottom.stairs(last / max(last.sum(), 1), edges, fill=True, color="tab:blue")
        bottom.set_xlabel(f"cosine at the last layer ({int(run['layer'][-1])})")
        bottom.set_ylabel("fraction of pairs")
        label_partial(top, run)
    fig.subplots_adjust(left=0.08, right=0.84, top=0.86, hspace=0.35, wspace=0.45)
    if image is not None:  # one colour bar beside the panels: a per-panel one would sit under the E_beta axis
        fig.colorbar(image, cax=fig.add_axes((0.91, 0.55, 0.015, 0.3)), label="fraction of pairs")
    drawn = [r for r in loaded.values() if shown(r, allow_partial)]
    set_title(fig, "transformer", common_parameters(r["parameters"] for r in drawn),
              extra=["Fig. 1: ReLU (one cluster) vs Tanh without biases (two antipodal clusters)"])
    return fig


def fig1_figure(paths, outdir, allow_partial=False):
    """Write Fig. 1 of the runs {activation: path} into outdir; return its path."""
    loaded = {act: read_run(path) for act, path in paths.items()}
    fig = make_fig1_figure(loaded, allow_partial)
    out = os.path.join(outdir, "fig1.png")
    save_figure(fig, out, partial_statuses(loaded.values(), allow_partial))
    return out


def write_figures(rundir, outdir, allow_partial=False):
    """Write every figure the runs in rundir allow into outdir; return the paths written."""
    grids, fig1 = find_runs(rundir)
    os.makedirs(outdir, exist_ok=True)
    written = [grid_figure(deck, runs, outdir, allow_partial) for deck, runs in sorted(grids.items())]
    if fig1:
        written.append(fig1_figure(fig1, outdir, allow_partial))
    return written


ARGUMENTS = ((("rundir",), {}), (("-o", "--outdir"), {"default": "figures"}), ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, FigureError, ARGUMENTS,
                    lambda a: write_figures(a.rundir, a.outdir, a.allow_partial), argv)


if __name__ == "__main__":
    sys.exit(main())
