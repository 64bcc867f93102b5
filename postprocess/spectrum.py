#!/usr/bin/env python3
"""Plot a `tokdyn spectrum` run file: the leading eigenvalues of the layer matrices F_t = O_t V_t.

Usage:
    spectrum.py RUNFILE [-o OUT.png] [--json SUMMARY.json] [--csv SUMMARY.csv] [--allow-partial]

Input: /spectrum of a spectrum run: layer [n], eigenvalues_re/eigenvalues_im [n, nev] (NaN beyond
the converged pairs), converged [n], gap [n], complex_leading [n], residual [n, nev], and the
attributes solver, operator, which, nev, d, residual (1: the eigenvalues are those of I + F).

Panels:
    (a) the eigenvalues in the complex plane, coloured by layer, with the unit circle;
    (b) the spectral gap g_t (doc/science.md section 7.4: 1 - |l2|/|l1|, or 1 - |l3|/|l1| for a complex
        leading pair) per layer, complex leading pairs marked, and below it (its own axis, the same
        layers) |lambda_1| per layer (|1 + lambda_1| for I + F);
    (c) converged pairs per layer against nev (the solver never claims more than it converged).
The title names the run's parameters.
A summary (layers, solver, gap and |lambda_1| ranges, fewest converged, largest residual) is printed
on stdout, then the paths written (default PNG: RUNFILE with .h5 -> .png).
--json: layer-by-layer summary (layer, converged, abs_lambda1, arg_lambda1, gap, complex_leading,
max_residual; NaN written as null), the run's status and attributes; --csv: the same per layer, one row
each, with the run's status in a column.

Errors (missing file, not HDF5, not a spectrum run, missing dataset, an empty dataset or series of different
lengths, text where a number belongs, a run whose status is not complete without --allow-partial) end with a
one-line message "spectrum.py: error: ..." on stderr and exit status 2. With --allow-partial an unfinished or
failed run is drawn, marked "partial (status: X)" (in the JSON too).
"""

import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("spectrum.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, open_run, plain_text, read_datasets,  # noqa: E402
                       read_numbers, require_attributes, run_parameters, save_figure, set_title, study_group, to_scalar,
                       to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

PROG = "spectrum.py"
DATASETS = ("layer", "eigenvalues_re", "eigenvalues_im", "converged", "gap", "complex_leading", "residual")
ATTRIBUTES = ("solver", "operator", "which", "nev", "d", "residual")
NUMBERS = ("nev", "d", "residual")
SHAPES = {"layer": ("layers",), "eigenvalues_re": ("layers", "nev"), "eigenvalues_im": ("layers", "nev"),
          "converged": ("layers",), "gap": ("layers",), "complex_leading": ("layers",), "residual": ("layers", "nev")}


class ResultError(Exception):
    """A file that cannot be read or is not a spectrum run."""


def read_run(path, allow_partial=False):
    """Return a dict of the /spectrum datasets (numpy arrays) and attributes of a spectrum run."""
    h5, status = open_run(path, ResultError, allow_partial, "spectrum")
    with h5:
        g = study_group(h5, path, "spectrum", "spectrum", ResultError)
        out = {"path": path, "status": status, "parameters": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(g, path, DATASETS, ResultError))
        require_attributes(g, path, ATTRIBUTES, ResultError)
        out["attrs"] = {k: (to_str(v) if isinstance(v, (str, bytes)) else to_scalar(v)) for k, v in g.attrs.items()}
        numbers = read_numbers(g, path, NUMBERS, ResultError)
        out["attrs"].update((k, int(v)) for k, v in numbers.items())
    # A run with no layer yet is reported by the caller.
    check_shapes(path, out, SHAPES, ResultError, "/spectrum/", empty_ok=("layers",))
    out["lambda"] = out["eigenvalues_re"].astype(float) + 1j * out["eigenvalues_im"].astype(float)
    return out


def layer_summary(r):
    """Per layer: layer, converged, |lambda_1|, arg lambda_1, gap, complex_leading, max residual."""
    rows = []
    for i, t in enumerate(r["layer"]):
        l1 = r["lambda"][i, 0]
        res = r["residual"][i]
        res = res[np.isfinite(res)]
        rows.append({"layer": int(t), "converged": int(r["converged"][i]),
                     "abs_lambda1": float(abs(l1)), "arg_lambda1": float(np.angle(l1)),
                     "gap": float(r["gap"][i]), "complex_leading": bool(r["complex_leading"][i]),
                     "max_residual": float(res.max()) if res.size else float("nan")})
    return rows


def finite_or_none(x):
    return x if not (isinstance(x, float) and not np.isfinite(x)) else None


def default_output(path):
    """RUNFILE.h5 -> RUNFILE.png."""
    return path[:-3] + ".png" if path.endswith(".h5") else path + ".png"


def make_figure(r, rows):
    """The figure of run r (read_run) with its per-layer summary rows (layer_summary)."""
    a = r["attrs"]
    layers = r["layer"]
    # lambda_1 of the matrix the solver saw: I + F when the run's residual attribute says so.
    lead = r"|1 + \lambda_1|" if a["residual"] else r"|\lambda_1|"
    fig = plt.figure(figsize=(13, 5.5), layout="constrained")  # tight_layout cannot lay out the stacked panels
    grid = fig.add_gridspec(2, 3, width_ratios=[1.2, 1, 0.8])
    ax, cx = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[:, 2])
    # The gap and |lambda_1| on axes of their own, one above the other: on twin axes their lines crossed.
    bx = fig.add_subplot(grid[0, 1])
    lx = fig.add_subplot(grid[1, 1], sharex=bx)
    cmap = plt.get_cmap("viridis")
    colours = cmap(np.linspace(0, 1, max(len(layers), 2)))[: len(layers)]
    theta = np.linspace(0, 2 * np.pi, 400)
    ax.plot(np.cos(theta), np.sin(theta), color="0.6", lw=0.8, label="unit circle")
    for i, t in enumerate(layers):
        lam = r["lambda"][i]
        lam = lam[np.isfinite(lam)]
        # Later layers smaller, so layers with the same spectrum stay visible.
        size = 60 - 45 * i / max(len(layers) - 1, 1)
        ax.scatter(lam.real, lam.imag, s=size, color=colours[i], label=f"layer {t}" if len(layers) <= 8 else None)
    if len(layers) > 8:
        sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(layers.min(), layers.max()))
        fig.colorbar(sm, ax=ax, label="layer")
    ax.axhline(0, color="0.85", lw=0.5)
    ax.axvline(0, color="0.85", lw=0.5)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("Re " + (r"$(1 + \lambda)$" if a["residual"] else r"$\lambda$"))
    ax.set_ylabel("Im")
    ax.set_title(plain_text(f"top {a['nev']} eigenvalues ({a['which']}), d = {a['d']}"), fontsize=10)
    ax.legend(fontsize=8, loc="upper left")

    gap = np.array([row["gap"] for row in rows])
    l1 = np.array([row["abs_lambda1"] for row in rows])
    cplx = np.array([row["complex_leading"] for row in rows])
    bx.plot(layers, gap, "o-", color="tab:blue", label="gap $g_t$")
    if cplx.any():
        bx.plot(layers[cplx], gap[cplx], "s", mfc="none", mec="tab:red", ms=10, label="complex leading pair")
    bx.set_ylabel("spectral gap $g_t$")
    top = np.nanmax(gap) if np.isfinite(gap).any() else 1.0
    bx.set_ylim(0, 1.25 * top if top > 0 else 1.0)
    bx.tick_params(labelbottom=False)
    bx.legend(fontsize=8, loc="lower right")
    bx.set_title("gap and leading modulus per layer", fontsize=10)
    lx.plot(layers, l1, "^--", color="tab:orange", label=f"${lead}$")
    if cplx.any():
        lx.plot(layers[cplx], l1[cplx], "s", mfc="none", mec="tab:red", ms=10)
    top = np.nanmax(l1) if np.isfinite(l1).any() else 0.0
    lx.set_ylim(0, 1.25 * top if top > 0 else 1.0)
    lx.ticklabel_format(axis="y", useOffset=False)
    lx.set_ylabel(f"${lead}$")
    lx.set_xlabel("layer t")
    lx.legend(fontsize=8, loc="lower right")
    for axis in (lx, cx):
        axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))

    conv = np.array([row["converged"] for row in rows])
    cx.bar(layers, conv, color=np.where(conv < a["nev"], "tab:red", "tab:green"))
    cx.axhline(a["nev"], color="k", ls="--", lw=1, label=f"nev = {a['nev']}")
    cx.set_ylim(0, a["nev"] * 1.15 + 0.5)
    cx.set_xlabel("layer t")
    cx.set_ylabel("converged pairs")
    cx.set_title(plain_text(f"{a['solver']} ({a.get('eps_type', a['solver'])}, {a['operator']})"), fontsize=10)
    cx.legend(fontsize=8, loc="lower right")
    set_title(fig, "spectrum", r["parameters"], os.path.basename(r["path"]), r["status"])
    return fig


def plot(r, rows, out):
    """Write the figure of run r to out."""
    fig = make_figure(r, rows)
    save_figure(fig, out, r["status"], dpi=110)


def write_json(path, r, rows):
    attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in r["attrs"].items()}
    data = {"file": r["path"], "status": r["status"], "partial": r["status"] != "complete", "attributes": attrs,
            "layers": [{k: finite_or_none(v) for k, v in row.items()} for row in rows]}
    with open(path, "w") as f:
        json.dump(data, f, indent=2, allow_nan=False)


def write_csv(path, rows, status):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=(list(rows[0].keys()) if rows else ["layer"]) + ["status"])
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "status": status})


def summarize(args):
    """Read the run, print its summary, write the figure (and summaries); return the paths written."""
    r = read_run(args.runfile, args.allow_partial)
    rows = layer_summary(r)
    if not rows:
        raise ResultError(f"{args.runfile}: /spectrum holds no layer")
    a = r["attrs"]
    gap = np.array([row["gap"] for row in rows])
    l1 = np.array([row["abs_lambda1"] for row in rows])
    res = np.array([row["max_residual"] for row in rows])
    fin = np.isfinite(gap)
    print(f"{len(rows)} layer(s), d = {a['d']}, nev = {a['nev']}, {a['solver']} on {a['operator']}, {a['which']}"
          + (", I + F" if a["residual"] else ""))
    print(f"gap: min {np.min(gap[fin]) if fin.any() else float('nan'):.4g}, "
          f"median {np.median(gap[fin]) if fin.any() else float('nan'):.4g}, "
          f"max {np.max(gap[fin]) if fin.any() else float('nan'):.4g}; "
          f"|lambda_1| in [{np.nanmin(l1):.6g}, {np.nanmax(l1):.6g}]; "
          f"complex leading in {sum(row['complex_leading'] for row in rows)} layer(s)")
    print(f"converged: fewest {min(row['converged'] for row in rows)}/{a['nev']}; "
          f"largest residual {np.nanmax(res) if np.isfinite(res).any() else float('nan'):.2e}")
    out = args.output or default_output(args.runfile)
    plot(r, rows, out)
    written = [out]
    if args.json:
        write_json(args.json, r, rows)
        written.append(args.json)
    if args.csv:
        write_csv(args.csv, rows, r["status"])
        written.append(args.csv)
    return written


ARGUMENTS = ((("runfile",), {}),
             (("-o", "--output"), {"help": "PNG to write (default: RUNFILE with .h5 -> .png)"}),
             (("--json",), {"help": "write a per-layer summary as JSON"}),
             (("--csv",), {"help": "write a per-layer summary as CSV"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS, summarize, argv)


if __name__ == "__main__":
    sys.exit(main())
