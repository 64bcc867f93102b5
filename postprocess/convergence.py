#!/usr/bin/python3
"""Merge the result files of a `tokdyn converge` sweep and fit the convergence rate.

Usage:
    convergence.py FILE_OR_DIR [FILE_OR_DIR ...] [-o PREFIX]
                   [--metric mse_grid|mse_sup|mse_final] [--bootstrap B] [--seed S]

Input: HDF5 result files written by `tokdyn converge`; a directory stands for
every *.h5 file directly in it. Each file holds a subset of (replica, level)
pairs in /converge (datasets levels [J], replicas [R] and mse_grid, mse_sup,
mse_final [R, J]). Files whose root attribute `status` is not "complete" (and
tokdyn checkpoint files) are skipped with a warning on stderr; a file whose
root attribute `command` is not "converge" is an error, and so is a mix of
studies (attribute /converge/study: "depth" or "width").

Merging: all (level, replica) pairs of all files go into one table. A pair
seen twice must carry the same three values (equal to a relative tolerance of
1e-12, NaN equal to NaN); otherwise it is an error.

Statistics, for every metric (mse_grid, mse_sup, mse_final):
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
draws are used for all three metrics.

Output (PREFIX defaults to ./convergence-<study>):
    PREFIX.json  study, metric, levels, n and for every metric the per-level
                 mean, se, ci_low, ci_high, slope and slope interval; the
                 expected slope -1, the bootstrap settings and the input files;
    PREFIX.csv   one row per level: level, n, mean and se of every metric;
    PREFIX.png   log-log plot of mean +- 95% CI against level for the chosen
                 metric (the other metrics lighter), the fitted line and a
                 reference slope -1 line anchored at the first level.
A short table, the slopes and the paths written are printed on stdout.

Errors (missing or unreadable file, wrong command, schema violation, mixed
studies, conflicting duplicates, fewer than two levels) end with a one-line
message "convergence.py: error: ..." on stderr and exit status 2.
"""

import argparse
import csv
import glob
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import to_scalar, to_str  # noqa: E402

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

PROG = "convergence.py"
METRICS = ("mse_grid", "mse_sup", "mse_final")
EXPECTED_SLOPE = -1.0
Z95 = 1.96
LEVEL_NAME = {"depth": "depth L", "width": "width m"}
LEVEL_SYMBOL = {"depth": "L", "width": "m"}
COLORS = {"mse_grid": "tab:blue", "mse_sup": "tab:green", "mse_final": "tab:purple"}
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


def read_result(path):
    """Read one converge result file.

    Returns a dict with the file's attributes and arrays, or None when the
    file is to be skipped (status not complete, or a checkpoint), after a
    warning. Raises ConvergenceError on anything else that is wrong.
    """
    import h5py  # imported here so --help works without h5py

    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        raise ConvergenceError(f"cannot open {path} as HDF5: {exc}") from None

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
        status = to_str(attrs["status"]) if "status" in attrs else ""
        if status != "complete":
            shown = f"'{status}'" if status else "missing"
            warn(f"skipping {path}: status is {shown}, not 'complete'")
            return None

        result = {"path": path, "status": status}
        for key in ("tokdyn_version", "git_revision", "deck"):
            result[key] = to_str(attrs[key]) if key in attrs else ""
        result["seed"] = to_scalar(attrs["seed"]) if "seed" in attrs else None

        if "converge" not in h5 or not isinstance(h5["converge"], h5py.Group):
            raise ConvergenceError(f"{path}: missing group /converge")
        group = h5["converge"]
        if "study" not in group.attrs:
            raise ConvergenceError(f"{path}: missing attribute /converge/study")
        result["study"] = to_str(group.attrs["study"])
        if result["study"] not in LEVEL_NAME:
            raise ConvergenceError(f"{path}: /converge/study is '{result['study']}', "
                                   f"not 'depth' or 'width'")
        ref = group.attrs.get("reference_layers")
        result["reference_layers"] = to_scalar(ref) if ref is not None else None
        for name in ("levels", "replicas") + METRICS:
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
    for name in METRICS:
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


def merge(results):
    """Merge the results of several files into one table.

    Returns (study, table) with table a dict (level, replica) -> array of the
    three metric values. Raises ConvergenceError on mixed studies and on
    conflicting duplicates.
    """
    study, first = None, None
    table, origin = {}, {}
    for res in results:
        if study is None:
            study, first = res["study"], res["path"]
        elif res["study"] != study:
            raise ConvergenceError(f"mixed studies: {first} is '{study}' but "
                                   f"{res['path']} is '{res['study']}'")
        for i, replica in enumerate(res["replicas"]):
            for j, level in enumerate(res["levels"]):
                key = (float(level), float(replica))
                values = np.array([res[m][i, j] for m in METRICS])
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


def level_statistics(per_level):
    """Return n [J] and, per metric, mean, se, ci_low, ci_high arrays [J]."""
    n = np.array([values.shape[0] for _, values in per_level])
    stats = {}
    for k, metric in enumerate(METRICS):
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
    """Return bootstrap means [B, J, 3] of every level and metric.

    Levels with the same replica set share one draw of replicas (paired);
    different replica sets are drawn independently.
    """
    J = len(per_level)
    out = np.empty((resamples, J, len(METRICS)))
    for replicas, members in resample_groups(per_level):
        idx = rng.integers(0, len(replicas), size=(resamples, len(replicas)))
        for j in members:
            out[:, j, :] = per_level[j][1][idx].mean(axis=1)
    return out


def fit_slopes(levels, per_level, stats, resamples, seed):
    """Fit every metric's slope; bootstrap percentile 95% intervals.

    Returns a dict metric -> {"slope", "ci_low", "ci_high", "valid_resamples"}
    (None where the fit is undefined: a mean that is not positive).
    """
    rng = np.random.default_rng(seed)
    boot = bootstrap_means(per_level, resamples, rng)
    fits = {}
    for k, metric in enumerate(METRICS):
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


def write_csv(path, levels, n, stats):
    """Write one row per level: level, n, mean and se of every metric."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        header = ["level", "n"]
        for metric in METRICS:
            header += [f"{metric}_mean", f"{metric}_se"]
        writer.writerow(header)
        for j, level in enumerate(levels):
            row = [number(level), int(n[j])]
            for metric in METRICS:
                row += [repr(float(stats[metric]["mean"][j])),
                        repr(float(stats[metric]["se"][j]))]
            writer.writerow(row)


def make_figure(study, metric, levels, stats, fits):
    """Log-log plot of mean +- 95% CI against level, fitted line, slope -1 reference."""
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    order = [metric] + [m for m in METRICS if m != metric]
    positive = []
    for name in order:
        mean = stats[name]["mean"]
        half = Z95 * np.nan_to_num(stats[name]["se"], nan=0.0)
        ok = mean > 0
        if not np.any(ok):
            continue
        # On a log axis the lower end of an interval reaching zero is drawn down to mean / 100.
        lower = np.minimum(half, 0.99 * mean)
        main = name == metric
        ax.errorbar(levels[ok], mean[ok], yerr=[lower[ok], half[ok]],
                    color=COLORS[name], marker="o" if main else "s",
                    markersize=6 if main else 4, lw=1.8 if main else 1.0,
                    alpha=1.0 if main else 0.4, capsize=4 if main else 2,
                    label=f"{name} (mean ± 95% CI)" if main else name,
                    zorder=3 if main else 2)
        positive.append(mean[ok])
    fit = fits[metric]
    x = np.geomspace(levels[0], levels[-1], 50)
    if fit["slope"] is not None:
        mean = stats[metric]["mean"]
        lx, ly = np.log(levels), np.log(mean)
        intercept = ly.mean() - fit["slope"] * lx.mean()
        ax.plot(x, np.exp(intercept) * x ** fit["slope"], color="black", lw=1.2,
                label=f"fit: slope {slope_text(fit)}", zorder=4)
    anchor = stats[metric]["mean"][0]
    if anchor > 0:
        ax.plot(x, anchor * (x / levels[0]) ** EXPECTED_SLOPE, color="0.5", ls="--",
                lw=1.2, label=f"slope {EXPECTED_SLOPE:g} (reference)", zorder=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(levels)
    ax.set_xticklabels([f"{number(v):g}" for v in levels])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(LEVEL_NAME[study])
    ax.set_ylabel(f"error ({metric})")
    ax.set_title(f"tokdyn converge: {study} study\nslope of log {metric}: {slope_text(fit)}"
                 f" (expected {EXPECTED_SLOPE:g})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def print_report(study, metric, levels, n, stats, fits, nfiles, nskipped, outputs):
    """Print the per-level table, the slopes and the paths written."""
    sym = LEVEL_SYMBOL[study]
    order = [metric] + [m for m in METRICS if m != metric]
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
        print(f"slope of log {m} against log {sym}: {slope_text(fits[m])} "
              f"(expected {EXPECTED_SLOPE:g})")
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
    parser.add_argument("--metric", choices=METRICS, default="mse_grid",
                        help="metric plotted and printed first (default: mse_grid)")
    parser.add_argument("--bootstrap", metavar="B", type=int, default=2000,
                        help="bootstrap resamples (default: 2000)")
    parser.add_argument("--seed", metavar="S", type=int, default=1,
                        help="seed of the bootstrap generator (default: 1)")
    args = parser.parse_args(argv)
    if args.bootstrap < 1:
        parser.error("--bootstrap must be at least 1")
    if args.seed < 0:
        parser.error("--seed must be non-negative")
    return args


def analyse(args):
    """Read, merge, fit and write; return the summary dict."""
    files = expand_inputs(args.inputs)
    results, skipped = [], []
    for path in files:
        res = read_result(path)
        if res is None:
            skipped.append(path)
        else:
            results.append(res)
    if not results:
        raise ConvergenceError("no complete converge result files among the inputs")
    study, table = merge(results)
    levels, per_level = organize(table)
    if len(levels) < 2:
        shown = ", ".join(f"{number(v):g}" for v in levels) or "none"
        raise ConvergenceError(f"at least two levels are needed to fit a slope, "
                               f"found {len(levels)} ({shown})")

    refs = sorted({r["reference_layers"] for r in results if r["reference_layers"] is not None})
    seeds = sorted({r["seed"] for r in results if r["seed"] is not None})
    if study == "depth" and len(refs) > 1:
        warn(f"files differ in reference_layers {refs}: errors against different references")
    if len(seeds) > 1:
        warn(f"files differ in seed {seeds}: replica ids of different seeds are merged")

    n, stats = level_statistics(per_level)
    fits = fit_slopes(levels, per_level, stats, args.bootstrap, args.seed)
    for m in METRICS:
        if fits[m]["slope"] is None:
            if m == args.metric:
                bad = [f"{number(v):g}" for v, x in zip(levels, stats[m]["mean"]) if x <= 0]
                raise ConvergenceError(f"cannot fit {m}: mean not positive at level(s) "
                                       f"{', '.join(bad)}")
            warn(f"no slope for {m}: a mean is not positive")

    prefix = args.output or f"convergence-{study}"
    outputs = [prefix + ext for ext in (".json", ".csv", ".png")]
    groups = resample_groups(per_level)
    summary = {
        "study": study,
        "metric": args.metric,
        "levels": [number(v) for v in levels],
        "n": [int(v) for v in n],
        "slope": fits[args.metric]["slope"],
        "slope_ci": [fits[args.metric]["ci_low"], fits[args.metric]["ci_high"]],
        "expected_slope": EXPECTED_SLOPE,
        "metrics": {
            m: {
                "mean": json_list(stats[m]["mean"]),
                "se": json_list(stats[m]["se"]),
                "ci_low": json_list(stats[m]["ci_low"]),
                "ci_high": json_list(stats[m]["ci_high"]),
                "slope": fits[m]["slope"],
                "slope_ci": [fits[m]["ci_low"], fits[m]["ci_high"]],
            } for m in METRICS
        },
        "bootstrap": {
            "resamples": args.bootstrap,
            "seed": args.seed,
            "confidence": 0.95,
            "interval": "percentile",
            "paired_groups": [[number(levels[j]) for j in members] for _, members in groups],
        },
        "replicas": sorted({number(r) for (_, r) in table}),
        "reference_layers": refs,
        "run_seeds": seeds,
        "files": [r["path"] for r in results],
        "skipped_files": skipped,
    }
    try:
        write_json(outputs[0], summary)
        write_csv(outputs[1], levels, n, stats)
        fig = make_figure(study, args.metric, levels, stats, fits)
        try:
            fig.savefig(outputs[2], dpi=100)
        finally:
            plt.close(fig)
    except OSError as exc:
        raise ConvergenceError(f"cannot write {exc.filename or prefix}: "
                               f"{exc.strerror or exc}") from None
    print_report(study, args.metric, levels, n, stats, fits, len(results), len(skipped),
                 outputs)
    return summary


def main(argv=None):
    """Entry point: merge the inputs, fit, write PREFIX.{json,csv,png}."""
    args = parse_args(argv)
    try:
        analyse(args)
    except ConvergenceError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
