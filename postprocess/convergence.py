#!/usr/bin/env python3
"""Merge the result files of a `tokdyn converge` sweep and fit the convergence rate.

Usage:
    convergence.py FILE_OR_DIR [FILE_OR_DIR ...] [-o PREFIX] [--metric METRIC]
                   [--bootstrap B] [--seed S]

Input: HDF5 result files written by `tokdyn converge`; a directory stands for
every *.h5 file directly in it. Each file holds a subset of (replica, level)
pairs in /converge: datasets levels [J], replicas [R] and one [R, J] dataset
per metric of its study (attribute /converge/study):
    depth   levels L = L0 2^j;  metrics mse_grid, mse_sup, mse_final;
    width   levels m = m0 2^j;  metrics mse_grid, mse_sup, mse_final;
    tokens  levels N = N0 2^j (propagation of chaos, doc/science.md section 6.2, Prop 1.2);
            metrics w2_sup, w2_final, mmd2_sup, energy_error_sup,
            mean_error_sup, distances between the N-token empirical measure
            and the mean-field solution; /converge attributes distance
            ("circular", "assignment" or "sliced": which W2), d, bound_slope
            (exponent of the bound r_d(N) of E sup_t W2^2), sharp_slope (the
            rate for uniform measures on S^{d-1}), reference_solver and
            reference_size. The time series [R, J, S] are not read.
Files whose root attribute `status` is not "complete" (and tokdyn checkpoint
files) are skipped with a warning on stderr; with --allow-partial the result
files among them are merged too, and the figure ("partial (status: X)"), the
JSON (status, partial_files) and the CSV (status column) say so; a file whose root attribute
`command` is not "converge" is an error, and so is a mix of studies, or of
tokens files that differ in distance, d, bound_slope or sharp_slope.

Merging: all (level, replica) pairs of all files go into one table. A pair
seen twice must carry the same metric values (equal to a relative tolerance
of 1e-12, NaN equal to NaN); otherwise it is an error.

Statistics, for every metric of the study:
    per level: replicas n, mean, standard error se = sd / sqrt(n) (sd with
    ddof = 1; undefined for n = 1) and the normal 95% interval mean +- 1.96 se;
    the least-squares slope of log(mean) against log(level), with a bootstrap
    95% percentile interval over B resamples of the replicas (numpy Generator
    PCG64 seeded by --seed).

Bootstrap resampling: levels are grouped by their set of replica ids. Within
a group (the usual case: every level of a complete sweep has the same
replicas) one draw of replica ids with replacement is used for all its levels,
so the correlation between levels of the same replica (shared noise) is kept
and the slope interval is the narrower paired one. Levels whose replica sets
differ are in different groups and are resampled independently of each other
(each from its own replicas), which ignores the pairing between them. The same
draws are used for all metrics.

Reference slopes: depth and width: -1 ("expected"). tokens: the files'
bound_slope ("bound") and sharp_slope ("sharp"); the observed slope of the
chosen metric is compared with the bound: at least as fast when slope <=
bound_slope.

--metric (the metric plotted, printed first and reported as "slope"):
default mse_grid for depth and width, w2_sup for tokens.

Output (PREFIX defaults to ./convergence-<study>):
    PREFIX.json  study, metric, level_name, levels, n, slope and slope_ci (of
                 the chosen metric) and for every metric the per-level mean,
                 se, ci_low, ci_high, slope and slope_ci; expected_slope (-1;
                 tokens: bound_slope), reference_slopes ({"expected": -1};
                 tokens: {"bound": ..., "sharp": ...}), study_attributes (the
                 /converge attributes: reference_layers; tokens: distance, d,
                 bound_slope, sharp_slope, reference_solver, reference_size),
                 the bootstrap settings and the input files; tokens also
                 bound: {metric, slope (the bound's), observed_slope,
                 observed_ci, at_least_as_fast (observed_slope <= slope),
                 ci_at_least_as_fast (the upper end of observed_ci too)};
    PREFIX.csv   one row per level: level, n, mean and se of every metric;
    PREFIX.png   log-log plot of mean +- 95% CI against level for the chosen
                 metric (filled markers) and the other metrics (open markers,
                 each its own marker and line style, drawn on top so that none
                 hides another), the fitted line and the reference slope lines
                 anchored at the first level; an interval reaching below
                 mean / 20 (zero or below included) is drawn down to mean / 20
                 and marked with a downward triangle; the title names the
                 parameters the files share (their decks).
A short table, the slopes and the paths written are printed on stdout.

Errors (missing or unreadable file, wrong command, schema violation (text
where a number belongs included), mixed
studies or tokens attributes, conflicting duplicates, fewer than two levels,
a --metric the study does not have) end with a one-line message
"convergence.py: error: ..." on stderr and exit status 2.
"""

import argparse
import csv
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("convergence.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, common_parameters, interval_verdict, log_lower, open_run,  # noqa: E402
                       partial_label, read_numbers, readable_log_axis, run_cli, run_parameters, save_figure,
                       set_title, to_scalar, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

PROG = "convergence.py"
MSE_METRICS = ("mse_grid", "mse_sup", "mse_final")
TOKEN_METRICS = ("w2_sup", "w2_final", "mmd2_sup", "energy_error_sup", "mean_error_sup")
# Per study: what its levels are, its metrics (the first is the default --metric), the /converge
# attributes read (required ones raise when missing; `agree` ones must be equal in all files,
# `warn` ones only warn when they differ), its reference slopes as (key, label, value or the name of
# the attribute holding it), and the reference the observed slope is compared with (None: no comparison).
STUDIES = {
    "depth": {"level_name": "depth L", "symbol": "L", "quantity": "error", "metrics": MSE_METRICS,
              "required": (), "optional": ("reference_layers",), "agree": (),
              "warn": ("reference_layers",),
              "references": (("expected", "reference", -1.0),), "compare": None, "shown": ()},
    "width": {"level_name": "width m", "symbol": "m", "quantity": "error", "metrics": MSE_METRICS,
              "required": (), "optional": ("reference_layers",), "agree": (), "warn": (),
              "references": (("expected", "reference", -1.0),), "compare": None, "shown": ()},
    "tokens": {"level_name": "tokens N", "symbol": "N", "quantity": "distance to mean field",
               "metrics": TOKEN_METRICS,
               "required": ("distance", "d", "bound_slope", "sharp_slope"),
               "optional": ("reference_solver", "reference_size"),
               "agree": ("distance", "d", "bound_slope", "sharp_slope"),
               "warn": ("reference_solver", "reference_size"),
               "references": (("bound", "bound r_d(N)", "bound_slope"),
                              ("sharp", "sharp, uniform measure", "sharp_slope")),
               "compare": "bound", "shown": ("distance", "d")},
}
METRICS = MSE_METRICS  # the metrics of the depth and width studies (the helpers' default)
ALL_METRICS = tuple(dict.fromkeys(m for spec in STUDIES.values() for m in spec["metrics"]))
Z95 = 1.96
COLORS = {"mse_grid": "tab:blue", "mse_sup": "tab:green", "mse_final": "tab:purple",
          "w2_sup": "tab:blue", "w2_final": "tab:purple", "mmd2_sup": "tab:green",
          "energy_error_sup": "tab:orange", "mean_error_sup": "tab:brown"}
# Each metric its own marker and line style too, so that metrics with close values stay apart.
MARKERS = {"mse_grid": "o", "mse_sup": "s", "mse_final": "^", "w2_sup": "o", "w2_final": "^", "mmd2_sup": "s",
           "energy_error_sup": "D", "mean_error_sup": "P"}
LINESTYLES = {"mse_grid": "-", "mse_sup": "--", "mse_final": ":", "w2_sup": "-", "w2_final": ":",
              "mmd2_sup": "--", "energy_error_sup": "-.", "mean_error_sup": (0, (5, 1, 1, 1))}
REFERENCE_STYLES = ("--", ":", "-.")
TEXT_ATTRIBUTES = ("distance", "reference_solver")  # the other /converge attributes are numbers
DUPLICATE_RTOL = 1e-12


class ConvergenceError(Exception):
    """Input that cannot be read, merged or fitted."""


def warn(message):
    """Print a one-line warning on stderr."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def number(value):
    """Return a float that holds an integer as int (levels, replica ids)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def expand_inputs(paths):
    """Return the list of files named by the arguments (a directory: its *.h5)."""
    files, seen = [], set()
    for path in paths:
        if os.path.isdir(path):
            found = sorted(f for f in glob.glob(os.path.join(glob.escape(path), "*.h5"))
                           if os.path.isfile(f))
            if not found:
                raise ConvergenceError(f"no *.h5 files in directory {path}")
        elif os.path.exists(path):
            if not os.path.isfile(path):
                raise ConvergenceError(f"not a regular file: {path}")
            found = [path]
        else:
            raise ConvergenceError(f"no such file or directory: {path}")
        for f in found:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files


def read_result(path, allow_partial=False):
    """Read one converge result file.

    Returns a dict with the file's attributes and arrays, or None when the
    file is to be skipped (status not complete unless allow_partial, or a
    checkpoint), after a warning. Raises ConvergenceError on anything else
    that is wrong.
    """
    import h5py

    h5, status = open_run(path, ConvergenceError, allow_partial=True)  # skipped below, not refused
    with h5:
        attrs = h5.attrs
        if to_str(attrs.get("format", "")).startswith("tokdyn-checkpoint"):
            warn(f"skipping {path}: a tokdyn checkpoint, not a result file")
            return None
        command = to_str(attrs["command"]) if "command" in attrs else ""
        if command != "converge":
            shown = f"'{command}'" if command else "missing"
            raise ConvergenceError(f"{path}: root attribute 'command' is {shown}, "
                                   f"not 'converge'")
        if status != "complete" and not allow_partial:
            warn(f"skipping {path}: status is '{status}', not 'complete' (--allow-partial merges it)")
            return None

        result = {"path": path, "status": status}
        for key in ("tokdyn_version", "git_revision", "deck"):
            result[key] = to_str(attrs[key]) if key in attrs else ""
        result["seed"] = to_scalar(attrs["seed"]) if "seed" in attrs else None
        result["parameters"] = run_parameters(h5, path, ConvergenceError)

        if "converge" not in h5 or not isinstance(h5["converge"], h5py.Group):
            raise ConvergenceError(f"{path}: missing group /converge")
        group = h5["converge"]
        if "study" not in group.attrs:
            raise ConvergenceError(f"{path}: missing attribute /converge/study")
        result["study"] = study = to_str(group.attrs["study"])
        if study not in STUDIES:
            raise ConvergenceError(f"{path}: /converge/study is '{study}', not one of "
                                   + ", ".join(f"'{s}'" for s in STUDIES))
        spec = STUDIES[study]
        result["attributes"] = {}
        for name in spec["required"] + spec["optional"]:
            if name in group.attrs:
                value = group.attrs[name]
                if name not in TEXT_ATTRIBUTES:
                    read_numbers(group, path, [name], ConvergenceError)  # a number, not text
                result["attributes"][name] = to_str(value) if name in TEXT_ATTRIBUTES else to_scalar(value)
            elif name in spec["required"]:
                raise ConvergenceError(f"{path}: missing attribute /converge/{name} "
                                       f"(required by the {study} study)")
        result["reference_layers"] = result["attributes"].get("reference_layers")
        for name in ("levels", "replicas") + spec["metrics"]:
            if name not in group or not isinstance(group[name], h5py.Dataset):
                raise ConvergenceError(f"{path}: missing dataset /converge/{name}")
            try:
                result[name] = np.asarray(group[name][()], dtype=np.float64)
            except (TypeError, ValueError):
                raise ConvergenceError(f"{path}: /converge/{name} is not numeric") from None

    levels, replicas = result["levels"], result["replicas"]
    if levels.ndim != 1 or replicas.ndim != 1:
        raise ConvergenceError(f"{path}: /converge/levels and /converge/replicas must be "
                               f"1-d, got {list(levels.shape)} and {list(replicas.shape)}")
    shape = (replicas.size, levels.size)
    for name in spec["metrics"]:
        if result[name].shape != shape:
            raise ConvergenceError(f"{path}: /converge/{name} must have shape "
                                   f"[R, J] = {list(shape)}, got {list(result[name].shape)}")
    if not np.all(np.isfinite(levels)) or np.any(levels <= 0):
        raise ConvergenceError(f"{path}: /converge/levels must be positive, "
                               f"got {levels.tolist()}")
    if not np.all(np.isfinite(replicas)):
        raise ConvergenceError(f"{path}: /converge/replicas holds non-finite ids")
    return result


def same_values(a, b):
    """True when two value tuples agree (relative tolerance, NaN equal to NaN)."""
    return bool(np.allclose(a, b, rtol=DUPLICATE_RTOL, atol=0.0, equal_nan=True))


def same_attribute(a, b):
    """True when two attribute values agree (numbers to a relative 1e-12, text exactly)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return same_values(a, b)


def merge(results):
    """Merge the results of several files into one table.

    Returns (study, table) with table a dict (level, replica) -> array of the
    study's metric values. Raises ConvergenceError on mixed studies, on files
    that differ in an attribute the study needs equal (STUDIES[...]["agree"])
    and on conflicting duplicates.
    """
    study, first = None, None
    table, origin = {}, {}
    for res in results:
        if study is None:
            study, first = res["study"], res
        elif res["study"] != study:
            raise ConvergenceError(f"mixed studies: {first['path']} is '{study}' but "
                                   f"{res['path']} is '{res['study']}'")
        for name in STUDIES[study]["agree"]:
            a, b = first["attributes"][name], res["attributes"][name]
            if not same_attribute(a, b):
                raise ConvergenceError(f"mixed {name}: {first['path']} has {name} = {a!r} but "
                                       f"{res['path']} has {name} = {b!r}; files of one "
                                       f"{study} study must agree in it")
        for i, replica in enumerate(res["replicas"]):
            for j, level in enumerate(res["levels"]):
                key = (float(level), float(replica))
                values = np.array([res[m][i, j] for m in STUDIES[study]["metrics"]])
                if key in table:
                    if not same_values(table[key], values):
                        raise ConvergenceError(
                            f"conflicting duplicate of level {number(level)} replica "
                            f"{number(replica)}: {origin[key]} has "
                            f"{table[key].tolist()}, {res['path']} has {values.tolist()}")
                    continue
                if not np.all(np.isfinite(values)):
                    raise ConvergenceError(f"{res['path']}: non-finite error at level "
                                           f"{number(level)} replica {number(replica)}")
                table[key] = values
                origin[key] = res["path"]
    return study, table


def organize(table):
    """Arrange the merged table by level.

    Returns (levels, per_level) with levels sorted ascending and per_level a
    list of (replica ids sorted, values [n, 3]) for each level.
    """
    by_level = {}
    for (level, replica), values in table.items():
        by_level.setdefault(level, []).append((replica, values))
    levels = sorted(by_level)
    per_level = []
    for level in levels:
        rows = sorted(by_level[level], key=lambda item: item[0])
        per_level.append((tuple(r for r, _ in rows), np.array([v for _, v in rows])))
    return np.array(levels), per_level


def level_statistics(per_level, metrics=METRICS):
    """Return n [J] and, per metric, mean, se, ci_low, ci_high arrays [J]."""
    n = np.array([values.shape[0] for _, values in per_level])
    stats = {}
    for k, metric in enumerate(metrics):
        mean = np.array([values[:, k].mean() for _, values in per_level])
        se = np.array([values[:, k].std(ddof=1) / math.sqrt(values.shape[0])
                       if values.shape[0] > 1 else np.nan for _, values in per_level])
        stats[metric] = {"mean": mean, "se": se,
                         "ci_low": mean - Z95 * se, "ci_high": mean + Z95 * se}
    return n, stats


def ls_slope(x, y):
    """Least-squares slope of y against x along the last axis (y may be [..., J])."""
    xc = x - x.mean()
    yc = y - y.mean(axis=-1, keepdims=True)
    return (yc * xc).sum(axis=-1) / (xc * xc).sum()


def log_slope(levels, means):
    """Slope of log(means) against log(levels); NaN where a mean is not positive."""
    means = np.asarray(means, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(means > 0, np.log(np.where(means > 0, means, 1.0)), np.nan)
    return ls_slope(np.log(levels), y)


def resample_groups(per_level):
    """Group level indices by their replica-id set, in order of first appearance."""
    groups = {}
    for j, (replicas, _) in enumerate(per_level):
        groups.setdefault(replicas, []).append(j)
    return list(groups.items())


def bootstrap_means(per_level, resamples, rng):
    """Return bootstrap means [B, J, K] of every level and of the K metrics.

    Levels with the same replica set share one draw of replicas (paired);
    different replica sets are drawn independently.
    """
    J = len(per_level)
    out = np.empty((resamples, J, per_level[0][1].shape[1]))
    for replicas, members in resample_groups(per_level):
        idx = rng.integers(0, len(replicas), size=(resamples, len(replicas)))
        for j in members:
            out[:, j, :] = per_level[j][1][idx].mean(axis=1)
    return out


def fit_slopes(levels, per_level, stats, resamples, seed, metrics=METRICS):
    """Fit every metric's slope; bootstrap percentile 95% intervals.

    Returns a dict metric -> {"slope", "ci_low", "ci_high", "valid_resamples"}
    (None where the fit is undefined: a mean that is not positive).
    """
    rng = np.random.default_rng(seed)
    boot = bootstrap_means(per_level, resamples, rng)
    fits = {}
    for k, metric in enumerate(metrics):
        slope = float(log_slope(levels, stats[metric]["mean"]))
        slopes = log_slope(levels, boot[:, :, k])
        slopes = slopes[np.isfinite(slopes)]
        if not math.isfinite(slope):
            fits[metric] = {"slope": None, "ci_low": None, "ci_high": None,
                            "valid_resamples": 0}
            continue
        if slopes.size:
            low, high = np.percentile(slopes, [2.5, 97.5])
            low, high = float(low), float(high)
        else:
            low = high = None
        fits[metric] = {"slope": slope, "ci_low": low, "ci_high": high,
                        "valid_resamples": int(slopes.size)}
    return fits


def fmt(value, spec=".3f"):
    """Format a number, or '?' for None/NaN."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "?"
    return format(value, spec)


def slope_text(fit):
    """Return 'slope [low, high]' for a fit dict."""
    return f"{fmt(fit['slope'])} [{fmt(fit['ci_low'])}, {fmt(fit['ci_high'])}]"


def json_list(values):
    """Return a float array as a JSON-safe list (NaN -> null)."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def write_json(path, summary):
    """Write the summary dict to path."""
    with open(path, "w") as f:
        json.dump(summary, f, indent=2, allow_nan=False)
        f.write("\n")


def write_csv(path, levels, n, stats, status):
    """Write one row per level: level, n, mean and se of every metric, and the merge's status."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        header = ["level", "n"]
        for metric in stats:
            header += [f"{metric}_mean", f"{metric}_se"]
        writer.writerow(header + ["status"])
        for j, level in enumerate(levels):
            row = [number(level), int(n[j])]
            for metric in stats:
                row += [repr(float(stats[metric]["mean"][j])),
                        repr(float(stats[metric]["se"][j]))]
            writer.writerow(row + [status])


def reference_slopes(study, attributes):
    """Return the study's reference slopes as [(key, label, value)] (values from the attributes)."""
    return [(key, label, float(attributes[value]) if isinstance(value, str) else value)
            for key, label, value in STUDIES[study]["references"]]


def references_text(references):
    """Return 'expected -1' or 'bound -0.5, sharp -1'."""
    return ", ".join(f"{key} {value:g}" for key, _, value in references)


def compare_with_reference(study, metric, fit, references):
    """Return the JSON block comparing the observed slope with the study's reference, or None.

    At least as fast: the observed slope is <= the reference slope (the error decays at least
    as fast); ci_at_least_as_fast: the whole interval is.
    """
    key = STUDIES[study]["compare"]
    if key is None:
        return None
    value = dict((k, v) for k, _, v in references)[key]
    slope, high = fit["slope"], fit["ci_high"]
    return {"metric": metric, "slope": value, "observed_slope": slope,
            "observed_ci": [fit["ci_low"], high],
            "at_least_as_fast": slope is not None and slope <= value,
            "ci_at_least_as_fast": high is not None and high <= value}


def comparison_text(key, comparison):
    """Return the one-line verdict on the comparison block."""
    verdict = "at least as fast as" if comparison["at_least_as_fast"] else "slower than"
    return (f"{comparison['metric']}: observed slope {fmt(comparison['observed_slope'])} is "
            f"{verdict} the {key} slope {comparison['slope']:g}"
            + (" (the whole interval too)" if comparison["ci_at_least_as_fast"] else ""))


def make_figure(study, metric, levels, stats, fits, references, attributes, params=None, nfiles=0,
                status="complete"):
    """Log-log plot of mean +- 95% CI against level, fitted line, reference slope lines; titled by the
    parameters the files share (params) and their number."""
    spec = STUDIES[study]
    fig, ax = plt.subplots(figsize=(8, 6))
    order = [metric] + [m for m in stats if m != metric]
    clipped_shown = False
    for name in order:
        mean = stats[name]["mean"]
        half = Z95 * np.nan_to_num(stats[name]["se"], nan=0.0)
        ok = mean > 0
        if not np.any(ok):
            continue
        low, clipped = log_lower(mean[ok], mean[ok] - half[ok])
        main = name == metric
        # The chosen metric filled, the others open and on top: a metric close to another stays visible.
        ax.errorbar(levels[ok], mean[ok], yerr=[mean[ok] - low, half[ok]],
                    color=COLORS[name], marker=MARKERS[name], ls=LINESTYLES[name],
                    markersize=7 if main else 6, mfc=COLORS[name] if main else "white",
                    lw=2.0 if main else 1.3, capsize=4 if main else 3,
                    label=f"{name} (mean ± 95% CI)" if main else name,
                    zorder=3 if main else 4)
        if clipped.any():
            ax.plot(levels[ok][clipped], low[clipped], "v", color=COLORS[name], markersize=6, ls="none",
                    zorder=5, label=None if clipped_shown else "interval reaches below (drawn to mean / 20)")
            clipped_shown = True
    fit = fits[metric]
    x = np.geomspace(levels[0], levels[-1], 50)
    if fit["slope"] is not None:
        mean = stats[metric]["mean"]
        lx, ly = np.log(levels), np.log(mean)
        intercept = ly.mean() - fit["slope"] * lx.mean()
        ax.plot(x, np.exp(intercept) * x ** fit["slope"], color="black", lw=1.0,
                label=f"fit: slope {slope_text(fit)}", zorder=6)  # thin, on top: it runs along the data
    anchor = stats[metric]["mean"][0]
    if anchor > 0:
        for (_, label, value), style in zip(references, REFERENCE_STYLES):
            ax.plot(x, anchor * (x / levels[0]) ** value, color="0.5", ls=style,
                    lw=1.2, label=f"slope {value:g} ({label})", zorder=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(levels)
    ax.set_xticklabels([f"{number(v):g}" for v in levels])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(spec["level_name"])
    # Every metric is drawn: the axis names the quantity, the legend the metrics.
    ax.set_ylabel(f"{spec['quantity']} ({', '.join(order)})" if len(order) > 1 else f"{spec['quantity']} ({metric})")
    readable_log_axis(ax.yaxis)
    shown = ", ".join(f"{name} = {attributes[name]}" for name in spec["shown"])
    name = f"{study} study, {nfiles} file{'s' if nfiles != 1 else ''}" + (f" ({shown})" if shown else "")
    disagrees, _ = slope_verdict(study, fit, references)
    ax.set_title(f"slope of log {metric}: {slope_text(fit)} ({references_text(references)})"
                 + (" DISAGREES" if disagrees else ""), fontsize=10)
    set_title(fig, "converge", params or {}, name, status, fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def slope_verdict(study, fit, references):
    """(disagrees, text) of a fitted slope's 95% interval against the study's prediction: -1 in depth and
    width; in tokens the bound, which the slope may not exceed (tokdyn_h5.interval_verdict, as report.py)."""
    refs = {key: value for key, _, value in references}
    if fit["slope"] is None or fit["ci_low"] is None:
        return False, "no slope"
    if study == "tokens":
        return interval_verdict(fit["ci_low"], fit["ci_high"], refs["bound"], at_most=True)
    return interval_verdict(fit["ci_low"], fit["ci_high"], refs["expected"])


def print_report(study, metric, levels, n, stats, fits, references, comparison, nfiles,
                 nskipped, outputs):
    """Print the per-level table, the slopes, the comparison and the paths written."""
    sym = STUDIES[study]["symbol"]
    order = [metric] + [m for m in stats if m != metric]
    print(f"tokdyn converge {study} study: {nfiles} file(s) used, {nskipped} skipped, "
          f"{len(levels)} levels")
    print(f"  {sym:>6}  {'n':>4}  {metric + ' mean (95% CI)':<36}"
          + "".join(f"  {m:>11}" for m in order[1:]))
    for j, level in enumerate(levels):
        s = stats[metric]
        ci = (f"[{s['ci_low'][j]:.3e}, {s['ci_high'][j]:.3e}]"
              if math.isfinite(s["se"][j]) else "[?]")
        print(f"  {number(level):>6g}  {int(n[j]):>4d}  {s['mean'][j]:.4e} {ci:<25}"
              + "".join(f"  {stats[m]['mean'][j]:>11.4e}" for m in order[1:]))
    for m in order:
        disagrees, verdict = slope_verdict(study, fits[m], references)
        print(f"slope of log {m} against log {sym}: {slope_text(fits[m])} "
              f"({references_text(references)})" + (f" <- DISAGREES: {verdict}" if disagrees else ""))
    if comparison is not None:
        print(comparison_text(STUDIES[study]["compare"], comparison))
    for path in outputs:
        print(f"wrote {path}")


def parse_args(argv):
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Merge tokdyn converge result files and fit the convergence slope.")
    parser.add_argument("inputs", metavar="FILE_OR_DIR", nargs="+",
                        help="result file (.h5) or directory of them")
    parser.add_argument("-o", "--output", metavar="PREFIX",
                        help="write PREFIX.json, PREFIX.csv and PREFIX.png "
                             "(default: ./convergence-<study>)")
    defaults = ", ".join(f"{spec['metrics'][0]} ({study})" for study, spec in STUDIES.items())
    parser.add_argument("--metric", choices=ALL_METRICS, default=None,
                        help=f"metric plotted and printed first, one of the study's "
                             f"(default: {defaults})")
    parser.add_argument("--bootstrap", metavar="B", type=int, default=2000,
                        help="bootstrap resamples (default: 2000)")
    parser.add_argument("--seed", metavar="S", type=int, default=1,
                        help="seed of the bootstrap generator (default: 1)")
    parser.add_argument(*ALLOW_PARTIAL[0], **ALLOW_PARTIAL[1])
    args = parser.parse_args(argv)
    if args.bootstrap < 1:
        parser.error("--bootstrap must be at least 1")
    if args.seed < 0:
        parser.error("--seed must be non-negative")
    return args


def study_attributes(study, results):
    """Return the study's /converge attributes over all files, warning where `warn` ones differ.

    An attribute all files agree on (or hold once) maps to its value, one that differs to the
    sorted list of its values; attributes no file holds are left out.
    """
    spec = STUDIES[study]
    out = {}
    for name in spec["required"] + spec["optional"]:
        values = []
        for r in results:
            value = r["attributes"].get(name)
            if value is not None and not any(same_attribute(value, v) for v in values):
                values.append(value)
        if not values:
            continue
        values = sorted(values, key=lambda v: (isinstance(v, str), v))
        if len(values) > 1 and name in spec["warn"]:
            warn(f"files differ in {name} {values}: errors against different references")
        out[name] = values[0] if len(values) == 1 else values
    return out


def fit_files(inputs, metric=None, resamples=2000, seed=1, allow_partial=False):
    """Read, merge and fit the converge result files named by inputs (files or directories of them) with
    `resamples` bootstrap resamples seeded by `seed`: return a dict holding the summary (what PREFIX.json
    holds) under "summary", and the pieces the figure (figure_of), the printed report and report.py use."""
    files = expand_inputs(inputs)
    results, skipped = [], []
    for path in files:
        res = read_result(path, allow_partial)
        if res is None:
            skipped.append(path)
        else:
            results.append(res)
    if not results:
        raise ConvergenceError("no complete converge result files among the inputs")
    study, table = merge(results)
    spec = STUDIES[study]
    metrics = spec["metrics"]
    metric = metric or metrics[0]
    if metric not in metrics:
        raise ConvergenceError(f"--metric {metric} is not a metric of the {study} study "
                               f"({', '.join(metrics)})")
    levels, per_level = organize(table)
    if len(levels) < 2:
        shown = ", ".join(f"{number(v):g}" for v in levels) or "none"
        raise ConvergenceError(f"at least two levels are needed to fit a slope, "
                               f"found {len(levels)} ({shown})")

    refs = sorted({r["reference_layers"] for r in results if r["reference_layers"] is not None})
    seeds = sorted({r["seed"] for r in results if r["seed"] is not None})
    attributes = study_attributes(study, results)
    if len(seeds) > 1:
        warn(f"files differ in seed {seeds}: replica ids of different seeds are merged")

    n, stats = level_statistics(per_level, metrics)
    fits = fit_slopes(levels, per_level, stats, resamples, seed, metrics)
    for m in metrics:
        if fits[m]["slope"] is None:
            if m == metric:
                bad = [f"{number(v):g}" for v, x in zip(levels, stats[m]["mean"]) if x <= 0]
                raise ConvergenceError(f"cannot fit {m}: mean not positive at level(s) "
                                       f"{', '.join(bad)}")
            warn(f"no slope for {m}: a mean is not positive")
    references = reference_slopes(study, attributes)
    comparison = compare_with_reference(study, metric, fits[metric], references)

    partial = [{"file": r["path"], "status": r["status"]} for r in results if r["status"] != "complete"]
    status = ", ".join(sorted({p["status"] for p in partial})) if partial else "complete"
    groups = resample_groups(per_level)
    summary = {
        "study": study,
        "metric": metric,
        "level_name": spec["level_name"],
        "levels": [number(v) for v in levels],
        "n": [int(v) for v in n],
        "slope": fits[metric]["slope"],
        "slope_ci": [fits[metric]["ci_low"], fits[metric]["ci_high"]],
        "expected_slope": references[0][2],
        "reference_slopes": {key: value for key, _, value in references},
        "metrics": {
            m: {
                "mean": json_list(stats[m]["mean"]),
                "se": json_list(stats[m]["se"]),
                "ci_low": json_list(stats[m]["ci_low"]),
                "ci_high": json_list(stats[m]["ci_high"]),
                "slope": fits[m]["slope"],
                "slope_ci": [fits[m]["ci_low"], fits[m]["ci_high"]],
            } for m in metrics
        },
        "bootstrap": {
            "resamples": resamples,
            "seed": seed,
            "confidence": 0.95,
            "interval": "percentile",
            "paired_groups": [[number(levels[j]) for j in members] for _, members in groups],
        },
        "replicas": sorted({number(r) for (_, r) in table}),
        "reference_layers": refs,
        "study_attributes": attributes,
        "run_seeds": seeds,
        "files": [r["path"] for r in results],
        "skipped_files": skipped,
        "status": "partial" if partial else "complete",
        "partial_files": partial,
    }
    if comparison is not None:
        summary[spec["compare"]] = comparison
    return {"summary": summary, "study": study, "metric": metric, "levels": levels, "n": n, "stats": stats,
            "fits": fits, "references": references, "attributes": attributes, "comparison": comparison,
            "status": status, "files": len(results), "skipped": len(skipped),
            "parameters": common_parameters(r["parameters"] for r in results)}


def figure_of(fit):
    """The figure of a fit_files result."""
    return make_figure(fit["study"], fit["metric"], fit["levels"], fit["stats"], fit["fits"], fit["references"],
                       fit["attributes"], fit["parameters"], fit["files"], fit["status"])


def analyse(args):
    """Read, merge, fit and write; return the summary dict."""
    fit = fit_files(args.inputs, args.metric, args.bootstrap, args.seed, args.allow_partial)
    prefix = args.output or f"convergence-{fit['study']}"
    outputs = [prefix + ext for ext in (".json", ".csv", ".png")]
    try:
        write_json(outputs[0], fit["summary"])
        write_csv(outputs[1], fit["levels"], fit["n"], fit["stats"], partial_label(fit["status"]) or "complete")
        save_figure(figure_of(fit), outputs[2], fit["status"])
    except OSError as exc:
        raise ConvergenceError(f"cannot write {exc.filename or prefix}: "
                               f"{exc.strerror or exc}") from None
    print_report(fit["study"], fit["metric"], fit["levels"], fit["n"], fit["stats"], fit["fits"], fit["references"],
                 fit["comparison"], fit["files"], fit["skipped"], outputs)
    return fit["summary"]


def main(argv=None):
    """Entry point: merge the inputs, fit, write PREFIX.{json,csv,png}."""
    args = parse_args(argv)
    return run_cli(PROG, ConvergenceError, lambda: analyse(args) and None)


if __name__ == "__main__":
    sys.exit(main())
