#!/usr/bin/env python3
"""One self-contained HTML page of a directory of tokdyn run files: every figure the post-processing
scripts make for them, each run's parameters, and the fitted numbers next to their predictions.

Usage:
    report.py DIR [-o REPORT.html] [--allow-partial]

DIR: run files (*.h5, and unfinished *.h5.part) of any mix of commands. A section per file:
    transformer, sde   plot_run.py's figure; E_beta and |mean x| at the first and last step
    meanfield          plot_meanfield.py's figure; mass conservation and positivity
    spectrum           spectrum.py's figure; |lambda_1|, gap, converged pairs, largest residual
    power              power.py's figure; the fitted error ratio next to the closed form, the final state
    synchronize        synchronization.py's figure; the decay rate of E[E_beta] against the bound lambdabar'
    mlmc               mlmc.py's level panels; the estimate, the fitted alpha and beta against 1, the work against
                       plain Monte Carlo
    phase              phase.py's diagrams and cuts; per cut time, the smallest beta whose density at zero passes 1/2
    lyapunov           the measured slopes of E log|X-Y|, Var log|X-Y|, log E|X-Y|^2 against lambda_1,
                       kappa(1) + kappa'(1), lambdabar (no script draws a lyapunov file: numbers only)
    markov             focus_dilution.py's stage and PCA figures; the onsets, t_I against its prediction
and a section per group of files:
    converge           convergence.py's fit of the files of each study: every metric's slope against -1
                       (depth, width) or against the bound slope (tokens)
    train              training.py's figures and group table; the biases' effect per optimizer
    lens               lens.py's figure of all lens runs; |lambda_1(F)| and the alignment per layer, first and last
                       point
    markov sweep       focus_dilution.py's sweep fit where the markov runs differ in eps or delta only:
                       the stage-I slope against 1/sigma* (eps), the exponent p against 1 (delta)
    paper figures      paper_figures.py's grid and Fig. 1 figures of the runs named as grid.sbatch names them
The numbers are the scripts' own (their functions are called, nothing is recomputed here). A measured value
with a 95% interval is flagged "DISAGREES" (in red) where the interval excludes its prediction, or lies
above a bound, as tokdyn's console flags it (tokdyn_h5.interval_verdict). Each section shows the run's
parameters (the figures' title line, and the whole resolved deck folded).

The figures are embedded as PNG (base64 data URIs): the page needs no other file. Files the report cannot
use (another command's, a checkpoint, an unfinished run without --allow-partial, a file that is not HDF5 or
lacks data a script needs) are listed at the end with the reason. With --allow-partial the unfinished runs
are drawn too, marked "partial (status: X)". The path written is printed (default DIR/report.html).

Errors (DIR missing, or no file in it the report can use) end with one line "report.py: error: ..." on
stderr and exit status 2.
"""

import base64
import datetime
import glob
import html
import io
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import PLOTTING, require_modules  # noqa: E402

# One line naming what is missing, before numpy, h5py, matplotlib and scipy (the scripts' fits) load.
require_modules("report.py", PLOTTING + ("scipy",))

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, cli_main, common_parameters, interval_verdict, open_h5,  # noqa: E402
                       open_run, parameter_text, plural, read_datasets, require_attributes, run_parameters, run_status,
                       save_figure, study_group, to_scalar, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import convergence  # noqa: E402
import focus_dilution  # noqa: E402
import lens  # noqa: E402
import paper_figures  # noqa: E402
import phase  # noqa: E402
import plot_meanfield  # noqa: E402
import plot_run  # noqa: E402
import power  # noqa: E402
import spectrum  # noqa: E402
import mlmc  # noqa: E402
import synchronization  # noqa: E402
import training  # noqa: E402

PROG = "report.py"
DPI = 90  # the figures' resolution in the page: sharp at 1200 px wide, a few hundred kB each
SNAPSHOTS = 4  # plot_run.py's default


class ReportError(Exception):
    """A directory the report cannot be made of."""


def fmt(value, spec=".4g"):
    """A number for the tables ('?' for None or NaN)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "?"
    return format(value, spec)


def interval_text(value, low, high):
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def row(quantity, measured, predicted="", verdict="", disagrees=False):
    """A line of a section's table: what, measured, predicted, the verdict, whether it is flagged."""
    return {"quantity": quantity, "measured": measured, "predicted": predicted, "verdict": verdict,
            "disagrees": disagrees}


def checked_row(quantity, value, low, high, predicted, at_most=False, predicted_text=None):
    """A row of a measured value with its 95% interval against a prediction (or a bound: at_most)."""
    disagrees, verdict = interval_verdict(low, high, predicted, at_most)
    shown = predicted_text or (f"at most {predicted:.4g}" if at_most else f"{predicted:.4g}")
    return row(quantity, interval_text(value, low, high), shown, ("DISAGREES: " if disagrees else "") + verdict,
               disagrees)


def figure_data(fig, status):
    """(base64 PNG, the height in the PNG's pixels of its smallest text) of the figure (save_figure: marked
    partial unless status is complete); closes it. The page scales a wide figure down: the text size tells
    whether it stays readable (tests/postprocess/check_report_page.py)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    buffer = io.BytesIO()
    save_figure(fig, buffer, status, dpi=DPI)
    return base64.b64encode(buffer.getvalue()).decode("ascii"), min(sizes, default=0) * DPI / 72


def section(title, kind, status, params=None, command="", deck="", files=(), figures=(), rows=(), notes=()):
    """A section of the page. figures: [(caption, figure_data(...))]; rows: [row(...)]."""
    return {"title": title, "kind": kind, "status": status, "parameters": parameter_text(command, params or {}),
            "deck": deck, "files": list(files), "figures": list(figures), "rows": list(rows), "notes": list(notes)}


def deck_text(path):
    """The resolved deck of a run file, for the folded view."""
    with open_h5(path, ReportError) as h5:
        return to_str(h5.attrs["deck"]) if "deck" in h5.attrs else ""


# --------------------------------------------------------------------------------- one file, one section

def steps_section(path, allow_partial):
    """transformer and sde runs: plot_run.py."""
    run = plot_run.read_run(path, allow_partial)
    steps, label = plot_run.steps_axis(run, "diagnostics")
    rows = []
    if len(steps):
        energy, order = run["diagnostics/energy"], run["diagnostics/order_parameter"]
        at = "t" if label == "time t" else "layer"
        rows = [row(f"E_beta at {at} {steps[0]:g} -> {steps[-1]:g}", f"{fmt(energy[0])} -> {fmt(energy[-1])}"),
                row(f"|mean x| at {at} {steps[0]:g} -> {steps[-1]:g}", f"{fmt(order[0])} -> {fmt(order[-1])}")]
    return section(os.path.basename(path), run["command"], run["status"], run["parameters"], run["command"],
                   deck_text(path), [path], [("plot_run.py", figure_data(plot_run.make_figure(run, SNAPSHOTS),
                                                                          run["status"]))], rows)


def meanfield_section(path, allow_partial):
    run = plot_meanfield.read_run(path, allow_partial)
    grid = "density" in run
    smallest = float(np.min(run["min_density"]))
    rows = [row("max |mass - 1| over time", fmt(float(np.max(np.abs(run["mass"] - 1))), ".2e"), "0 (conserved)"),
            row("smallest " + ("density" if grid else "point mass"), fmt(smallest), ">= 0 (positivity)",
                "DISAGREES: negative" if smallest < 0 else "", smallest < 0),
            row("E_beta at t = 0 -> T", f"{fmt(run['energy'][0])} -> {fmt(run['energy'][-1])}")]
    return section(os.path.basename(path), "meanfield", run["status"], run["parameters"], "meanfield",
                   deck_text(path), [path],
                   [("plot_meanfield.py", figure_data(plot_meanfield.make_figure(run), run["status"]))], rows)


def spectrum_section(path, allow_partial):
    r = spectrum.read_run(path, allow_partial)
    layers = spectrum.layer_summary(r)
    if not layers:
        raise spectrum.ResultError(f"{path}: /spectrum holds no layer")
    a = r["attrs"]
    l1 = np.array([x["abs_lambda1"] for x in layers])
    gap = np.array([x["gap"] for x in layers])
    res = np.array([x["max_residual"] for x in layers])
    lead = "|1 + lambda_1|" if a["residual"] else "|lambda_1|"
    rows = [row(f"{lead} over the layers", f"{fmt(np.nanmin(l1))} .. {fmt(np.nanmax(l1))}"),
            row("spectral gap over the layers", f"{fmt(np.nanmin(gap))} .. {fmt(np.nanmax(gap))}"),
            row("complex leading pair", f"{sum(x['complex_leading'] for x in layers)} of {len(layers)} layers"),
            row("converged pairs, fewest", f"{min(x['converged'] for x in layers)}", f"nev = {a['nev']}"),
            row("largest relative residual", fmt(np.nanmax(res) if np.isfinite(res).any() else math.nan, ".2e"),
                f"tol = {a.get('tol', '?')}")]
    return section(os.path.basename(path), "spectrum", r["status"], r["parameters"], "spectrum", deck_text(path),
                   [path], [("spectrum.py", figure_data(spectrum.make_figure(r, layers), r["status"]))], rows,
                   [f"source: {a['source']}"] if "source" in a else [])


def power_section(path, allow_partial):
    r = power.read_result(path, allow_partial)
    name = power.ratio_name(bool(r["residual"]), bool(r["pair"][-1])).replace("\\,", "").replace("\\", "")
    closed, fitted = r["error_ratio_closed_form"], r["error_ratio"]
    rows = [row("error ratio per layer (fit over the later layers)", fmt(fitted, ".6f"),
                f"{name} = {fmt(closed, '.6f')}", f"relative difference {fmt(fitted / closed - 1, '+.2e')}"),
            row("final state", r["state"]),
            row("alignment gamma at the last layer", fmt(r["gamma_mean"][-1], ".6f"),
                f"random direction: {fmt(r['baseline'], '.4f')}"),
            row("mean rho (tilt towards v_1)", fmt(r["rho_mean"], ".4f"), "> 1/2")]
    if r["steer"] is not None:
        s = r["steer"]
        k = int(np.argmax(s["strength"]))
        rows.append(row(f"steering: min alignment with u at c = {s['strength'][k]:g}",
                        fmt(s["alignment_min"][k], ".6f")))
    return section(os.path.basename(path), "power", r["status"], r["parameters"], "power", deck_text(path), [path],
                   [("power.py", figure_data(power.make_figure(r), r["status"]))], rows)


def synchronize_section(path, allow_partial):
    r = synchronization.read_result(path, allow_partial)
    rate, low, high = r["decay_rate"]
    rows = [checked_row(f"decay rate of log E[E_beta] over t >= {r['fit_start']:g} (95% bootstrap)", rate, low, high,
                        r["lambdabar_prime"], at_most=True,
                        predicted_text=f"at most lambdabar' = {r['lambdabar_prime']:.4f} (Thm 1.4)"),
            row("last layer: pairs with cos > c", fmt(float(r["aligned_fraction"].mean()), ".4f"),
                f"c = {r['cluster_cosine']:g}, mean over {len(r['aligned_fraction'])} replicas"),
            row("last layer: pairs with cos < -c", fmt(float(r["antipodal_fraction"].mean()), ".4f"))]
    return section(os.path.basename(path), "synchronize", r["status"], r["parameters"], "synchronize",
                   deck_text(path), [path],
                   [("synchronization.py", figure_data(synchronization.make_figure(r), r["status"]))], rows,
                   [r["notes"]] if r["notes"] else [])


def mlmc_section(path, allow_partial):
    r = mlmc.read_result(path, allow_partial)
    rows = [row(f"E[{r['observable']}(X_T)] ({'multilevel' if r['method'] == 'mlmc' else 'plain Monte Carlo'})",
                f"{fmt(r['estimate'], '.6g')} +- {fmt(r['standard_error'], '.2g')}",
                f"eps = {r['eps']:g}", "converged" if r["converged"] else "NOT converged: mlmc.max_levels reached",
                not r["converged"])]
    figures = []
    if r["method"] == "mlmc":
        for rate in ("alpha", "beta"):
            e = 1.96 * r[f"{rate}_error"]
            rows.append(checked_row(f"fitted {rate} (95%)", r[rate], r[rate] - e, r[rate] + e, 1.0))
        rows.append(row("work: multilevel against plain Monte Carlo at the finest depth",
                        f"{fmt(r['work'])} against {fmt(r['mc_work'])} steps", f"{fmt(r['work_ratio'], '.1f')}x"))
        figures = [("mlmc.py", figure_data(mlmc.make_figure([r]), r["status"]))]
    return section(os.path.basename(path), "mlmc", r["status"], r["parameters"], "mlmc", deck_text(path), [path],
                   figures, rows)


def phase_section(path, allow_partial):
    r = phase.read_result(path, allow_partial)
    records = phase.cut_records(r, None)
    order = np.argsort(r["beta"])
    beta = r["beta"][order]
    rows = []
    for k in records:
        d = r["density"][k][order]
        b = phase.first_above(beta, d)
        rows.append(row(f"t = {r['time'][k]:.4g}: density at zero, beta {beta[0]:.4g} / {beta[-1]:.4g}",
                        f"{d[0]:.4f} / {d[-1]:.4f}",
                        f"above 1/2 from beta = {b:.4g}" if b is not None else "nowhere above 1/2"))
    return section(os.path.basename(path), "phase", r["status"], r["parameters"], "phase", deck_text(path), [path],
                   [("phase.py", figure_data(phase.make_figure(r, records), r["status"]))], rows)


# The measured slopes of a lyapunov file next to what they predict (src/studies/lyapunov_study.cpp).
LYAPUNOV = (("slope_mean_log", "E log|X-Y|", "lambda1", "lambda_1"),
            ("slope_var_log", "Var log|X-Y|", "var_rate", "kappa(1) + kappa'(1)"),
            ("slope_log_mean_square", "log E|X-Y|^2", "lambdabar", "lambdabar"))


def lyapunov_section(path, allow_partial):
    h5, status = open_run(path, ReportError, allow_partial, "lyapunov")
    with h5:
        g = study_group(h5, path, "lyapunov", "lyapunov", ReportError)
        require_attributes(g, path, [p for _, _, p, _ in LYAPUNOV], ReportError)
        predicted = {p: float(to_scalar(g.attrs[p])) for _, _, p, _ in LYAPUNOV}
        simulated = all(name in g for name, _, _, _ in LYAPUNOV)
        slopes = read_datasets(g, path, [n for n, _, _, _ in LYAPUNOV], ReportError, float) if simulated else {}
        params = run_parameters(h5, path, ReportError)
    rows = []
    for name, label, key, what in LYAPUNOV:
        if simulated:
            value, low, high = slopes[name]
            rows.append(checked_row(f"slope of {label} (95% bootstrap)", value, low, high, predicted[key],
                                    predicted_text=f"{what} = {predicted[key]:.4f}"))
        else:
            rows.append(row(f"slope of {label}", "not measured (lyapunov.simulate = false)",
                            f"{what} = {predicted[key]:.4f}"))
    return section(os.path.basename(path), "lyapunov", status, params, "lyapunov", deck_text(path), [path], [], rows,
                   ["no script draws a lyapunov file: its numbers only"])


def markov_section(path, allow_partial):
    r = focus_dilution.read_run(path, allow_partial)
    pca, _ = focus_dilution.make_pca_figure(r)
    figures = [("focus_dilution.py run: stages", figure_data(focus_dilution.make_stage_figure(r), r["status"])),
               ("focus_dilution.py run: PCA of the embeddings", figure_data(pca, r["status"]))]
    rows = [row("stage I onset t_I", fmt(r["t_I"]), f"{fmt(r['t_I_predicted'])} (sigma* = {r['sigma_star']:.6f})",
                f"relative difference {fmt(r['t_I'] / r['t_I_predicted'] - 1, '+.2%')}")]
    for stage in focus_dilution.STAGES[1:]:
        rows.append(row(f"{focus_dilution.STAGE_NAMES[stage]} onset", fmt(r[stage]) if np.isfinite(r[stage])
                        else "not reached"))
    rows.append(row(f"final loss at t = {r['time'][-1]:g}", fmt(float(r["loss"][-1]), ".6f")))
    notes = ["attention mass by token (top 5, in brackets at t = 0): " + "; ".join(
        f"{label} (t = {t:.4g}) " + ", ".join(f"{focus_dilution.plain_token(n)} {m:.3f} [{s:.3f}]" for n, m, s in tokens)
        for label, t, tokens in focus_dilution.token_report(r))]
    return section(os.path.basename(path), "markov", r["status"], r["deck"], "markov", deck_text(path), [path],
                   figures, rows, notes)


SINGLE = {"transformer": steps_section, "sde": steps_section, "meanfield": meanfield_section,
          "spectrum": spectrum_section, "power": power_section, "synchronize": synchronize_section,
          "lyapunov": lyapunov_section, "markov": markov_section, "phase": phase_section,
          "mlmc": mlmc_section}


# ------------------------------------------------------------------------------- groups of files

def converge_sections(paths, allow_partial, skipped):
    """A section per converge study (convergence.py's fit of its files); a study that cannot be fitted sends
    its files to `skipped` with the reason."""
    studies = {}
    for path in paths:
        with open_h5(path, ReportError) as h5:
            study = to_str(h5["converge"].attrs.get("study", "")) if "converge" in h5 else ""
        studies.setdefault(study, []).append(path)
    out = []
    for study, files in sorted(studies.items()):
        try:
            fit = convergence.fit_files(files, allow_partial=allow_partial)
        except convergence.ConvergenceError as exc:
            skipped += [(path, str(exc)) for path in files]
            continue
        refs = dict((key, value) for key, _, value in fit["references"])
        rows = []
        for metric, f in fit["fits"].items():
            label = f"slope of log {metric} against log {convergence.STUDIES[study]['symbol']} (95% bootstrap)"
            if f["slope"] is None:
                rows.append(row(label, "no slope: a mean is not positive"))
            elif study == "tokens":  # the bound: at least as fast, i.e. the slope at most the bound's
                rows.append(checked_row(label, f["slope"], f["ci_low"], f["ci_high"], refs["bound"], at_most=True,
                                        predicted_text=f"bound {refs['bound']:g} (sharp {refs['sharp']:g})"))
            else:
                rows.append(checked_row(label, f["slope"], f["ci_low"], f["ci_high"], refs["expected"]))
        notes = [convergence.comparison_text("bound", fit["comparison"])] if fit["comparison"] else []
        fig = convergence.figure_of(fit)
        out.append(section(f"converge {study} study ({plural(len(files), 'file')})", "converge",
                           fit["status"], fit["parameters"], "converge", deck_text(files[0]), files,
                           [("convergence.py", figure_data(fig, fit["status"]))], rows, notes))
    return out


def train_sections(paths, allow_partial, skipped):
    """One section of the train runs: training.py's table, the biases' effects and its three figures."""
    try:
        runs = [training.read_run(path, allow_partial) for path in paths]
    except training.ResultError as exc:
        skipped += [(path, str(exc)) for path in paths]
        return []
    lines = []
    table, effects = training.summarise(runs, lines)
    align = training.alignment_summary(runs, lines)
    status = "complete" if all(r["status"] == "complete" for r in runs) else "partial"
    several = len({g["activation"] for g in table}) > 1
    rows = [row(f"{g['activation'].upper() + ', ' if several else ''}{g['optimizer']}, {g['symmetry']}: end validation loss (EMA, {plural(len(g['seeds']), 'seed')}, 95%)",
                training.fmt(g["final_val_loss_ema"], g["final_val_loss_ema_ci95"]),
                verdict=f"lowest raw {training.fmt(g['min_val_loss'], g['min_val_loss_ci95'])}") for g in table]
    rows += [row(f"{e['activation'].upper() + ' ' if several else ''}{e['optimizer']}: {e['symmetry']} - symmetric, end EMA ({e['interval']})",
                 training.fmt(e["difference"], e["ci95"]), "", e["verdict"]) for e in effects]
    figures = [(f"training.py: {name}", figure_data(fig, status)) for name, fig in training.figures(runs, align)]
    params = common_parameters(r["parameters"] for r in runs)
    return [section(f"train runs ({plural(len(runs), 'run')})", "train", status, params, "train",
                    deck_text(paths[0]), paths, figures, rows, [line for line in lines if line.startswith("alignment")])]


def lens_sections(paths, allow_partial, skipped):
    """One section of the lens runs: per run and layer |lambda_1(F)| and the alignment at the first and last
    point, and lens.py's figure of them all."""
    try:
        runs = [lens.read_run(path, allow_partial) for path in paths]
        for r in runs:
            if r["step"].size == 0:
                raise lens.ResultError(f"{r['path']}: /lens holds no point")
    except lens.ResultError as exc:
        skipped += [(path, str(exc)) for path in paths]
        return []
    lens.label_runs(runs)
    rows = []
    for r in runs:
        for layer in range(r["lambda1"].shape[1]):
            rows.append(row(f"{r['label']}, layer {layer}: |lambda_1(F)|, step {int(r['step'][0])} -> {int(r['step'][-1])}",
                            f"{fmt(r['lambda1'][0, layer])} -> {fmt(r['lambda1'][-1, layer])}",
                            verdict=f"alignment {r['gamma_mean'][0, layer]:.3f} -> {r['gamma_mean'][-1, layer]:.3f} "
                                    f"(random {r['baseline']:.3f})"))
    status = "complete" if all(r["status"] == "complete" for r in runs) else "partial"
    params = common_parameters(r["parameters"] for r in runs)
    return [section(f"lens runs ({plural(len(runs), 'run')})", "lens", status, params, "lens", deck_text(paths[0]),
                    paths, [("lens.py", figure_data(lens.make_figure(runs), status))], rows)]


def markov_sweep_sections(directory, paths, allow_partial):
    """focus_dilution.py's sweep fit when the markov runs (paths; directory: theirs) differ in eps or delta only
    (else no section)."""
    if len(paths) < 2:
        return []
    runs = [focus_dilution.read_run(path, allow_partial) for path in paths]
    try:
        key = focus_dilution.order_sweep(runs)
    except focus_dilution.ResultError:
        return []  # runs of different experiments, not a sweep: each has its own section
    result, _, lines = focus_dilution.sweep_fit(key, runs)
    rows = []
    if result["kind"] == "eps":
        fit = result["fits"]["t_I"]
        rows.append(checked_row("stage I onset: slope against ln(1/eps) (95% Student)", fit["slope"], fit["low"],
                                fit["high"], fit["prediction"],
                                predicted_text=f"1/sigma* = {fit['prediction']:.4f}"))
        for stage in focus_dilution.STAGES[1:]:
            f = result["fits"][stage]
            rows.append(row(f"{focus_dilution.STAGE_NAMES[stage]}: slope against ln(1/eps)",
                            interval_text(f["slope"], f["low"], f["high"]), "no closed form"))
    else:
        lin = result["linear"]
        rows.append(row("escape rate: kappa of lambda_0 + kappa delta",
                        interval_text(lin["slope"], lin["low"], lin["high"])))
        if "exponent" in result:
            p = result["exponent"]
            rows.append(checked_row("escape rate: exponent p of lambda - lambda(0) ~ delta^p", p["slope"], p["low"],
                                    p["high"], 1.0, predicted_text="1 (Theta(delta))"))
    fig = focus_dilution.make_sweep_figure(runs, result)
    status = focus_dilution.sweep_status(result)
    return [section(f"markov {result['kind']} sweep ({len(runs)} runs over {key})", "markov", status,
                    common_parameters(r["deck"] for r in runs), "markov", "", paths,
                    [("focus_dilution.py sweep", figure_data(fig, status))], rows, lines[:1])]


def paper_sections(directory, usable, allow_partial):
    """paper_figures.py's figures of the grid and Fig. 1 runs among the usable files (none: no section)."""
    try:
        grids, fig1 = paper_figures.find_runs(directory)
    except paper_figures.FigureError:
        return []
    usable = set(usable)
    out = []
    for name, runs, make in ([(deck, runs, paper_figures.make_grid_figure) for deck, runs in sorted(grids.items())]
                             + [("Fig. 1", fig1, None)]):
        used = {key: path for key, path in runs.items() if path in usable}
        if not used:
            continue
        loaded = {key: paper_figures.read_run(path) for key, path in used.items()}
        status = paper_figures.partial_statuses(loaded.values(), allow_partial)
        fig = (make(name, loaded, allow_partial) if make else paper_figures.make_fig1_figure(loaded, allow_partial))
        out.append(section(f"paper figure: {name} ({plural(len(loaded), 'run')})", "transformer", status,
                           files=used.values(), figures=[("paper_figures.py", figure_data(fig, status))]))
    return out


# The page's order: a section per file of these commands (SINGLE) or per group (GROUP), each command's files
# followed by the figures made of several of them (EXTRA).
ORDER = ("transformer", "sde", "meanfield", "synchronize", "phase", "mlmc", "lyapunov", "converge", "spectrum", "power",
         "markov", "train", "lens")
GROUP = {"converge": converge_sections, "train": train_sections, "lens": lens_sections}
EXTRA = {"transformer": paper_sections, "markov": markov_sweep_sections}


# ------------------------------------------------------------------------------------------- the files

def classify(path, allow_partial):
    """(command, None) of a run file the report uses, or (None, the reason it does not)."""
    if path.endswith(".ckpt.h5"):
        return None, "a checkpoint, not a run file"
    try:
        with open_h5(path, ReportError) as h5:
            if to_str(h5.attrs.get("format", "")).startswith("tokdyn-checkpoint"):
                return None, "a checkpoint, not a run file"
            command = to_str(h5.attrs.get("command", ""))
            status = run_status(h5, path)
    except ReportError as exc:
        return None, str(exc)
    if not command:
        return None, "no root attribute 'command': not a tokdyn run file"
    if command not in ORDER:
        return None, f"a tokdyn {command} file: no post-processing script reads it"
    if status != "complete" and not allow_partial:
        return None, f"status is '{status}', not complete (--allow-partial includes it)"
    return command, None


def build(directory, allow_partial):
    """(sections, skipped files [(path, reason)], the number of files looked at) of a directory."""
    if not os.path.isdir(directory):
        raise ReportError(f"no such directory: {directory}")
    paths = sorted(glob.glob(os.path.join(glob.escape(directory), "*.h5"))
                   + glob.glob(os.path.join(glob.escape(directory), "*.h5.part")))
    if not paths:
        raise ReportError(f"{directory} holds no run files (*.h5)")
    by_command, skipped = {}, []
    for path in paths:
        command, reason = classify(path, allow_partial)
        if command is None:
            skipped.append((path, reason))
        else:
            by_command.setdefault(command, []).append(path)
    sections = []
    for command in ORDER:
        files = by_command.get(command, [])
        if command in SINGLE:
            for path in files:
                try:
                    sections.append(SINGLE[command](path, allow_partial))
                except Exception as exc:  # a file the script cannot read: listed, the others still reported
                    skipped.append((path, failure(exc)))
        elif files:
            try:
                sections += GROUP[command](files, allow_partial, skipped)
            except Exception as exc:
                skipped += [(path, failure(exc)) for path in files]
        # Figures of several runs whose own sections stand (above): a failure loses the group's figure only.
        if command in EXTRA:
            unused = {path for path, _ in skipped}
            try:
                sections += EXTRA[command](directory, [p for p in files if p not in unused], allow_partial)
            except Exception as exc:
                skipped.append((f"{directory} ({EXTRA[command].__name__})", failure(exc)))
    if not sections:
        reasons = "; ".join(f"{os.path.basename(p)}: {why}" for p, why in skipped)
        raise ReportError(f"{directory}: no run file the report can use ({reasons})")
    return sections, skipped, len(paths)


def failure(exc):
    """The reason a file is skipped: a script's own error message, else the exception's type and text."""
    known = (plot_run.RunFileError, plot_meanfield.RunError, spectrum.ResultError, power.ResultError,
             synchronization.ResultError, mlmc.ResultError, focus_dilution.ResultError, convergence.ConvergenceError,
             training.ResultError, paper_figures.FigureError, ReportError)
    return str(exc) if isinstance(exc, known) else f"{type(exc).__name__}: {exc}"


# -------------------------------------------------------------------------------------------- the page

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1250px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-top: 2px solid #ccc; padding-top: 0.6em; }
.params { font-family: monospace; background: #f4f4f4; padding: 0.4em; }
img { max-width: 100%; display: block; margin: 0.5em 0; border: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
tr.disagrees td { background: #fbe3e3; } tr.disagrees td.verdict { color: #b00; font-weight: bold; }
.partial { color: #fff; background: #d62728; padding: 0 0.4em; border-radius: 0.3em; }
figcaption { color: #666; font-size: 0.9em; }
"""


def render(directory, sections, skipped, count):
    """The HTML page."""
    e = html.escape
    flagged = sum(r["disagrees"] for s in sections for r in s["rows"])
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>tokdyn report: {e(directory)}</title>", f"<style>{STYLE}</style></head><body>",
           f"<h1>tokdyn report: {e(os.path.abspath(directory))}</h1>",
           f"<p>{count} file(s) looked at, {len(sections)} section(s), {len(skipped)} file(s) not used; "
           f"{flagged} measurement(s) whose interval disagrees with the prediction. Made "
           f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} by postprocess/report.py.</p>", "<ul>"]
    for k, s in enumerate(sections):
        mark = sum(r["disagrees"] for r in s["rows"])
        out.append(f'<li><a href="#s{k}">{e(s["title"])}</a> ({e(s["kind"])})'
                   + (f' <b style="color:#b00">{mark} DISAGREES</b>' if mark else "") + "</li>")
    if skipped:
        out.append('<li><a href="#skipped">files not used</a></li>')
    out.append("</ul>")
    for k, s in enumerate(sections):
        partial = ("" if s["status"] == "complete"
                   else f' <span class="partial">partial (status: {e(s["status"])})</span>')
        out.append(f'<section id="s{k}"><h2>{e(s["title"])}{partial}</h2>')
        if s["parameters"]:
            out.append(f'<p class="params">{e(s["parameters"])}</p>')
        if len(s["files"]) > 1:
            out.append("<p>files: " + ", ".join(e(os.path.basename(f)) for f in s["files"]) + "</p>")
        for note in s["notes"]:
            out.append(f"<p>{e(note)}</p>")
        if s["rows"]:
            out.append("<table><tr><th>quantity</th><th>measured</th><th>predicted</th><th>verdict</th></tr>")
            for r in s["rows"]:
                out.append(f'<tr{" class=disagrees" if r["disagrees"] else ""}><td>{e(r["quantity"])}</td>'
                           f'<td>{e(r["measured"])}</td><td>{e(r["predicted"])}</td>'
                           f'<td class="verdict">{e(r["verdict"])}</td></tr>')
            out.append("</table>")
        for caption, (data, text_px) in s["figures"]:
            out.append(f'<figure><img class="figure" alt="{e(caption)}: {e(s["title"])}" data-text-px="{text_px:.1f}" '
                       f'src="data:image/png;base64,{data}"><figcaption>{e(caption)}</figcaption></figure>')
        if s["deck"]:
            out.append(f"<details><summary>resolved deck</summary><pre>{e(s['deck'])}</pre></details>")
        out.append("</section>")
    if skipped:
        out.append('<section id="skipped"><h2>files not used</h2><table><tr><th>file</th><th>reason</th></tr>')
        out += [f"<tr><td>{e(os.path.basename(p))}</td><td>{e(why)}</td></tr>" for p, why in skipped]
        out.append("</table></section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(args):
    sections, skipped, count = build(args.directory, args.allow_partial)
    output = args.output or os.path.join(args.directory, "report.html")
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(render(args.directory, sections, skipped, count))
    except OSError as exc:
        raise ReportError(f"cannot write {output}: {exc.strerror}") from None
    return [output]


ARGUMENTS = ((("directory",), {"metavar": "DIR", "help": "directory of tokdyn run files"}),
             (("-o", "--output"), {"help": "HTML file to write (default: DIR/report.html)"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ReportError, ARGUMENTS, write_report, argv)


if __name__ == "__main__":
    sys.exit(main())
