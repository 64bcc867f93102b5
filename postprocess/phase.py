#!/usr/bin/env python3
"""Plot a `tokdyn phase` result file: phase diagrams over (beta, t) (doc/science.md section 6.7).

Usage:
    phase.py RESULT.h5 [-o OUT.png] [--cuts T1,T2,...] [--allow-partial]
    phase.py BLOCK0.h5 BLOCK1.h5 ... [--merged MERGED.h5] [-o OUT.png] ...

Several files are the blocks of one grid (phase.block k of phase.blocks, a Slurm array of
jobscripts/phase-sweep.sh): they must hold the same parameters but phase.block and run.output, and every beta of
the grid once; they are drawn as one result, with their betas in grid order, and --merged writes that result as
one file (the datasets of /phase and the first block's attributes; written to a temporary name, then renamed;
an existing file of that name is replaced only if it is an earlier merge).
The default figure of blocks is the first block's name without "-block<k>".

Panels:
    (a) the density at zero (the fraction of token pairs i != j above the run's density cosine, averaged over
        the systems) over t (x axis) and beta (y axis), on a logarithmic colour scale as the published diagrams
        draw it (zeros, below the scale, in its lowest colour);
    (b) the median number of clusters over the systems, same axes;
    (c) cuts of (a) at fixed times (default: a quarter, half and all of T, at the nearest records) against beta,
        each with its 95% band (mean +- 1.96 standard errors over the systems);
    (d) the mean dimension of the tokens' span against beta at the same times.
The title names the run's parameters. The density at zero at the cut times is printed on stdout (a line per
cut: beta where it first exceeds 1/2, its value at the smallest and largest beta), then the path written
(default: RESULT with .h5 -> .png).

Errors (missing file, not HDF5, not a phase result, missing or mis-shaped datasets, a cut outside [0, T], a
result whose status is not complete without --allow-partial; blocks of different runs, a beta missing or twice) end with a one-line message "phase.py: error: ..."
on stderr and exit status 2. With --allow-partial an unfinished run is drawn up to its last record, marked
"partial (status: X)".
"""

import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("phase.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, open_run, read_datasets, run_parameters,  # noqa: E402
                       save_figure, set_title, study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

PROG = "phase.py"
DATASETS = ("beta", "time", "density", "density_stderr", "clusters_median", "clusters_mean", "span_dimension",
            "energy", "energy_stderr")
SHAPES = {"beta": ("betas",), "time": ("records",), "density": ("records", "betas"),
          "density_stderr": ("records", "betas"), "clusters_median": ("records", "betas"),
          "clusters_mean": ("records", "betas"), "span_dimension": ("records", "betas"),
          "energy": ("records", "betas"), "energy_stderr": ("records", "betas")}
# What a block adds (one value per beta): the grid index of its betas, and their steps.
BLOCK_DATASETS = ("beta_index", "step", "steps_per_record")
Z95 = 1.96
# Parameters that differ between the blocks of one grid.
BLOCK_KEYS = ("phase.block", "run.output", "run.checkpoint")


class ResultError(Exception):
    """A file that cannot be read or is not a phase result."""


def read_result(path, allow_partial=False, block=False):
    """Return a dict of the /phase datasets of a phase result (block: with BLOCK_DATASETS)."""
    h5, status = open_run(path, ResultError, allow_partial, "phase")
    names = DATASETS + (BLOCK_DATASETS if block else ())
    with h5:
        g = study_group(h5, path, "phase", "phase", ResultError)
        out = {"path": path, "status": status, "parameters": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(g, path, names, ResultError, np.float64))
    check_shapes(path, out, dict(SHAPES, **{name: ("betas",) for name in BLOCK_DATASETS}), ResultError, "/phase/")
    if not np.all(np.isfinite(out["beta"])) or not np.all(np.diff(out["time"]) > 0):
        raise ResultError(f"{path}: /phase/beta must be finite and /phase/time increasing")
    return out


def grid_size(parameters, path):
    """The number of betas of the whole grid: phase.beta_list's length, else phase.betas."""
    listed = str(parameters.get("phase.beta_list", "")).strip()
    try:
        return len([v for v in listed.split(",") if v.strip()]) if listed else int(parameters["phase.betas"])
    except (KeyError, ValueError, TypeError):
        raise ResultError(f"{path}: its deck names no phase.betas") from None


def merge_blocks(paths, allow_partial=False):
    """One result from the blocks of one grid: their betas side by side in grid order (phase.block's doc above)."""
    parts = [read_result(p, allow_partial, block=True) for p in paths]
    first = parts[0]
    same = {k: v for k, v in first["parameters"].items() if k not in BLOCK_KEYS}
    records = min(len(r["time"]) for r in parts)  # partial blocks (--allow-partial): their common records
    for r in parts[1:]:
        other = {k: v for k, v in r["parameters"].items() if k not in BLOCK_KEYS}
        if other != same:
            differ = sorted(k for k in set(same) | set(other) if same.get(k) != other.get(k))
            raise ResultError(f"{r['path']} is not a block of the grid of {first['path']}: "
                              f"{', '.join(differ[:4])} differ")
        if not np.array_equal(r["time"][:records], first["time"][:records]):
            raise ResultError(f"{r['path']} has other record times than {first['path']}")
    index = np.concatenate([r["beta_index"] for r in parts])
    if not np.all(index == np.round(index)) or index.min() < 0:
        raise ResultError(f"{paths[int(np.argmin(index))]}: /phase/beta_index holds a value that is not a grid index")
    index = index.astype(np.int64)
    total = grid_size(first["parameters"], first["path"])
    counts = np.bincount(index, minlength=max(total, index.max() + 1))
    twice, missing = np.nonzero(counts > 1)[0], np.nonzero(counts[:total] == 0)[0]
    if twice.size or missing.size or counts.size > total:
        what = (f"grid beta {twice[0]} is in more than one file" if twice.size
                else f"grid beta {missing[0]} (of {total}) is in none of the files" if missing.size
                else f"grid beta {counts.size - 1} is beyond the grid's {total}")
        raise ResultError(f"the blocks are not one grid: {what}")
    order = np.argsort(index, kind="stable")
    merged = {"path": default_block_name(first["path"]), "parameters": same,
              "status": next((r["status"] for r in parts if r["status"] != "complete"), "complete")}
    for name in DATASETS + BLOCK_DATASETS:
        if name == "time":
            merged[name] = first["time"][:records]
        elif SHAPES.get(name, ("betas",)) == ("betas",):
            merged[name] = np.concatenate([r[name] for r in parts])[order]
        else:
            merged[name] = np.concatenate([r[name][:records] for r in parts], axis=1)[:, order]
    return merged


def default_block_name(path):
    """runs/phase-block3.h5 -> runs/phase.h5."""
    return re.sub(r"-block[0-9]+\.h5$", ".h5", path)


def write_merged(r, paths, out):
    """The merged result as one file: the first block's root attributes (its deck without phase.block; its
    status the blocks' worst) and the /phase datasets; a temporary name in the same folder, then renamed."""
    import h5py

    # Only an earlier merge is replaced: a run's own result of that name is the user's.
    if os.path.exists(out):
        try:
            with h5py.File(out, "r") as f:
                earlier = "merged_from" in f.attrs
        except OSError:
            earlier = False
        if not earlier:
            raise ResultError(f"--merged {out}: the file exists and is not a merged result (remove it or name another)")
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix=".phase-merge-", suffix=".h5", dir=folder)
    os.close(fd)
    try:
        with h5py.File(paths[0], "r") as src, h5py.File(tmp, "w") as dst:
            for key, value in src.attrs.items():
                if key not in ("phase.block", "phase.blocks"):
                    dst.attrs[key] = value
            deck = to_str(src.attrs.get("deck", ""))
            # The merged file is the whole grid: no block line in [phase].
            dst.attrs["deck"] = re.sub(r"(?m)^block *= *[0-9]+\n", "", re.sub(r"(?m)^blocks *= *[0-9]+\n", "", deck))
            dst.attrs["status"] = r["status"]
            dst.attrs["merged_from"] = "\n".join(os.path.basename(p) for p in paths)
            g = dst.create_group("phase")
            for name in DATASETS + BLOCK_DATASETS:
                g[name] = r[name]
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


def default_output(path):
    """RESULT.h5 -> RESULT.png."""
    return path[:-3] + ".png" if path.endswith(".h5") else path + ".png"


def cut_records(r, cuts):
    """The record indices nearest to the cut times (default: T/4, T/2, T)."""
    t = r["time"]
    T = float(r["parameters"].get("model.T", t[-1]))
    times = [T / 4, T / 2, T] if cuts is None else cuts
    for c in times:
        if not 0 <= c <= T:
            raise ResultError(f"cut time {c:g} outside [0, T = {T:g}]")
    return sorted({int(np.argmin(np.abs(t - c))) for c in times})


def edges(values):
    """Cell edges around sorted centres (pcolormesh), half a spacing beyond the ends."""
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = 0.5 * (v[1:] + v[:-1])
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def first_above(beta, values, level=0.5):
    """The smallest beta whose value exceeds level, or None."""
    above = np.nonzero(values > level)[0]
    return beta[above[0]] if above.size else None


def make_figure(r, records):
    beta, t = r["beta"], r["time"]
    order = np.argsort(beta)
    beta = beta[order]
    dens, se = r["density"][:, order], r["density_stderr"][:, order]
    clusters, span = r["clusters_median"][:, order], r["span_dimension"][:, order]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    (ax, bx), (cx, dx) = axes
    positive = dens[dens > 0]
    low = positive.min() if positive.size else 1e-4
    norm = LogNorm(vmin=low, vmax=max(1.0, low * 10))
    mesh = ax.pcolormesh(edges(t), edges(beta), np.where(dens > 0, dens, low).T, norm=norm, cmap="RdBu_r",
                         shading="flat", rasterized=True)
    fig.colorbar(mesh, ax=ax, label="density at zero (log scale)")
    ax.set_title("density at zero: pairs i != j with cosine above the threshold", fontsize=10)
    mesh = bx.pcolormesh(edges(t), edges(beta), clusters.T, cmap="viridis", shading="flat", rasterized=True)
    fig.colorbar(mesh, ax=bx, label="median number of clusters")
    bx.set_title("median number of clusters over the systems", fontsize=10)
    for a in (ax, bx):
        a.set_xlabel("time t")
        a.set_ylabel(r"$\beta$")
    colours = plt.cm.plasma(np.linspace(0.1, 0.85, len(records)))
    # Markers and dashes of their own: cuts with equal values (a settled system) stay visible on each other.
    styles = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-")]
    for i, (k, colour) in enumerate(zip(records, colours)):
        marker, dash = styles[i % len(styles)]
        cx.fill_between(beta, np.clip(dens[k] - Z95 * se[k], 0, 1), np.clip(dens[k] + Z95 * se[k], 0, 1),
                        color=colour, alpha=0.25)
        cx.plot(beta, dens[k], color=colour, marker=marker, markersize=4, markerfacecolor="none", linestyle=dash,
                label=f"t = {t[k]:.3g}")
        dx.plot(beta, span[k], color=colour, marker=marker, markersize=4, markerfacecolor="none", linestyle=dash,
                label=f"t = {t[k]:.3g}")
    cx.set_xlabel(r"$\beta$")
    cx.set_ylabel("density at zero")
    cx.set_ylim(-0.02, 1.02)
    cx.set_title("cuts at fixed t, with 95% bands over the systems", fontsize=10)
    cx.legend(fontsize=8, loc="best")
    dx.set_xlabel(r"$\beta$")
    dx.set_ylabel("mean dimension of the span")
    dx.set_title("dimension of the tokens' span", fontsize=10)
    dx.legend(fontsize=8, loc="best")
    set_title(fig, "phase", r["parameters"], os.path.basename(r["path"]), r["status"])
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def summarize(results, output, cuts=None, allow_partial=False, merged=None):
    """Read the result (or merge the blocks), print the cuts, write the figure (and the merged file); return
    the paths written."""
    if merged and len(results) < 2:
        raise ResultError("--merged needs the block files of one grid (two or more)")
    r = read_result(results[0], allow_partial) if len(results) == 1 else merge_blocks(results, allow_partial)
    written = []
    if merged:
        write_merged(r, results, merged)
        written.append(merged)
        print(f"merged {len(results)} blocks ({len(r['beta'])} betas) into {merged}")
    records = cut_records(r, cuts)
    beta = r["beta"]
    order = np.argsort(beta)
    for k in records:
        d = r["density"][k][order]
        b = first_above(beta[order], d)
        where = f"first above 1/2 at beta = {b:.4g}" if b is not None else "nowhere above 1/2"
        print(f"t = {r['time'][k]:.4g}: density at zero {d[0]:.4f} at beta = {beta[order][0]:.4g}, "
              f"{d[-1]:.4f} at beta = {beta[order][-1]:.4g}; {where}")
    out = output or default_output(r["path"])
    save_figure(make_figure(r, records), out, r["status"], dpi=110)
    return written + [out]


def parse_cuts(text):
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ResultError(f"--cuts '{text}': a comma-separated list of times") from None


ARGUMENTS = ((("results",), {"nargs": "+", "metavar": "RESULT", "help": "a phase result, or the blocks of one grid"}),
             (("--merged",), {"help": "write the blocks merged into this file"}),
             (("-o", "--output"), {"help": "PNG to write (default: RESULT with .h5 -> .png)"}),
             (("--cuts",), {"help": "times of the cuts, comma-separated (default: T/4, T/2, T)"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS,
                    lambda a: summarize(a.results, a.output, parse_cuts(a.cuts), a.allow_partial, a.merged), argv)


if __name__ == "__main__":
    sys.exit(main())
