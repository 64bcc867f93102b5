#!/usr/bin/env python3
"""Plot a `tokdyn synchronize` result file: synchronization by noise (doc/science.md section 6.4, Thm 1.4).

Usage:
    synchronization.py RESULT.h5 [-o OUT.png] [--allow-partial]

Panels:
    (a) E[E_beta(t)] over replicas with its 95% band (mean +- 1.96 s.e., its lower edge raised to
        mean / 20 for the log scale, tokdyn_h5.log_lower), against the bound
        exp(lambdabar' t) E[E_beta(0)] and the fitted decay rate (its line through the fitted window);
    (b) last-layer cluster statistics per replica: fraction of pairs with cos > c (one cluster) and
        with cos < -c (antipodal clusters), c = /synchronization attribute cluster_cosine.
The title names the run's parameters.
A summary (constants, fitted rate with its interval, mean cluster fractions) is printed on stdout,
then the path written (default: RESULT with .h5 -> .png).

Errors (missing file, not HDF5, not a synchronize result, missing dataset, an empty dataset or series of
different lengths, text where a number belongs, a result whose status is not complete without --allow-partial)
end with a one-line message "synchronization.py: error: ..." on stderr and exit status 2. With --allow-partial
an unfinished or failed run is drawn, marked "partial (status: X)".
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("synchronization.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, log_lower, open_run, plain_text,  # noqa: E402
                       read_datasets, read_numbers, run_parameters, save_figure, set_title, study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "synchronization.py"
DATASETS = ("time", "mean_energy", "standard_error", "bound", "decay_rate", "aligned_fraction",
            "antipodal_fraction", "energy")
ATTRIBUTES = ("lambdabar", "lambdabar_prime", "kappa1", "kappa_prime1", "cluster_cosine", "fit_start")
SHAPES = {"time": ("times",), "mean_energy": ("times",), "standard_error": ("times",), "bound": ("times",),
          "decay_rate": (3,), "aligned_fraction": ("replicas",), "antipodal_fraction": ("replicas",),
          "energy": ("replicas", "times")}
Z95 = 1.96


class ResultError(Exception):
    """A file that cannot be read or is not a synchronize result."""


def read_result(path, allow_partial=False):
    """Return a dict of the /synchronization datasets and attributes of a synchronize result."""
    h5, status = open_run(path, ResultError, allow_partial, "synchronize")
    with h5:
        g = study_group(h5, path, "synchronize", "synchronization", ResultError)
        out = {"path": path, "status": status, "notes": to_str(g.attrs.get("notes", "")),
               "parameters": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(g, path, DATASETS, ResultError, np.float64))
        out.update(read_numbers(g, path, ATTRIBUTES, ResultError))
    check_shapes(path, out, SHAPES, ResultError, "/synchronization/")
    return out


def default_output(path):
    """RESULT.h5 -> RESULT.png."""
    return path[:-3] + ".png" if path.endswith(".h5") else path + ".png"


def make_figure(r):
    """The two-panel figure of result r (read_result)."""
    t, mean, se, bound = r["time"], r["mean_energy"], r["standard_error"], r["bound"]
    rate, low, high = r["decay_rate"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.8))
    positive = mean > 0
    lower, _ = log_lower(mean, mean - Z95 * se)  # a band reaching 0 cannot be drawn on the log scale
    ax.fill_between(t[positive], lower[positive], (mean + Z95 * se)[positive], color="tab:blue", alpha=0.25,
                    label="95% band (replicas)")
    ax.plot(t[positive], mean[positive], color="tab:blue", label=r"$E[E_\beta(t)]$")
    ax.plot(t, bound, "k--", label=rf"bound $e^{{\bar\lambda' t}} E[E_\beta(0)]$, $\bar\lambda'$ = {r['lambdabar_prime']:.3f}")
    fitted = (t >= r["fit_start"]) & positive
    if fitted.sum() >= 2:
        tf = t[fitted]
        # The fitted line: slope `rate` through the centre of mass of (t, log mean) in the window.
        c = np.mean(np.log(mean[fitted])) - rate * np.mean(tf)
        ax.plot(tf, np.exp(c + rate * tf), color="tab:red", lw=1,
                label=f"fit: rate {rate:.3f} [{low:.3f}, {high:.3f}]")
    ax.set_yscale("log")
    top = 3 * np.nanmax(mean + Z95 * se)
    if np.nanmax(bound) > top:  # a growing bound (lambdabar' > 0) would squash the data: let it leave the plot
        ax.set_ylim(top=top)
    ax.set_xlabel("time t = l T / L")
    ax.set_ylabel(r"$E_\beta$")
    replicas = r["energy"].shape[0]
    ax.set_title(rf"$\bar\lambda$ = {r['lambdabar']:.3f}, $\kappa(1)$ = {r['kappa1']:.3g}, "
                 rf"$\kappa'(1)$ = {r['kappa_prime1']:.3g}, {replicas} replicas", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")

    c = r["cluster_cosine"]
    ids = np.arange(replicas)
    bx.bar(ids, r["aligned_fraction"], color="tab:green", label=f"cos > {c:g}")
    bx.bar(ids, r["antipodal_fraction"], bottom=r["aligned_fraction"], color="tab:purple",
           label=f"cos < -{c:g}")
    bx.set_ylim(0, 1.05)
    bx.set_xlabel("replica")
    bx.set_ylabel("fraction of token pairs (last layer)")
    bx.set_title("clusters at the last layer: one (green) or antipodal (purple)", fontsize=10)
    bx.legend(fontsize=8, loc="lower right")
    if r["notes"]:
        fig.text(0.01, 0.005, plain_text("note: " + r["notes"].replace("\n", "; ")), fontsize=7)
    set_title(fig, "synchronize", r["parameters"], os.path.basename(r["path"]), r["status"])
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def plot(r, out):
    """Write the two-panel figure of result r to out."""
    fig = make_figure(r)
    save_figure(fig, out, r["status"], dpi=120)


def summarize(result, output, allow_partial=False):
    """Read the result, print its summary, write the figure; return [the path written]."""
    r = read_result(result, allow_partial)
    out = output or default_output(result)
    rate, low, high = r["decay_rate"]
    print(f"lambdabar = {r['lambdabar']:.4f}, lambdabar' = {r['lambdabar_prime']:.4f}; "
          f"decay rate {rate:.4f} [{low:.4f}, {high:.4f}] over t >= {r['fit_start']:g}")
    print(f"last layer: cos > {r['cluster_cosine']:g}: {r['aligned_fraction'].mean():.4f}, "
          f"cos < -{r['cluster_cosine']:g}: {r['antipodal_fraction'].mean():.4f} (mean over replicas)")
    plot(r, out)
    return [out]


ARGUMENTS = ((("result",), {}),
             (("-o", "--output"), {"help": "PNG to write (default: RESULT with .h5 -> .png)"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS, lambda a: summarize(a.result, a.output, a.allow_partial), argv)


if __name__ == "__main__":
    sys.exit(main())
