#!/usr/bin/env python3
"""Plot one tokdyn transformer or sde run file (HDF5) as a single PNG overview figure.

Usage:
    plot_run.py RUNFILE [-o OUT.png] [--snapshots K] [--allow-partial]

Panels (against layer; an sde run: against time t, its L being time steps):
    (a) interaction energy E_beta (log y-axis when all values are positive),
        with the order parameter |mean x| on a twin axis;
    (b) pairwise-cosine histogram as an image (colour: fraction of pairs,
        log scale), with the mean cosine overlaid;
    (c) first two token coordinates at up to K snapshots, chosen evenly
        among the stored snapshots (first and last included).
The title names the run's parameters (its resolved deck); a footer the file, the ranks and the version.

Errors (missing file, not HDF5, missing group or dataset, a dataset that is
empty, of another length than those drawn with it or holding text, a run whose
status is not complete without --allow-partial) end with a one-line message
"plot_run.py: error: ..." on stderr and exit status 2. With --allow-partial an
unfinished or failed run is drawn, marked "partial (status: X)".
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("plot_run.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, open_run, read_datasets, read_numbers, run_cli,  # noqa: E402
                       readable_log_axis, run_parameters, save_figure, set_title, to_scalar, to_str)
from tokdyn_h5 import check_shapes as check_shapes_of  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

PROG = "plot_run.py"

# Datasets the figure cannot do without; anything else is optional.
REQUIRED = {
    "tokens": ["X", "layer"],
    "diagnostics": ["layer", "energy", "order_parameter", "mean_cosine",
                    "cosine_histogram", "cosine_bin_edges"],
}
OPTIONAL = {
    "tokens": ["time"],
    "diagnostics": ["time", "min_cosine"],
}
# Their shapes (tokdyn_h5.check_shapes): a run may hold no diagnostics or no snapshots yet.
SHAPES = {"tokens/X": ("snapshots", "tokens", "d"), "tokens/layer": ("snapshots",), "tokens/time": ("snapshots",),
          "diagnostics/layer": ("records",), "diagnostics/time": ("records",), "diagnostics/energy": ("records",),
          "diagnostics/order_parameter": ("records",), "diagnostics/mean_cosine": ("records",),
          "diagnostics/min_cosine": ("records",), "diagnostics/cosine_histogram": ("records", "bins"),
          "diagnostics/cosine_bin_edges": ("bins+1",)}


class RunFileError(Exception):
    """A run file that cannot be read or does not follow the schema."""


def read_run(path, allow_partial=False):
    """Read a tokdyn run file into a dict of attributes and numpy arrays.

    Raises RunFileError with a readable message on any problem, and when the
    run is not complete unless allow_partial.
    """
    import h5py

    run = {"path": path}
    h5, run["status"] = open_run(path, RunFileError, allow_partial)
    with h5:
        attrs = h5.attrs
        for key in ("tokdyn_version", "git_revision", "command", "deck",
                    "start_time", "end_time"):
            run[key] = to_str(attrs[key]) if key in attrs else ""
        for key in ("seed", "ranks"):
            run[key] = to_scalar(attrs[key]) if key in attrs else None
        run["parameters"] = run_parameters(h5, path, RunFileError)

        for group, names in REQUIRED.items():
            if group not in h5 or not isinstance(h5[group], h5py.Group):
                raise RunFileError(f"{path}: missing group /{group}")
            present = names + [name for name in OPTIONAL[group] if name in h5[group]]
            data = read_datasets(h5[group], path, present, RunFileError)
            run.update((f"{group}/{name}", value) for name, value in data.items())

        dg = h5["diagnostics"]
        run["beta"] = read_numbers(dg, path, ["beta"], RunFileError)["beta"] if "beta" in dg.attrs else None

    check_shapes(run)
    return run


def check_shapes(run):
    """Check that the array shapes agree with the schema (SHAPES, and at least two coordinates)."""
    path = run["path"]
    X = run["tokens/X"]
    if X.ndim != 3 or X.shape[2] < 2:
        raise RunFileError(f"{path}: /tokens/X must have shape [S, N, d>=2], "
                           f"got {list(X.shape)}")
    check_shapes_of(path, run, SHAPES, RunFileError, "/", empty_ok=("snapshots", "records"))


def layer_edges(layers):
    """Return cell edges (length K+1) around sorted layer values for an image."""
    layers = np.asarray(layers, dtype=float)
    if layers.size == 1:
        return np.array([layers[0] - 0.5, layers[0] + 0.5])
    mid = 0.5 * (layers[1:] + layers[:-1])
    first = layers[0] - (mid[0] - layers[0])
    last = layers[-1] + (layers[-1] - mid[-1])
    return np.concatenate([[first], mid, [last]])


def snapshot_indices(count, wanted):
    """Pick up to `wanted` indices evenly among `count`, first and last included."""
    if count == 0 or wanted <= 0:
        return []
    wanted = min(wanted, count)
    return sorted(set(np.linspace(0, count - 1, wanted).round().astype(int).tolist()))


def marker_style(count):
    """Return line keyword arguments: markers only when there are few points."""
    return dict(marker="o" if count <= 30 else None, markersize=3)


def steps_axis(run, group):
    """(values, label) of the axis the diagnostics (group "diagnostics") or the snapshots ("tokens") are
    drawn against: the time t of an sde run (its L counts time steps of [0, T], not layers), else the layer."""
    if run["command"] == "sde" and f"{group}/time" in run:
        return run[f"{group}/time"], "time t"
    return run[f"{group}/layer"], "layer"


def format_steps_axis(ax, values, label, pad_single=True):
    """Label the x-axis; integer ticks on a layer axis; some room around a single value."""
    ax.set_xlabel(label)
    if len(values) == 1:
        ax.set_xticks([values[0]])
        if pad_single:
            half = 1 if label == "layer" else max(abs(float(values[0])), 1.0) * 0.1
            ax.set_xlim(values[0] - half, values[0] + half)
    elif label == "layer":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot_energy(ax, run):
    """Panel (a): energy against layer (time), order parameter on a twin axis."""
    layer, xlabel = steps_axis(run, "diagnostics")
    energy = run["diagnostics/energy"]
    order = run["diagnostics/order_parameter"]
    beta = run["beta"]
    style = marker_style(layer.size)

    e_line, = ax.plot(layer, energy, color="tab:blue", label=r"$E_\beta$", **style)
    if energy.size and np.all(energy > 0):
        ax.set_yscale("log")
        readable_log_axis(ax.yaxis)
    format_steps_axis(ax, layer, xlabel)
    beta_txt = f" ($\\beta$ = {beta:g})" if beta is not None else ""
    ax.set_ylabel(r"interaction energy $E_\beta$" + beta_txt, color="tab:blue")
    ax.tick_params(axis="y", colors="tab:blue")
    ax.set_title("(a) energy and order parameter", pad=30)  # the legend sits between title and panel
    ax.grid(True, alpha=0.3)

    twin = ax.twinx()
    o_line, = twin.plot(layer, order, color="tab:orange", label=r"$|\mathrm{mean}\ x|$", **style)
    twin.set_ylabel(r"order parameter $|\mathrm{mean}\ x|$", color="tab:orange")
    twin.tick_params(axis="y", colors="tab:orange")
    twin.set_ylim(0.0, 1.05)
    # Above the panel, not in it: the two curves share its whole area.
    ax.legend(handles=[e_line, o_line], loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=2, fontsize="small",
              frameon=False)
    if layer.size == 0:
        ax.text(0.5, 0.5, "no diagnostics stored", transform=ax.transAxes,
                ha="center", va="center")


def plot_cosines(fig, ax, run):
    """Panel (b): cosine histogram against layer (time) as an image, mean cosine overlaid."""
    layer, xlabel = steps_axis(run, "diagnostics")
    counts = run["diagnostics/cosine_histogram"].astype(float)
    edges = run["diagnostics/cosine_bin_edges"]
    ax.set_title("(b) pairwise cosines", pad=30)  # the legend sits between title and panel
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"cosine $\langle x_i, x_j\rangle$")
    ax.set_ylim(-1.0, 1.0)
    if layer.size == 0:
        ax.text(0.5, 0.5, "no diagnostics stored", transform=ax.transAxes,
                ha="center", va="center")
        return

    order = np.argsort(layer, kind="stable")
    layer, counts = layer[order], counts[order]
    totals = counts.sum(axis=1, keepdims=True)
    fraction = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)

    positive = fraction[fraction > 0]
    if positive.size and positive.min() < positive.max():
        norm = LogNorm(vmin=positive.min(), vmax=positive.max())
        image = np.ma.masked_less_equal(fraction, 0.0)
    else:
        norm = Normalize(vmin=0.0, vmax=max(float(fraction.max()), 1e-12))
        image = fraction
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad(cmap(0.0))
    mesh = ax.pcolormesh(layer_edges(layer), edges, image.T, cmap=cmap,
                         norm=norm, shading="flat")
    fig.colorbar(mesh, ax=ax, label="fraction of pairs")

    style = marker_style(layer.size)
    ax.plot(layer, run["diagnostics/mean_cosine"][order], color="white",
            lw=2.0, label="mean cosine", **style)
    if "diagnostics/min_cosine" in run:
        ax.plot(layer, run["diagnostics/min_cosine"][order], color="white",
                lw=1.0, ls="--", label="min cosine", **style)
    format_steps_axis(ax, layer, xlabel, pad_single=False)
    # Above the panel (the curves reach every corner of it), on grey: the lines are white.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=2, fontsize="small", facecolor="0.35",
              framealpha=1.0, labelcolor="white", handlelength=3)


def plot_snapshots(fig, spec, run, wanted):
    """Panels (c): first two coordinates of the tokens at a few snapshot layers."""
    X = run["tokens/X"]
    steps, label = steps_axis(run, "tokens")
    picks = snapshot_indices(X.shape[0], wanted)
    if not picks:
        ax = fig.add_subplot(spec)
        ax.axis("off")
        ax.text(0.5, 0.5, "(c) no token snapshots stored", ha="center", va="center")
        return
    sub = spec.subgridspec(1, len(picks), wspace=0.3)
    circle = np.linspace(0.0, 2.0 * np.pi, 400)
    n, d = X.shape[1], X.shape[2]
    size = max(2.0, min(20.0, 2000.0 / max(n, 1)))
    for col, idx in enumerate(picks):
        ax = fig.add_subplot(sub[0, col])
        ax.plot(np.cos(circle), np.sin(circle), color="0.6", lw=0.8)
        ax.scatter(X[idx, :, 0], X[idx, :, 1], s=size, color="tab:red",
                   alpha=0.7, edgecolors="none")
        ax.set_xlim(-1.15, 1.15)
        ax.set_ylim(-1.15, 1.15)
        ax.set_aspect("equal")
        ax.set_title(f"layer {int(steps[idx])}" if label == "layer" else f"t = {steps[idx]:.4g}")
        ax.set_xlabel(r"$x_1$")
        if col == 0:
            ax.set_ylabel(r"$x_2$")
            ax.text(-0.35, 1.15, "(c)", transform=ax.transAxes, fontsize="large")
        ax.grid(True, alpha=0.3)
    if d > 2:
        fig.text(0.5, 0.01, f"(c) projection of the d = {d} coordinates onto (x1, x2)",
                 ha="center", fontsize="small", color="0.3")


def set_run_title(fig, run, **text):
    """The figure's title: command, status and the run's parameters, N and d from the tokens when the deck does
    not say; the file, the ranks and the version in the footer (set_title)."""
    params = dict(run["parameters"])
    X = run["tokens/X"]
    params.setdefault("model.N", X.shape[1])
    params.setdefault("model.d", X.shape[2])
    if run["beta"] is not None:
        params.setdefault("attention.beta", run["beta"])
    footer = [f"{run['ranks']} ranks"] if run["ranks"] is not None else []
    if run["tokdyn_version"]:
        footer.append(f"tokdyn {run['tokdyn_version']} ({run['git_revision'] or '?'})")
    set_title(fig, run["command"] or "transformer", params, os.path.basename(run["path"]), run["status"] or "unknown",
              footer=footer, **text)


def make_figure(run, snapshots):
    """Build the whole figure for one run and return it."""
    fig = plt.figure(figsize=(13, 8.5))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.25, 1.0], hspace=0.4, wspace=0.3,
                            left=0.07, right=0.95, top=0.86, bottom=0.08)  # room for a 2-line title
    plot_energy(fig.add_subplot(grid[0, 0]), run)
    plot_cosines(fig, fig.add_subplot(grid[0, 1]), run)
    plot_snapshots(fig, grid[1, :], run, snapshots)
    set_run_title(fig, run, color="black" if run["status"] == "complete" else "tab:red", fontsize="large")
    return fig


def default_output(runfile):
    """Return RUNFILE with .h5 (or .hdf5) replaced by .png."""
    root, ext = os.path.splitext(runfile)
    if ext.lower() in (".h5", ".hdf5"):
        return root + ".png"
    return runfile + ".png"


def parse_args(argv):
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Plot a tokdyn run file (HDF5) as one PNG figure.")
    parser.add_argument("runfile", metavar="RUNFILE", help="tokdyn run file (.h5)")
    parser.add_argument("-o", "--output", metavar="OUT.png",
                        help="output PNG (default: RUNFILE with .h5 replaced by .png)")
    parser.add_argument("--snapshots", metavar="K", type=int, default=4,
                        help="number of token snapshots to show (default: 4)")
    parser.add_argument(*ALLOW_PARTIAL[0], **ALLOW_PARTIAL[1])
    args = parser.parse_args(argv)
    if args.snapshots < 1:
        parser.error("--snapshots must be at least 1")
    return args


def write_figure(runfile, output, snapshots, allow_partial=False):
    """Read the run file and write its figure to output; return [output]."""
    run = read_run(runfile, allow_partial)
    fig = make_figure(run, snapshots)
    try:
        save_figure(fig, output, run["status"])
    except OSError as exc:
        raise RunFileError(f"cannot write {output}: {exc}") from None
    return [output]


def main(argv=None):
    """Entry point: read the run file, write the PNG, print its path."""
    args = parse_args(argv)
    output = args.output or default_output(args.runfile)
    return run_cli(PROG, RunFileError,
                   lambda: write_figure(args.runfile, output, args.snapshots, args.allow_partial))


if __name__ == "__main__":
    sys.exit(main())
