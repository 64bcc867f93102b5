#!/usr/bin/env python3
"""Plot a `tokdyn meanfield` run file: the mean-field measure and its observables along time.

Usage:
    plot_meanfield.py RUN.h5 [-o OUT.png] [--allow-partial]

Panels:
    (a) the measure at every snapshot: the grid's density rho(theta) (d = 2), or the masses of the
        quadrature points histogrammed by angle (d = 2) or by the first coordinate x_1 (d >= 3);
    (b) E_beta and |mean token| against time;
    (c) mass - 1 and the smallest density (grid) or mass (points): conservation and positivity.
Angles are in radians with ticks at the multiples of pi/2; the title names the run's parameters.
The path written is printed (default: RUN with .h5 -> .png).

Errors (missing file, not HDF5, not a meanfield run, missing dataset, an empty dataset or series of different
lengths, text where a number belongs, a run whose status is not complete without --allow-partial) end with a
one-line message "plot_meanfield.py: error: ..." on stderr and exit status 2. With --allow-partial an
unfinished or failed run is drawn, marked "partial (status: X)".
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("plot_meanfield.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, open_run, pi_axis, plain_text,  # noqa: E402
                       read_datasets, run_parameters, save_figure, set_title, study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "plot_meanfield.py"
SERIES = ("time", "mass", "energy", "order_parameter", "min_density")
# The snapshots' shapes (tokdyn_h5.check_shapes): the density on a grid of angles, or points on S^{d-1}.
SNAPSHOTS = {"snapshot_time": ("snapshots",), "density": ("snapshots", "cells"), "theta": ("cells",),
             "points": ("snapshots", "points", "d"), "masses": ("points",)}
BINS = 64


class RunError(Exception):
    """A file that cannot be read or is not a meanfield run."""


def read_run(path, allow_partial=False):
    """Return a dict with the diagnostics series and the snapshots of a meanfield run file."""
    h5, status = open_run(path, RunError, allow_partial, "meanfield")
    with h5:
        g = study_group(h5, path, "meanfield", "meanfield", RunError)
        diagnostics = study_group(h5, path, "meanfield", "diagnostics", RunError)
        out = {"path": path, "status": status, "solver": to_str(g.attrs.get("solver", "")),
               "parameters": run_parameters(h5, path, RunError)}
        out.update(read_datasets(diagnostics, path, SERIES, RunError, np.float64))
        if "snapshot_time" not in g:
            raise RunError(f"{path}: missing dataset /meanfield/snapshot_time (run not complete?)")
        if "density" in g:
            out.update(read_datasets(g, path, ("snapshot_time", "density", "theta"), RunError, np.float64))
        elif "points" in g:
            out.update(read_datasets(g, path, ("snapshot_time", "points", "masses"), RunError, np.float64))
        else:
            raise RunError(f"{path}: /meanfield holds neither density nor points")
    check_shapes(path, out, {name: ("records",) for name in SERIES}, RunError, "/diagnostics/", empty_ok=("records",))
    check_shapes(path, out, SNAPSHOTS, RunError, "/meanfield/", empty_ok=("snapshots",))
    return out


def draw_measure(ax, run):
    colors = plt.cm.viridis(np.linspace(0, 1, len(run["snapshot_time"])))
    for k, t in enumerate(run["snapshot_time"]):
        label = f"t = {t:.3g}"
        if "density" in run:
            ax.plot(run["theta"], run["density"][k], color=colors[k], label=label)
            continue
        x, w = run["points"][k], run["masses"]
        if x.shape[1] == 2:
            values, edges = np.mod(np.arctan2(x[:, 1], x[:, 0]), 2 * np.pi), np.linspace(0, 2 * np.pi, BINS + 1)
        else:
            values, edges = x[:, 0], np.linspace(-1, 1, BINS + 1)
        hist, _ = np.histogram(values, bins=edges, weights=w, density=True)
        ax.step(edges[:-1], hist, where="post", color=colors[k], label=label)
    d2 = "density" in run or run["points"].shape[2] == 2
    if d2:
        ax.set_xlim(0, 2 * np.pi)
        pi_axis(ax.xaxis)
    ax.set_xlabel(r"angle $\theta$" if d2 else r"$x_1$")
    ax.set_ylabel("density" if d2 else r"density of $x_1$")
    ax.set_title(plain_text(f"(a) the measure ({run['solver']})"))
    ax.legend(fontsize="small")


def make_figure(run):
    """The three-panel figure of a run read by read_run."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    draw_measure(axes[0], run)
    ax = axes[1]
    ax.plot(run["time"], run["energy"], label=r"$E_\beta$")
    ax.plot(run["time"], run["order_parameter"], label="|mean token|")
    ax.set_xlabel("time t")
    ax.set_title("(b) observables")
    ax.legend()
    ax = axes[2]
    ax.plot(run["time"], run["mass"] - 1, label="mass - 1")
    ax.plot(run["time"], run["min_density"], label="min density" if "density" in run else "min mass")
    ax.set_xlabel("time t")
    ax.set_title("(c) conservation and positivity")
    ax.legend()
    set_title(fig, "meanfield", run["parameters"], os.path.basename(run["path"]), run["status"])
    fig.tight_layout()
    return fig


def plot(path, output, allow_partial=False):
    run = read_run(path, allow_partial)
    fig = make_figure(run)
    save_figure(fig, output, run["status"], dpi=110)
    return [output]


def main(argv=None):
    def body(args):
        output = args.output or (os.path.splitext(args.run)[0] + ".png")
        return plot(args.run, output, args.allow_partial)

    return cli_main(PROG, __doc__, RunError, [(("run",), {"help": "meanfield run file"}),
                                              (("-o", "--output"), {"help": "PNG to write"}), ALLOW_PARTIAL],
                    body, argv)


if __name__ == "__main__":
    sys.exit(main())
