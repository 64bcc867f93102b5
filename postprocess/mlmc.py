#!/usr/bin/env python3
"""Plot `tokdyn mlmc` results: Giles' four panels of a multilevel run and the complexity of several runs.

Usage:
    mlmc.py RESULT.h5 [MORE.h5 ...] [-o OUT.png] [--allow-partial]

Panels, from the file of method mlmc with the smallest eps (doc/science.md section 11, doc/commands/mlmc.md):
    (a) log2 of the variances per level l: V_l = Var(P_l - P_{l-1}) and Var(P_l), with the fitted beta;
    (b) log2 of the means per level: |E(P_l - P_{l-1})| and |E P_l|, with the fitted alpha against 1;
    (c) the consistency check per level: |E(coarse of l) - E(fine of l-1)| over its standard-error bound,
        with the line at 3 above which the levels' laws disagree;
    (d) the kurtosis of P_l - P_{l-1} per level;
    levels in tokens alike, against the token level; a multi-index run (levels = both) instead shows, per index
    (a, b), log2 Var and log2 |E| of the mixed differences, the samples and the cost per sample.
With two or more files (runs of one problem at several eps, method mlmc and mc):
    (e) eps^2 x work against eps, per method: the modelled steps (filled) and the measured seconds (open),
        the fitted exponent of work against eps in the legend (MLMC: -2 up to a log^2; plain MC: -3);
    (f) every estimate with its 95% sampling interval, per eps and method: MLMC and MC must agree.
A summary (per file: method, eps, estimate, levels, work; the fitted exponents) is printed on stdout, then the
path written (default: the first RESULT with .h5 -> .png).

Errors (missing file, not HDF5, not an mlmc result, a missing or empty dataset, text where a number belongs, no
file of method mlmc, a result whose status is not complete without --allow-partial) end with a one-line message
"mlmc.py: error: ..." on stderr and exit status 2. With --allow-partial an unfinished run is drawn, marked
"partial (status: X)" (an unfinished run has no /mlmc group yet, which is then the error).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("mlmc.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, common_parameters, interval_verdict,  # noqa: E402
                       open_run, read_datasets, read_numbers, readable_log_axis, run_parameters, save_figure,
                       set_title, study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

PROG = "mlmc.py"
DATASETS = ("level", "token_level", "layers", "tokens", "samples", "mean_y", "var_y", "mean_p", "var_p", "kurtosis", "consistency_ratio",
            "cost", "seconds")
NUMBERS = ("estimate", "standard_error", "bias", "eps", "theta", "converged", "alpha", "alpha_error", "beta",
           "beta_error", "beta_predicted", "work", "mc_work", "work_ratio", "seconds", "mc_seconds")
SHAPES = {name: ("levels",) for name in DATASETS}
Z95 = 1.96


class ResultError(Exception):
    """A file that cannot be read or is not an mlmc result."""


def read_result(path, allow_partial=False):
    """A dict of the /mlmc datasets and attributes of an mlmc result."""
    h5, status = open_run(path, ResultError, allow_partial, "mlmc")
    with h5:
        g = study_group(h5, path, "mlmc", "mlmc", ResultError)
        out = {"path": path, "status": status, "parameters": run_parameters(h5, path, ResultError),
               "method": to_str(g.attrs.get("method", "")), "observable": to_str(g.attrs.get("observable", "")),
               "levels": to_str(g.attrs.get("levels", "depth"))}
        out.update(read_datasets(g, path, DATASETS, ResultError, np.float64))
        numbers = read_numbers(g, path, NUMBERS, ResultError)
        out["total_seconds"] = numbers.pop("seconds")  # the attribute; the dataset "seconds" is per level
        out.update(numbers)
        # The MLP width of the paths (0: the infinite-width layer; files written before the key have none).
        width = read_numbers(g, path, ("width",), ResultError, required=False)["width"]
        out["width"] = int(width) if np.isfinite(width) and width > 0 else 0
    check_shapes(path, out, SHAPES, ResultError, "/mlmc/")
    if out["method"] not in ("mlmc", "mc"):
        raise ResultError(f"{path}: attribute /mlmc@method is '{out['method']}', not mlmc or mc")
    return out


def default_output(path):
    """RESULT.h5 -> RESULT.png."""
    return path[:-3] + ".png" if path.endswith(".h5") else path + ".png"


def exponent(eps, work):
    """Least-squares slope of log work against log eps, or NaN with fewer than two distinct eps."""
    eps, work = np.asarray(eps, float), np.asarray(work, float)
    if len(np.unique(eps)) < 2:
        return float("nan")
    return float(np.polyfit(np.log(eps), np.log(work), 1)[0])


NAMES = {"depth": "MLMC", "tokens": "MLMC in N", "both": "MIMC", "mc": "plain MC"}
COLOURS = {"MLMC": "tab:blue", "MLMC in N": "tab:green", "MIMC": "tab:purple", "plain MC": "tab:orange"}


def estimator(r):
    """The estimator's name: MLMC (levels in depth), MLMC in N, MIMC or plain MC; at a finite width with ", m = M"
    (runs of different widths are different models, each with its own complexity)."""
    name = NAMES["mc"] if r["method"] == "mc" else NAMES.get(r["levels"], r["levels"])
    return name + (f", m = {r['width']}" if r.get("width", 0) > 0 else "")


def colour(name):
    """An estimator's colour: its kind's (the name before any ", m = ")."""
    return COLOURS.get(name.split(",")[0], "tab:gray")


def complexity(results):
    """{estimator: (eps, modelled work, measured seconds)} sorted by eps."""
    out = {}
    for name in sorted({estimator(r) for r in results}):
        rs = sorted((r for r in results if estimator(r) == name), key=lambda r: r["eps"])
        out[name] = (np.array([r["eps"] for r in rs]), np.array([r["work"] for r in rs]),
                     np.array([r["total_seconds"] for r in rs]))
    return out


def exponent_text(eps, work, prefix):
    """' ~ eps^x.xx' of the fitted exponent, or nothing with fewer than two distinct eps."""
    x = exponent(eps, work)
    return "" if np.isnan(x) else f"{prefix} ~ eps^{x:.2f}"


def flag(r, rate):
    """' DISAGREES' when the 95% interval of a fitted rate excludes its prediction 1, as the console says it."""
    predicted = r["beta_predicted"] if rate == "beta" else 1.0
    disagrees, _ = interval_verdict(r[rate] - Z95 * r[f"{rate}_error"], r[rate] + Z95 * r[f"{rate}_error"], predicted)
    return "  DISAGREES" if disagrees else ""


def index_panels(axes, r):
    """A multi-index result r over (a, b): log2 of the variances and of |means| of the mixed differences, the
    samples and the modelled cost per sample, each index a cell."""
    a, b = r["level"].astype(int), r["token_level"].astype(int)
    panels = ((np.log2(r["var_y"]), r"$\log_2$ Var $\Delta_{a,b}$"),
              (np.log2(np.where(r["mean_y"] != 0, np.abs(r["mean_y"]), np.nan)), r"$\log_2 |E \Delta_{a,b}|$"),
              (np.log10(r["samples"]), r"$\log_{10}$ samples $N_{a,b}$"),
              (np.log10(r["cost"]), r"$\log_{10}$ cost per sample (steps)"))
    for axis, (values, title) in zip([x for row in axes for x in row], panels):
        grid = np.full((b.max() + 1, a.max() + 1), np.nan)
        grid[b, a] = values
        image = axis.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
        for i, j, v in zip(a, b, values):
            axis.text(i, j, f"{v:.1f}", ha="center", va="center", fontsize=7, color="white")
        axis.figure.colorbar(image, ax=axis)
        axis.set_xlabel(r"depth index a ($L = L_0 2^a$)")
        axis.set_ylabel(r"token index b ($N = N_0 2^b$)")
        axis.set_title(title, fontsize=10)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))


def levels_panels(axes, r):
    """Giles' four panels of multilevel result r (levels in depth or in tokens)."""
    if r["levels"] == "both":
        index_panels(axes, r)
        return
    (ax, bx), (cx, dx) = axes
    for axis in (ax, bx, cx, dx):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    lv = r["token_level"] if r["levels"] == "tokens" else r["level"]
    fine = lv >= 1
    ax.plot(lv[fine], np.log2(r["var_y"][fine]), "o-", label=r"$P_\ell - P_{\ell-1}$")
    ax.plot(lv, np.log2(r["var_p"]), "s--", label=r"$P_\ell$")
    ax.set_xlabel(r"level $\ell$ (tokens $N_0 2^\ell$)" if r["levels"] == "tokens" else r"level $\ell$ (depth $L_0 2^\ell$)")
    ax.set_ylabel(r"$\log_2$ variance")
    ax.set_title(f"beta = {r['beta']:.3f} +- {r['beta_error']:.3f} (predicted {r['beta_predicted']:g}){flag(r, 'beta')}",
                 fontsize=10)
    ax.legend(fontsize=8)
    ay = np.abs(r["mean_y"][fine])
    bx.plot(lv[fine], np.log2(np.where(ay > 0, ay, np.nan)), "o-", label=r"$|E(P_\ell - P_{\ell-1})|$")
    bx.plot(lv, np.log2(np.abs(r["mean_p"])), "s--", label=r"$|E P_\ell|$")
    bx.set_title(f"alpha = {r['alpha']:.3f} +- {r['alpha_error']:.3f} (predicted 1){flag(r, 'alpha')}", fontsize=10)
    bx.set_xlabel(r"level $\ell$")
    bx.set_ylabel(r"$\log_2$ |mean|")
    bx.legend(fontsize=8)
    cx.plot(lv[fine], r["consistency_ratio"][fine], "o-", color="tab:green")
    cx.axhline(3, color="tab:red", ls="--", lw=1, label="3: the levels' laws disagree")
    cx.set_ylim(0, max(3.5, float(np.nanmax(r["consistency_ratio"])) * 1.15 if fine.any() else 3.5))
    cx.set_xlabel(r"level $\ell$")
    cx.set_ylabel("consistency / its s.e. bound")
    cx.set_title("consistency check", fontsize=10)
    cx.legend(fontsize=8, loc="upper left")
    dx.plot(lv[fine], r["kurtosis"][fine], "o-", color="tab:purple")
    dx.set_xlabel(r"level $\ell$")
    dx.set_ylabel(r"kurtosis of $P_\ell - P_{\ell-1}$")
    dx.set_title(f"{int(r['samples'].sum())} samples, levels {int(lv[0])}..{int(lv[-1])}", fontsize=10)


def complexity_panels(ex, fx, results):
    """eps^2 x work against eps per method (steps on the left axis, seconds on the right), and every estimate
    with its interval."""
    sx = ex.twinx()
    lines = []
    for name, (eps, work, seconds) in complexity(results).items():
        c = colour(name)
        lines += ex.loglog(eps, eps ** 2 * work, "o-", color=c, label=f"{name}: steps{exponent_text(eps, work, ', work')}")
        lines += sx.loglog(eps, eps ** 2 * seconds, "s:", color=c, mfc="none",
                           label=f"{name}: seconds{exponent_text(eps, seconds, ',')}")
    ex.set_xlabel("eps (target RMSE)")
    ex.set_ylabel(r"eps$^2$ x work (modelled steps, filled)")
    sx.set_ylabel(r"eps$^2$ x seconds (measured, open)")
    ex.set_title("complexity", fontsize=10)
    # The curves in the lower half of each axis (its log range doubled upwards): the legend takes the upper half,
    # whatever the measured seconds are.
    for axis, values in ((ex, [l.get_ydata() for l in lines[0::2]]), (sx, [l.get_ydata() for l in lines[1::2]])):
        v = np.concatenate(values) if values else np.array([])
        v = v[np.isfinite(v) & (v > 0)]
        if v.size:
            lo, hi = v.min() / 1.3, v.max() * 1.3
            axis.set_ylim(lo, hi * (hi / lo) * 2)
    for axis in (ex.xaxis, ex.yaxis, sx.yaxis):
        readable_log_axis(axis)
    ex.legend(lines, [x.get_label() for x in lines], fontsize=7, loc="upper center")
    ordered = sorted(results, key=lambda r: (r["eps"], estimator(r)))
    for k, r in enumerate(ordered):
        fx.errorbar([k], [r["estimate"]], yerr=[Z95 * r["standard_error"]], fmt="o", color=colour(estimator(r)),
                    capsize=3)
    fx.set_xticks(range(len(ordered)))
    labels = [f"{estimator(r)}\n{r['eps']:g}" for r in ordered]
    if len(set(labels)) < len(labels):  # runs of one estimator and eps (other decks or keys): name the files too
        labels = [f"{label}\n{os.path.basename(r['path'])}" for label, r in zip(labels, ordered)]
    fx.set_xticklabels(labels, fontsize=7)
    fx.set_ylabel("estimate (95% sampling interval)")
    fx.set_title("every estimate, by eps and estimator", fontsize=10)


def make_figure(results):
    """The figure of results (read_result of each file): four panels, two more for several files."""
    multilevel = [r for r in results if r["method"] == "mlmc"]
    if not multilevel:
        raise ResultError("no file of method mlmc: the level panels need one (mc files only compare with it)")
    r = min(multilevel, key=lambda x: x["eps"])  # the most samples
    several = len(results) > 1
    fig, axes = plt.subplots(2, 3 if several else 2, figsize=(17 if several else 11.5, 8.5))
    levels_panels([row[:2] for row in axes], r)
    if several:
        complexity_panels(axes[0][2], axes[1][2], results)
    params = common_parameters(x["parameters"] for x in results)
    status = next((x["status"] for x in results if x["status"] != "complete"), "complete")
    name = os.path.basename(r["path"]) + (f" and {len(results) - 1} more" if several else "")
    set_title(fig, "mlmc", params, name, status, extra=(f"E[{r['observable']}(X_T)]",))
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


def summarize(paths, output, allow_partial=False):
    """Read the results, print their summary, write the figure; return [the path written]."""
    results = [read_result(p, allow_partial) for p in paths]
    for r in results:
        print(f"{os.path.basename(r['path'])}: {r['method']}, eps {r['eps']:g}: E[{r['observable']}] = "
              f"{r['estimate']:.6g} +- {r['standard_error']:.2g}, {r['levels']} levels, {len(r['level'])} indices, "
              f"work {r['work']:.4g} steps, {r['total_seconds']:.3g} s" +
              (f" (plain MC {r['mc_work']:.4g} steps: {r['work_ratio']:.1f}x)" if r["method"] == "mlmc" and r["mc_work"] > 0
               else ""))
    for name, (eps, work, seconds) in complexity(results).items():
        if len(np.unique(eps)) >= 2:
            print(f"{name}: work ~ eps^{exponent(eps, work):.2f} (steps), eps^{exponent(eps, seconds):.2f} (seconds)")
    out = output or default_output(paths[0])
    fig = make_figure(results)
    save_figure(fig, out, next((x["status"] for x in results if x["status"] != "complete"), "complete"), dpi=110)
    return [out]


ARGUMENTS = ((("results",), {"nargs": "+"}),
             (("-o", "--output"), {"help": "PNG to write (default: the first RESULT with .h5 -> .png)"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS, lambda a: summarize(a.results, a.output, a.allow_partial),
                    argv)


if __name__ == "__main__":
    sys.exit(main())
