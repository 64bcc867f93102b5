#!/usr/bin/env python3
"""Plot `tokdyn lens` run files: a trained GPT through the power-method lens along training (doc/science.md
section 10.8), one or more runs (symmetric and symmetry-broken training side by side).

Usage:
    lens.py RUNFILE... [-o OUT.png] [--json SUMMARY.json] [--allow-partial]

Input: /lens of each run: step [n], lambda1, gap, gamma_mean [n, layers], head_lambda1 [n, layers, heads], and
the attributes label (the train run's optimizer and symmetry), baseline (sqrt(2/(pi d))) and tokens.

Panels, against the optimizer step, a colour per run and a line style per layer:
    (a) |lambda_1(F)| of each layer's F = O V, and dotted the largest head's |lambda_1(O_h V_h)|;
    (b) the spectral gap 1 - |lambda_2| / |lambda_1| of F;
    (c) the mean alignment |<x_i, v_1>| of the vocabulary's tokens after each layer, v_1 the leading
        eigenvector of the layer's acting matrix, against the random baseline sqrt(2/(pi d)) (dashed).
A summary per run (first and last point of each layer) is printed on stdout, then the paths written (default
PNG: the first RUNFILE with .h5 -> .png).

Errors (missing file, not HDF5, not a lens run, missing dataset, an empty dataset or series of different
lengths, text where a number belongs, a run whose status is not complete without --allow-partial) end with a
one-line message "lens.py: error: ..." on stderr and exit status 2.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("lens.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, common_parameters, open_run, plain_text,  # noqa: E402
                       plural, read_datasets, read_numbers, require_attributes, run_parameters, save_figure, set_title,
                       study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "lens.py"
DATASETS = ("step", "lambda1", "gap", "gamma_mean", "head_lambda1")
SHAPES = {"step": ("points",), "lambda1": ("points", "layers"), "gap": ("points", "layers"),
          "gamma_mean": ("points", "layers"), "head_lambda1": ("points", "layers", "heads")}


class ResultError(Exception):
    """A file that cannot be read or is not a lens run."""


def read_run(path, allow_partial=False):
    """A lens run as a dict of its /lens datasets (numpy arrays), label, baseline and status."""
    h5, status = open_run(path, ResultError, allow_partial, "lens")
    with h5:
        g = study_group(h5, path, "lens", "lens", ResultError)
        out = {"path": path, "status": status, "parameters": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(g, path, DATASETS, ResultError, dtype=float))
        if status == "complete":
            require_attributes(g, path, ("label", "baseline"), ResultError)
        out["label"] = to_str(g.attrs["label"]) if "label" in g.attrs else os.path.basename(path)
        out["baseline"] = read_numbers(g, path, ("baseline",), ResultError)["baseline"] if "baseline" in g.attrs \
            else float("nan")
    check_shapes(path, out, SHAPES, ResultError, "/lens/")
    return out


def label_runs(runs):
    """Runs of the same setting (seeds) get their file's name after the label."""
    labels = [r["label"] for r in runs]
    for r in runs:
        if labels.count(r["label"]) > 1:
            r["label"] += f" ({os.path.basename(r['path'])})"


def make_figure(runs):
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 3, figsize=(13, 5))
    cmap = plt.get_cmap("tab10")
    styles = ("-", "--", ":", "-.")
    layers = max(r["lambda1"].shape[1] for r in runs)
    for i, r in enumerate(runs):
        colour = cmap(i % 10)
        for l in range(r["lambda1"].shape[1]):
            style = styles[l % len(styles)]
            for ax, key in zip(axes, ("lambda1", "gap", "gamma_mean")):
                ax.plot(r["step"], r[key][:, l], color=colour, ls=style, marker="o", ms=3)
        axes[0].plot(r["step"], r["head_lambda1"].max(axis=2).max(axis=1), color=colour, marker="x", ms=5, ls="none")
    baseline = runs[0]["baseline"]
    if np.isfinite(baseline):
        axes[2].axhline(baseline, color="k", ls="--", lw=1)
    axes[0].set_ylabel("|lambda_1(F)|, F = O V")
    axes[0].set_title("(a) leading eigenvalue of F (x: largest head's O_h V_h)", fontsize=10)
    axes[1].set_ylabel("1 - |lambda_2| / |lambda_1|")
    axes[1].set_title("(b) spectral gap of F", fontsize=10)
    axes[2].set_ylabel("mean |<x_i, v_1>| over the vocabulary")
    axes[2].set_title("(c) alignment of the tokens after each layer", fontsize=10)
    for ax in axes:
        ax.set_xlabel("optimizer step")
        ax.grid(alpha=0.3)
    # One legend below the panels: a colour per run, a line style per layer, the baseline.
    handles = [Line2D([], [], color=cmap(i % 10), marker="o", ms=4, label=plain_text(r["label"]))
               for i, r in enumerate(runs)]
    handles += [Line2D([], [], color="0.3", ls=styles[l % len(styles)], label=f"layer {l}") for l in range(layers)]
    handles += [Line2D([], [], color=cmap(0), marker="x", ls="none", label="largest head's |lambda_1(O_h V_h)|")]
    if np.isfinite(baseline):
        handles.append(Line2D([], [], color="k", ls="--", label=f"random tokens: sqrt(2/(pi d)) = {baseline:.3f}"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=9, bbox_to_anchor=(0.5, 0.0))
    params = common_parameters(r["parameters"] for r in runs)
    status = "complete" if all(r["status"] == "complete" for r in runs) else "partial"
    set_title(fig, "lens", params, plural(len(runs), "run"), status,
              ["|lambda_1|, gap and token alignment of a trained GPT along training"])
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def summarize(args):
    runs = [read_run(p, args.allow_partial) for p in args.runfiles]
    label_runs(runs)
    summary = []
    for r in runs:
        if r["step"].size == 0:
            raise ResultError(f"{r['path']}: /lens holds no point")
        for l in range(r["lambda1"].shape[1]):
            line = {"run": r["path"], "label": r["label"], "layer": l, "steps": [int(r["step"][0]), int(r["step"][-1])],
                    "lambda1": [float(r["lambda1"][0, l]), float(r["lambda1"][-1, l])],
                    "gap": [float(r["gap"][0, l]), float(r["gap"][-1, l])],
                    "gamma_mean": [float(r["gamma_mean"][0, l]), float(r["gamma_mean"][-1, l])]}
            summary.append(line)
            print(plain_text(f"{r['label']}, layer {l}: step {line['steps'][0]} -> {line['steps'][1]}: |lambda_1(F)| "
                             f"{line['lambda1'][0]:.4g} -> {line['lambda1'][1]:.4g}, gap {line['gap'][0]:.3f} -> "
                             f"{line['gap'][1]:.3f}, alignment {line['gamma_mean'][0]:.3f} -> {line['gamma_mean'][1]:.3f}"
                             f" (random {r['baseline']:.3f})"))
    out = args.output or os.path.splitext(args.runfiles[0])[0] + ".png"
    fig = make_figure(runs)
    save_figure(fig, out, "complete" if all(r["status"] == "complete" for r in runs) else "partial", dpi=110)
    plt.close(fig)
    written = [out]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": summary}, f, indent=1)
        written.append(args.json)
    return written


ARGUMENTS = ((("runfiles",), {"nargs": "+", "metavar": "RUNFILE"}),
             (("-o", "--output"), {"help": "PNG to write (default: the first RUNFILE with .h5 -> .png)"}),
             (("--json",), {"help": "write the first and last point of each run and layer as JSON"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS, summarize, argv)


if __name__ == "__main__":
    sys.exit(main())
