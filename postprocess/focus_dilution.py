#!/usr/bin/env python3
"""Figures and fits of `tokdyn markov` runs: the focus-dilution stages (doc/science.md section 8).

Usage:
    focus_dilution.py run RUN.h5 [-o OUT.png] [--allow-partial]
    focus_dilution.py sweep DIR [-o PREFIX] [--allow-partial]
    focus_dilution.py escape DIR [DIR ...] [-o PREFIX] [--allow-partial]

run: the stage figure OUT.png (default RUN.png): (a) loss against ln d, (b) attention entropy over positions
H(a)/log s and over tokens (of the mass per token, / log d),
(c) attention mass per token next to its frequency in the context (the mass at t = 0, when attention
is uniform), (d) alignments cos(u_1(W0), pi), cos(v_1(W1), pi - 1/d), cos_F(Phi, pi pi^T),
cos(u_1(W0), u_1(G)), (e) every singular value of W0, W1, WQ, WK on a log axis, (f) the row norms of W0
and the drifts of the conserved C_m, C_k; the detected stages shaded (I condensation, II focus,
III dilution, IV new direction; the onsets are the file's /markov attributes t_I .. t_IV) and the
predicted t_I dashed. Beside it OUT-pca.png: the rows of W0 (token embeddings) along the flow projected on
the two leading principal components of all of them, and their coordinates against time.

sweep: every run file in DIR (the array tasks of jobscripts/markov-sweep.sh); the swept parameter is
the deck key that differs between them, model.eps or markov.delta.
- eps: each onset t_I .. t_IV against ln(1/eps), fitted by least squares t = a + b ln(1/eps) with the 95%
  interval of b (Student t, n - 2 degrees of freedom), next to the prediction of stage I: b = 1/sigma*
  (t_I = ln(1/(eps^2 m)) / (2 sigma*)), i.e. ln(10)/sigma* per decade of eps; each run's stage-I rate
  against sigma* with its extrapolation to eps -> 0, and its growth of |WQ| before focus against the focus
  rate sigma_max(W0^T H W0).
- delta: the stage-IV escape rate lambda(delta), the slope of ln sigma_2(W0) over the second half of
  [t_III, t_IV] (t_IV: sigma_2(W0) = 0.1 sigma_1(W0); T when not reached), with its 95% interval; the
  fit lambda = lambda_0 + kappa delta, the quadratic lambda = c0 + c1 delta + c2 delta^2 (is there a term
  linear in delta: 0 inside c1's interval?), and the exponent p of lambda - lambda(0) ~ |delta|^p over
  delta > 0 and, where the sweep has them, over delta < 0 (p = 1: a Theta(delta) escape) with the odd part
  (lambda(delta) - lambda(-delta)) / 2; next to t_IV(delta) (the stall at delta = 0).
escape: several delta sweeps (one directory each, e.g. two families c at three eps) side by side: a line
  and a CSV row per sweep (lambda(0), c1, c2, c2 / |c|^2, p) and PREFIX.png (default PREFIX: escape):
  lambda(delta) - lambda(0) against |delta| |c| on log axes with slopes 1 and 2, and lambda against delta |c|.
Writes PREFIX.json, PREFIX.csv (a row per run) and PREFIX.png (default PREFIX: DIR/focus-dilution-KIND)
and prints the fits, each measurement next to its prediction. Every figure's title names the run's
parameters (a sweep's: those its runs share).

Errors (missing file or directory, not HDF5, not a markov run, a run not complete without --allow-partial,
an empty dataset or series of different lengths, text where a number belongs, a sweep whose runs differ in
no or in several keys) end with one line "focus_dilution.py: error: ..." on stderr and exit status 2. A run
that is not complete (checkpointed, failed) lacks the end-of-run results: its stages show as not reached.
"""

import csv
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import PLOTTING, require_modules  # noqa: E402

# One line naming what is missing, before numpy, h5py, matplotlib and scipy (the fits' intervals) load.
require_modules("focus_dilution.py", PLOTTING + ("scipy",))

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, common_parameters, open_run, read_datasets,  # noqa: E402
                       read_numbers, readable_log_axis, run_parameters, save_figure, set_title, study_group,
                       title_for, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "focus_dilution.py"
STAGES = ("t_I", "t_II", "t_III", "t_IV")
STAGE_NAMES = {"t_I": "I condensation", "t_II": "II focus", "t_III": "III dilution", "t_IV": "IV new direction"}
STAGE_COLOURS = ("#dde8f5", "#f9e3cf", "#e2f0d9", "#ecdff5")
DIAGNOSTICS = ("time", "loss", "entropy", "cos_w0_pi", "cos_w1_pi", "cos_phi", "cos_w0_g", "drift_cm", "drift_ck",
               "norm_wq", "norm_wk")
SERIES = ("mass", "sv_w0", "sv_w1", "sv_wq", "sv_wk", "w0_row_norms", "embedding", "pi")
ATTRIBUTES = ("sigma_star", "sigma_1", "t_I_predicted") + STAGES
# The shapes of the /markov series (tokdyn_h5.check_shapes): one row per record of /diagnostics, d tokens, m
# embedding dimensions.
SHAPES = {"mass": ("records", "d"), "sv_w0": ("records", "k"), "sv_w1": ("records", "k1"),
          "sv_wq": ("records", "kq"), "sv_wk": ("records", "kk"), "w0_row_norms": ("records", "d"),
          "embedding": ("records", "d", "m"), "pi": ("d",)}
SWEPT_KEYS = {"model.eps": "eps", "markov.delta": "delta"}
Z95 = 1.96


class ResultError(Exception):
    """A file or directory that cannot be read as markov runs."""


def read_run(path, allow_partial=False, series=True):
    """A markov run file as a dict: the diagnostics, the /markov series (when series), the stage attributes,
    the deck (run_parameters: {"section.key": typed value}) and the status."""
    h5, status = open_run(path, ResultError, allow_partial, "markov")
    with h5:
        g = study_group(h5, path, "markov", "markov", ResultError)
        if "diagnostics" not in h5:
            raise ResultError(f"{path}: missing group /diagnostics")
        out = {"path": path, "status": status, "deck": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(h5["diagnostics"], path, DIAGNOSTICS, ResultError, np.float64))
        if "token_entropy" in h5["diagnostics"]:  # files of tokdyn since 2026-12-06
            out.update(read_datasets(h5["diagnostics"], path, ("token_entropy",), ResultError, np.float64))
        out.update(read_datasets(g, path, SERIES if series else ("sv_w0", "pi"), ResultError, np.float64))
        # A run that is not complete lacks the end-of-run results (the stage onsets): NaN, not reached.
        out.update(read_numbers(g, path, ATTRIBUTES, ResultError, required=status == "complete"))
        # The stage-I rate [value, low, high] and the onsets at half and double each threshold [4, 2, 4]: end-of-run
        # results (files of tokdyn before 2026-12-06 lack the second); NaN when absent.
        out["stage_I_rate"] = np.full(3, np.nan)
        out["onset_sensitivity"] = np.full((4, 2, 4), np.nan)
        out["focus_growth"] = np.full(3, np.nan)  # with the focus rate: files of tokdyn since 2026-12-06
        out["focus_rate"] = float(g.attrs.get("focus_rate", math.nan))
        for name, shape in (("stage_I_rate", (3,)), ("onset_sensitivity", (4, 2, 4)), ("focus_growth", (3,))):
            if name in g:
                value = read_datasets(g, path, (name,), ResultError, np.float64)[name]
                if value.shape != shape:
                    raise ResultError(f"{path}: dataset /markov/{name} has shape {list(value.shape)}, expected "
                                      f"{list(shape)}")
                out[name] = value
        out["criteria"] = to_str(g.attrs.get("stage_criteria", ""))
        # A text's tokens, one a line (a chain's are its state numbers).
        vocabulary = to_str(g.attrs.get("vocabulary", ""))
        out["vocabulary"] = vocabulary.split("\n")[:-1] if vocabulary else []
    # A partial file's series may hold rows past the last recorded time: keep the recorded ones.
    n = len(out["time"])
    for name in SERIES:
        if name in out and out[name].ndim > 1:
            out[name] = out[name][:n]
    sizes = check_shapes(path, out, {name: ("records",) for name in DIAGNOSTICS}, ResultError, "/diagnostics/")
    check_shapes(path, out, SHAPES, ResultError, "/markov/", sizes)
    if out["sv_w0"].shape[1] < 2:
        raise ResultError(f"{path}: dataset /markov/sv_w0 has shape {list(out['sv_w0'].shape)}: fewer than two "
                          f"singular values")
    return out


def fit_line(x, y):
    """Least squares y = a + b x: {slope, low, high, intercept, intercept_low, intercept_high, n} with the 95%
    intervals of the slope and the intercept (Student t with n - 2 degrees of freedom; NaN for n < 3)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 2:
        return {"slope": math.nan, "low": math.nan, "high": math.nan, "intercept": math.nan,
                "intercept_low": math.nan, "intercept_high": math.nan, "n": n}
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    a = float(ym - b * xm)
    half = half_a = math.nan
    if n > 2:
        from scipy import stats

        s2 = float(((y - a - b * x) ** 2).sum()) / (n - 2)
        t = float(stats.t.ppf(0.975, n - 2))
        half = t * math.sqrt(s2 / sxx)
        half_a = t * math.sqrt(s2 * (1 / n + xm * xm / sxx))
    return {"slope": b, "low": b - half, "high": b + half, "intercept": a, "intercept_low": a - half_a,
            "intercept_high": a + half_a, "n": n}


def fit_quadratic(x, y):
    """Least squares y = c0 + c1 x + c2 x^2: {"c0", "c1", "c2": {value, low, high}, "n"} with 95% intervals
    (Student t with n - 3 degrees of freedom; NaN for n < 4)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    out = {f"c{k}": {"value": math.nan, "low": math.nan, "high": math.nan} for k in range(3)}
    out["n"] = n
    if n < 3:
        return out
    design = np.column_stack([np.ones(n), x, x * x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    half = np.full(3, math.nan)
    if n > 3:
        from scipy import stats

        s2 = float(((y - design @ coef) ** 2).sum()) / (n - 3)
        half = float(stats.t.ppf(0.975, n - 3)) * np.sqrt(s2 * np.diag(np.linalg.inv(design.T @ design)))
    for k in range(3):
        out[f"c{k}"] = {"value": float(coef[k]), "low": float(coef[k] - half[k]), "high": float(coef[k] + half[k])}
    return out


def shade_stages(ax, r, label=False):
    """Shade [t_I, t_II), [t_II, t_III), [t_III, t_IV), [t_IV, T] and mark the predicted t_I."""
    end = float(r["time"][-1])
    onsets = [r[s] for s in STAGES]
    for k, (stage, start) in enumerate(zip(STAGES, onsets)):
        if not np.isfinite(start):
            continue
        stop = next((t for t in onsets[k + 1:] if np.isfinite(t)), end)
        ax.axvspan(start, stop, color=STAGE_COLOURS[k], zorder=0, label=STAGE_NAMES[stage] if label else None)
        ax.axvline(start, color="0.4", lw=0.6, zorder=1)
    if np.isfinite(r["t_I_predicted"]):  # a run cut short may lack it
        ax.axvline(r["t_I_predicted"], color="k", ls="--", lw=0.8, zorder=1,
                   label=rf"predicted $t_I$ = {r['t_I_predicted']:.3g}" if label else None)


def save(fig, out, status):
    """Write fig to out (save_figure: marked partial unless status is complete)."""
    save_figure(fig, out, status, dpi=110)


def title_extra(r):
    """What a run's title adds to its parameters: the vocabulary size d and, for the chain, its law pi."""
    extra = [f"d = {len(r['pi'])}"]
    if r["deck"].get("markov.data") != "text":
        extra.append("pi = (" + ", ".join(f"{p:.3g}" for p in r["pi"]) + ")")
    return extra


def run_title(r):
    """The title of a run (title_for, with its file name), as the console prints it."""
    return title_for("markov", r["deck"], os.path.basename(r["path"]), r["status"], title_extra(r))


def set_run_title(fig, r, extra=()):
    """The title of a run's figure (set_title: the file name in the footer)."""
    set_title(fig, "markov", r["deck"], os.path.basename(r["path"]), r["status"], title_extra(r) + list(extra),
              fontsize="medium")


def make_stage_figure(r):
    """The six-panel stage figure of run r: three rows of two, wide enough to read at a page's width."""
    t = r["time"]
    d = len(r["pi"])
    fig, axes = plt.subplots(3, 2, figsize=(12, 12), sharex=True)
    (a, b), (c, e), (f, g) = axes
    for ax in axes.flat:
        shade_stages(ax, r, label=ax is a)
    a.plot(t, r["loss"], color="k", label="loss")
    a.axhline(math.log(d), color="tab:red", ls=":", label=r"$\ln d$")
    a.set_ylabel("loss")
    b.plot(t, r["entropy"], color="tab:purple", label=r"over positions, $H(a)/\log s$")
    if "token_entropy" in r and len(r["token_entropy"]) == len(t):
        b.plot(t, r["token_entropy"], color="tab:brown", label=r"over tokens, $H(\mathrm{mass})/\log d$")
    b.set_ylabel("attention entropy")
    b.legend(fontsize="small", loc="center right")
    colours = plt.cm.tab10(np.arange(d) % 10)
    shown = range(min(d, 10))
    for i in shown:
        c.plot(t, r["mass"][:, i], color=colours[i], label=f"token {i}")
        c.axhline(r["mass"][0, i], color=colours[i], ls=":", lw=0.8)
    c.set_ylabel("attention mass per token (dotted: frequency)")
    c.legend(fontsize="small", ncol=2)
    for name, label in (("cos_w0_pi", r"cos($u_1(W_0)$, $\pi$)"), ("cos_w1_pi", r"cos($v_1(W_1)$, $\pi - 1/d$)"),
                        ("cos_phi", r"cos$_F(\Phi$, $\pi\pi^T)$"), ("cos_w0_g", r"cos($u_1(W_0)$, $u_1(G)$)")):
        e.plot(t, r[name], label=label)
    e.set_ylabel("alignment")
    e.legend(fontsize="small")
    for name, colour, label in (("sv_w0", "tab:blue", r"$W_0$"), ("sv_w1", "tab:orange", r"$W_1$"),
                                ("sv_wq", "tab:green", r"$W_Q$"), ("sv_wk", "tab:red", r"$W_K$")):
        sv = r[name]
        for k in range(sv.shape[1]):
            f.semilogy(t, np.maximum(sv[:, k], 1e-300), color=colour, lw=1.6 if k == 0 else 0.6,
                       label=label if k == 0 else None)
    f.set_ylabel("singular values (thick: the largest)")
    f.set_xlabel("flow time t")
    # The limits from the values above round-off of the largest (a singular value exactly 0, clipped to 1e-300 to
    # be drawn, would stretch the autoscaled axis over 300 empty decades and its headroom to Inf), with margins of
    # 5 % of the decades, and headroom for the legend above the largest values.
    values = np.concatenate([np.ravel(r[name]) for name in ("sv_w0", "sv_w1", "sv_wq", "sv_wk")])
    top = np.nanmax(values)
    if np.isfinite(top) and top > 0:
        bottom = np.nanmin(values[values >= top * 1e-18])
        span = max(top / bottom, 10.0)
        low, high = bottom / span ** 0.05, top * span ** 0.05
        f.set_ylim(low, high * (high / low) ** 0.2)
    f.legend(fontsize="small", loc="upper center", ncol=4)
    for i in shown:
        g.semilogy(t, r["w0_row_norms"][:, i], color=colours[i], label=f"|row {i} of W0|")
    # The drifts are 0 at t = 0 (no point on a log axis there).
    drift = np.abs(np.stack([r["drift_cm"], r["drift_ck"]]))
    drift[drift <= 0] = np.nan
    g.semilogy(t, drift[0], "k--", lw=0.8, label=r"relative drift of $C_m$")
    g.semilogy(t, drift[1], "k:", lw=0.8, label=r"relative drift of $C_k$")
    g.set_xlabel("flow time t")
    g.set_ylabel("row norms of W0; relative drifts")
    readable_log_axis(g.yaxis)
    g.legend(fontsize="small", ncol=2)
    onsets = [f"{s} = {r[s]:.4g}" if np.isfinite(r[s]) else f"{s} not reached" for s in STAGES]
    set_run_title(fig, r, ["onsets: " + onsets[0]] + onsets[1:]
                  + [f"predicted t_I = {r['t_I_predicted']:.4g} (sigma* = {r['sigma_star']:.5f})"])
    a.legend(fontsize="small", loc="center right")  # between ln d and the plateaus
    fig.tight_layout()
    return fig


def stage_figure(r, out):
    """The stage figure of run r, written to out."""
    save(make_stage_figure(r), out, r["status"])


def make_pca_figure(r):
    """(figure, shares of the variance): the rows of W0 along the flow on their two leading principal
    components (all times and tokens together, centred), and the coordinates against time."""
    emb = r["embedding"]  # [R + 1, d, m]
    t = r["time"]
    steps, d, m = emb.shape
    points = emb.reshape(steps * d, m)
    centre = points.mean(axis=0)
    _, sv, vt = np.linalg.svd(points - centre, full_matrices=False)
    share = sv ** 2 / max(float((sv ** 2).sum()), 1e-300)
    proj = (emb - centre) @ vt[:2].T  # [R + 1, d, 2]
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 6))
    colours = plt.cm.tab10(np.arange(d) % 10)
    marks = [(s, np.searchsorted(t, r[s])) for s in STAGES if np.isfinite(r[s])]
    for i in range(min(d, 10)):
        a.plot(proj[:, i, 0], proj[:, i, 1], color=colours[i], label=f"token {i}")
        a.plot(proj[-1, i, 0], proj[-1, i, 1], "o", color=colours[i])
        for s, k in marks:
            k = min(k, steps - 1)
            a.annotate(s.replace("t_", ""), proj[k, i], fontsize="small", color=colours[i])
        b.plot(t, proj[:, i, 0], color=colours[i], label=f"token {i}: PC1")
        b.plot(t, proj[:, i, 1], color=colours[i], ls="--", lw=0.8)
    a.set_xlabel(f"PC1 ({100 * share[0]:.1f} %)")
    a.set_ylabel(f"PC2 ({100 * share[1]:.1f} %)" if len(share) > 1 else "PC2")
    a.set_title("token embeddings (rows of W0) along the flow; labels: stage onsets, dot: the end")
    a.legend(fontsize="small")
    for ax in (b,):
        shade_stages(ax, r, label=True)
    b.set_xlabel("flow time t")
    b.set_ylabel("coordinate (solid PC1, dashed PC2)")
    b.legend(fontsize="small", ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))  # below: the curves fill it
    set_run_title(fig, r)
    fig.tight_layout()
    return fig, share


def pca_figure(r, out):
    """The PCA figure of run r, written to out; returns the shares of the variance."""
    fig, share = make_pca_figure(r)
    save(fig, out, r["status"])
    return share


def token_report(r, top=5):
    """Which tokens the attention goes to at t = 0 and at each reached onset and the end of the run: per moment
    [(token name, mass, its mass at t = 0)] for the `top` largest masses (markov/mass: the attention over the
    positions summed by token and averaged over the items; at t = 0 a token's frequency in the context)."""
    names = r["vocabulary"] if len(r["vocabulary"]) == r["mass"].shape[1] else [str(i) for i in range(r["mass"].shape[1])]
    moments = [("t = 0", 0.0)] + [(s, r[s]) for s in STAGES if np.isfinite(r[s])] + [("end", float(r["time"][-1]))]
    out = []
    for label, t in moments:
        k = int(np.argmin(np.abs(r["time"] - t)))
        order = np.argsort(-r["mass"][k], kind="stable")[:top]
        out.append((label, float(r["time"][k]), [(names[i], float(r["mass"][k, i]), float(r["mass"][0, i])) for i in order]))
    return out


def plot_run(args):
    r = read_run(args.input, args.allow_partial)
    out = args.output or (args.input[:-3] if args.input.endswith(".h5") else args.input) + ".png"
    pca = out[:-4] + "-pca.png" if out.endswith(".png") else out + "-pca.png"
    stage_figure(r, out)
    share = pca_figure(r, pca)
    print(run_title(r).replace("\n", "; "))
    for s in STAGES:
        print(f"  {STAGE_NAMES[s]:<18} onset {r[s]:.4g}" if np.isfinite(r[s]) else f"  {STAGE_NAMES[s]:<18} not reached")
    print(f"  predicted t_I = {r['t_I_predicted']:.4g} (sigma* = {r['sigma_star']:.6f}, sigma_1 = {r['sigma_1']:.6f}); "
          f"final loss {r['loss'][-1]:.6f} at t = {r['time'][-1]:.4g}; PCA shares {100 * share[0]:.1f} %, "
          f"{100 * share[1]:.1f} %")
    print("  attention mass by token (top 5; in brackets the mass at t = 0, the token's frequency in the context):")
    for label, t, tokens in token_report(r):
        shown = ", ".join(f"{plain_token(name)} {mass:.3f} [{start:.3f}]" for name, mass, start in tokens)
        print(f"    {label:<6} (t = {t:.4g}): {shown}")
    return [out, pca]


def plain_token(name):
    """A token for a console line: quoted, with control characters and spaces escaped (\\n, \\x08)."""
    return repr(name)


def escape_rate(r):
    """Stage IV: the growth rate of ln sigma_2(W0) over the second half of [t_III, t_IV] (t_IV the onset, or
    the end of the run when not reached): {rate, low, high, start, stop, n}."""
    t, sv2 = r["time"], r["sv_w0"][:, 1]
    start = r["t_III"] if np.isfinite(r["t_III"]) else (r["t_II"] if np.isfinite(r["t_II"]) else t[0])
    stop = r["t_IV"] if np.isfinite(r["t_IV"]) else t[-1]
    start = start + 0.5 * (stop - start)
    window = (t >= start) & (t <= stop) & (sv2 > 0)
    fit = fit_line(t[window], np.log(sv2[window]))
    return {"rate": fit["slope"], "low": fit["low"], "high": fit["high"], "start": float(start), "stop": float(stop),
            "n": fit["n"]}


def swept_key(runs):
    """The deck key whose value differs between the runs: model.eps or markov.delta."""
    keys = set().union(*(r["deck"] for r in runs))
    ignore = {"run.output", "run.checkpoint"}
    differ = sorted(k for k in keys - ignore if len({r["deck"].get(k) for r in runs}) > 1)
    if len(differ) != 1 or differ[0] not in SWEPT_KEYS:
        raise ResultError(f"the runs must differ in exactly one of {', '.join(SWEPT_KEYS)}; they differ in "
                          f"{', '.join(differ) if differ else 'nothing'}")
    return differ[0]


def sweep_runs(directory, allow_partial=False):
    """The markov runs among the *.h5 files of a directory (read_run), sorted by the swept value r["value"]
    of the deck key that differs between them (swept_key); returns (key, runs)."""
    if not os.path.isdir(directory):
        raise ResultError(f"no such directory: {directory}")
    runs = []
    for p in sorted(glob.glob(os.path.join(directory, "*.h5"))):
        h5, _ = open_run(p, ResultError, True)
        with h5:
            mine = to_str(h5.attrs.get("command", "")) == "markov"
        if mine:
            runs.append(read_run(p, allow_partial))
    if len(runs) < 2:
        raise ResultError(f"{directory}: {len(runs)} markov run files, a sweep needs at least 2")
    return order_sweep(runs), runs


def order_sweep(runs):
    """The swept key of runs (swept_key); sets each run's r["value"] to its value and sorts the runs by it."""
    key = swept_key(runs)
    for r in runs:
        r["value"] = float(r["deck"][key])
    runs.sort(key=lambda r: r["value"])
    return key


def sweep_fit(key, runs):
    """The fits of a sweep (sweep_runs): (result, rows of the CSV, the lines printed)."""
    kind = SWEPT_KEYS[key]
    result = {"kind": kind, "key": key, "files": [r["path"] for r in runs], "values": [r["value"] for r in runs],
              "status": sorted({r["status"] for r in runs}), "sigma_star": [r["sigma_star"] for r in runs],
              "criteria": runs[0]["criteria"]}
    rows = []
    for r in runs:
        row = {"file": os.path.basename(r["path"]), "eps": float(r["deck"].get("model.eps", "nan")),
               "delta": float(r["deck"].get("markov.delta", "nan")), "sigma_star": r["sigma_star"],
               "t_I_predicted": r["t_I_predicted"], "final_loss": float(r["loss"][-1]), "T": float(r["time"][-1])}
        row.update({s: r[s] for s in STAGES})
        r["escape"] = escape_rate(r)
        row.update({"escape_rate": r["escape"]["rate"], "escape_low": r["escape"]["low"],
                    "escape_high": r["escape"]["high"]})
        rows.append(row)
    result["runs"] = rows
    lines = []
    result.update(fit_onsets(runs, lines) if kind == "eps" else fit_escape(runs, lines))
    return result, rows, lines


def make_sweep_figure(runs, result):
    """The figure of a sweep's fits: onsets against ln(1/eps), or the escape rates against delta."""
    return (make_eps_figure if result["kind"] == "eps" else make_delta_figure)(runs, result)


def sweep_status(result):
    """The status the figure of a sweep is marked with: complete, or the statuses of its runs."""
    return "complete" if result["status"] == ["complete"] else ",".join(result["status"])


def sweep(args):
    key, runs = sweep_runs(args.input, args.allow_partial)
    result, rows, lines = sweep_fit(key, runs)
    prefix = args.output or os.path.join(args.input, f"focus-dilution-{result['kind']}")
    return write_results(prefix, make_sweep_figure(runs, result), sweep_status(result), result, rows, lines)


def write_results(prefix, fig, status, result, rows, lines):
    """PREFIX.png (fig, marked with status), PREFIX.json (result), PREFIX.csv (rows); prints lines."""
    save(fig, prefix + ".png", status)
    with open(prefix + ".json", "w") as f:
        json.dump(result, f, indent=1, default=lambda v: None)
    with open(prefix + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("\n".join(lines))
    return [prefix + ".json", prefix + ".csv", prefix + ".png"]


def fit_onsets(runs, lines):
    """Onsets against x = ln(1/eps): a fit per stage, stage I next to its prediction 1/sigma*."""
    sigma = float(np.mean([r["sigma_star"] for r in runs]))
    if max(abs(r["sigma_star"] / sigma - 1) for r in runs) > 1e-9:
        lines.append("note: sigma* differs between the runs (the data differ besides eps)")
    x = np.array([math.log(1 / r["value"]) for r in runs])
    fits = {}
    lines.append(f"onsets against ln(1/eps), {len(runs)} runs, eps = "
                 + ", ".join(f"{r['value']:.3g}" for r in runs) + f"; sigma* = {sigma:.6f}")
    for s in STAGES:
        y = np.array([r[s] for r in runs])
        ok = np.isfinite(y)
        fit = fit_line(x[ok], y[ok])
        fit["per_decade"] = fit["slope"] * math.log(10)
        fit["per_decade_low"], fit["per_decade_high"] = fit["low"] * math.log(10), fit["high"] * math.log(10)
        fits[s] = fit
        text = (f"  {STAGE_NAMES[s]:<18} slope {fit['slope']:.4f} [{fit['low']:.4f}, {fit['high']:.4f}] per unit "
                f"of ln(1/eps) = {fit['per_decade']:.3f} per decade ({fit['n']} runs reached it)")
        if s == "t_I":
            pred = 1 / sigma
            fit["prediction"] = pred
            fit["relative_difference"] = fit["slope"] / pred - 1
            inside = fit["low"] <= pred <= fit["high"]
            text += (f"; predicted 1/sigma* = {pred:.4f} ({math.log(10) * pred:.3f} per decade): "
                     f"{100 * fit['relative_difference']:+.2f} %, " + ("inside" if inside else "OUTSIDE")
                     + " the interval")
            fit["prediction_inside"] = bool(inside)
        else:
            fit["ratio_to_stage_I_prediction"] = fit["slope"] * sigma
            text += f"; {fit['slope'] * sigma:.3f} x 1/sigma* (no closed-form prediction)"
        lines.append(text)
        sensitivity_line(runs, x, STAGES.index(s), fit, lines)
    return {"fits": fits, "stage_I_rate": stage_one_rates(runs, sigma, lines), "focus_growth": focus_rates(runs, lines)}


def focus_rates(runs, lines):
    """Each run's growth rate of |WQ| over the second half of [t_I, t_II] next to its prediction, the focus rate
    sigma_max(W0^T H W0) averaged there (files since 2026-12-06; NaN before)."""
    out = {"eps": [r["value"] for r in runs], "growth": [float(r["focus_growth"][0]) for r in runs],
           "low": [float(r["focus_growth"][1]) for r in runs], "high": [float(r["focus_growth"][2]) for r in runs],
           "focus_rate": [r["focus_rate"] for r in runs]}
    lines.append("  before focus: the growth rate of |WQ| over the second half of [t_I, t_II] against the focus rate "
                 "sigma_max(W0^T H W0) there")
    for e, g, low, high, f in zip(out["eps"], out["growth"], out["low"], out["high"], out["focus_rate"]):
        if not np.isfinite(g):
            lines.append(f"    eps = {e:<8.3g} not measured (t_II not reached, or too few records)")
        elif not np.isfinite(f):
            lines.append(f"    eps = {e:<8.3g} growth {g:.6f} [{low:.6f}, {high:.6f}]; no focus rate in the file")
        else:
            lines.append(f"    eps = {e:<8.3g} growth {g:.6f} [{low:.6f}, {high:.6f}] against {f:.6f} "
                         f"({100 * (g / f - 1):+.2f} %)")
    return out


THRESHOLDS = ("loss_drop", "mass_rise", "mass_fall", "rank_ratio")


def sensitivity_line(runs, x, stage, fit, lines):
    """The onset's slope against ln(1/eps) refitted with each threshold halved and doubled (the files'
    onset_sensitivity): fit["sensitivity"] [{threshold, factor, slope, n}] and one line with their range."""
    variants = []
    for k, name in enumerate(THRESHOLDS):
        for f, factor in enumerate((0.5, 2.0)):
            y = np.array([r["onset_sensitivity"][k, f, stage] for r in runs])
            ok = np.isfinite(y)
            v = fit_line(x[ok], y[ok]) if ok.sum() >= 2 else {"slope": math.nan, "n": int(ok.sum())}
            variants.append({"threshold": name, "factor": factor, "slope": v["slope"], "n": v["n"]})
    fit["sensitivity"] = variants
    slopes = np.array([v["slope"] for v in variants])
    if not np.isfinite(slopes).any():
        lines.append("      with each threshold halved or doubled: no slope (the files hold no onset_sensitivity, "
                     "or the stage is reached in fewer than 2 runs)")
        return
    lo, hi = int(np.nanargmin(slopes)), int(np.nanargmax(slopes))
    lines.append(f"      with each threshold halved or doubled: slope {slopes[lo]:.4f} ({variants[lo]['threshold']} x "
                 f"{variants[lo]['factor']:g}) to {slopes[hi]:.4f} ({variants[hi]['threshold']} x "
                 f"{variants[hi]['factor']:g}); {int(np.isnan(slopes).sum())} of 8 variants without a slope")


def stage_one_rates(runs, sigma, lines):
    """The stage-I growth rate of each run (its 95% interval: the statistical error) against sigma*, and the
    systematic error: rate(eps) = r0 + b sqrt(eps) fitted over the runs and extrapolated to eps -> 0. Why
    sqrt(eps): the rate is fitted over [t_I/4, 3 t_I/4], where |W0| grows to about eps^(1/4) (|W0|^2 m ~ 1 at
    t_I), and the flow's first nonlinear terms change the rate by O(|W0|^2) = O(eps^(1/2))."""
    rates = np.array([r["stage_I_rate"] for r in runs], float)
    eps = np.array([r["value"] for r in runs], float)
    lines.append(f"  stage-I growth rate of W0 against sigma* = {sigma:.6f}: the interval is the fit's over its "
                 f"window (statistical); the eps dependence is the systematic error")
    for e, (v, low, high) in zip(eps, rates):
        lines.append(f"    eps = {e:<8.3g} rate {v:.6f} [{low:.6f}, {high:.6f}]: {100 * (v / sigma - 1):+.2f} % of "
                     f"sigma*, half width {100 * (high - low) / 2 / sigma:.2f} %")
    ok = np.isfinite(rates[:, 0])
    fit = fit_line(np.sqrt(eps[ok]), rates[ok, 0])
    out = {"eps": eps.tolist(), "rate": rates[:, 0].tolist(), "low": rates[:, 1].tolist(),
           "high": rates[:, 2].tolist(), "extrapolation": fit}
    if not np.isfinite(fit["intercept_low"]):
        lines.append("    extrapolation to eps -> 0: needs 3 runs with a measured rate")
        return out
    inside = fit["intercept_low"] <= sigma <= fit["intercept_high"]
    out["extrapolation_inside"] = bool(inside)
    lines.append(f"    rate = r0 + b sqrt(eps): r0 = {fit['intercept']:.6f} [{fit['intercept_low']:.6f}, "
                 f"{fit['intercept_high']:.6f}] at eps -> 0 ({100 * (fit['intercept'] / sigma - 1):+.2f} % of sigma*, "
                 + ("inside" if inside else "OUTSIDE") + " the interval), b = " f"{fit['slope']:.4f}")
    return out


def fit_escape(runs, lines):
    """Stage-IV escape rates against delta: lambda = lambda_0 + kappa delta and the exponent over delta > 0."""
    delta = np.array([r["value"] for r in runs])
    rate = np.array([r["escape"]["rate"] for r in runs])
    t4 = np.array([r["t_IV"] for r in runs])
    lines.append(f"stage IV against delta, {len(runs)} runs (eps = {runs[0]['deck'].get('model.eps')}, T = "
                 f"{runs[0]['time'][-1]:.4g}): escape rate = slope of ln sigma_2(W0) over the second half of [t_III, t_IV]")
    for r in runs:
        e = r["escape"]
        lines.append(f"  delta = {r['value']:<8.4g} t_IV = " + (f"{r['t_IV']:.4g}" if np.isfinite(r["t_IV"]) else
                                                                  f"not reached by T = {r['time'][-1]:.4g} (stall)")
                     + f", escape rate {e['rate']:.5f} [{e['low']:.5f}, {e['high']:.5f}] over t in "
                       f"[{e['start']:.4g}, {e['stop']:.4g}]")
    ok = np.isfinite(rate)
    linear = fit_line(delta[ok], rate[ok])
    out = {"linear": linear, "t_IV": t4.tolist(), "escape_rate": rate.tolist()}
    lines.append(f"  lambda(delta) = lambda_0 + kappa delta: kappa = {linear['slope']:.4f} [{linear['low']:.4f}, "
                 f"{linear['high']:.4f}], lambda_0 = {linear['intercept']:.5f}")
    # A term linear in delta, if there is one, is c1 of the quadratic; both signs of delta pin it down.
    quadratic = fit_quadratic(delta[ok], rate[ok])
    out["quadratic"] = quadratic
    c1, c2 = quadratic["c1"], quadratic["c2"]
    if np.isfinite(c1["low"]):
        lines.append(f"  lambda(delta) = c0 + c1 delta + c2 delta^2: c1 = {c1['value']:.4f} [{c1['low']:.4f}, "
                     f"{c1['high']:.4f}] (" + ("0 inside" if c1["low"] <= 0 <= c1["high"] else "0 OUTSIDE")
                     + f" the interval), c2 = {c2['value']:.3f} [{c2['low']:.3f}, {c2['high']:.3f}]")
    zero = np.flatnonzero(delta == 0)
    if zero.size:
        base = rate[zero[0]]
        out["rate_at_zero"] = float(base)
        for side, sign in (("exponent", 1), ("exponent_negative", -1)):
            chosen = (sign * delta > 0) & np.isfinite(rate) & (rate > base)
            if side == "exponent_negative" and not (sign * delta > 0).any():
                continue
            power = fit_line(np.log(sign * delta[chosen]), np.log(rate[chosen] - base))
            out[side] = power
            lines.append(f"  lambda(delta) - lambda(0) ~ |delta|^p over delta {'>' if sign > 0 else '<'} 0: "
                         + exponent_verdict(power) + f"; lambda(0) = {base:.5f} (delta = 0: "
                         + (f"t_IV = {t4[zero[0]]:.4g}" if np.isfinite(t4[zero[0]]) else "t_IV not reached") + ")")
    # The odd part (lambda(delta) - lambda(-delta)) / 2 where both signs ran: zero for a family symmetric in delta.
    odd = [(d, (rate[i] - rate[np.flatnonzero(delta == -d)[0]]) / 2) for i, d in enumerate(delta)
           if d > 0 and (delta == -d).any()]
    if odd:
        out["odd_part"] = [{"delta": float(d), "value": float(v)} for d, v in odd]
        lines.append("  odd part (lambda(delta) - lambda(-delta)) / 2: "
                     + ", ".join(f"{v:+.5f} at delta = {d:g}" for d, v in odd))
    return out


def exponent_verdict(power):
    """p of lambda - lambda(0) ~ |delta|^p with its interval, against p = 1 (a Theta(delta) rate) and p = 2 (the
    lowest order of a smooth rate with no linear term)."""
    text = f"p = {power['slope']:.3f} [{power['low']:.3f}, {power['high']:.3f}]"
    if not np.isfinite(power["low"]):
        return text + ": too few runs for an interval (at least 3)"
    return text + ": " + "; ".join(f"p = {q} " + ("inside" if power["low"] <= q <= power["high"] else "OUTSIDE")
                                   for q in (1, 2))


def escape_summary(args):
    """Several delta sweeps (one directory each: a family and an eps) side by side: a line and a CSV row per
    sweep, and the figure PREFIX.png of lambda(delta) - lambda(0) against |delta c| (c the family's direction)."""
    sweeps = []
    for directory in args.input:
        key, runs = sweep_runs(directory, args.allow_partial)
        if SWEPT_KEYS[key] != "delta":
            raise ResultError(f"{directory}: a sweep over {key}, not markov.delta")
        lines = []
        for r in runs:
            r["escape"] = escape_rate(r)
        fit = fit_escape(runs, lines)
        family = runs[0]["deck"].get("markov.family_c", "")
        c = np.array([float(v) for v in str(family).split(",")]) if family else np.full(1, np.nan)
        sweeps.append({"directory": directory, "family_c": str(family), "c_norm2": float(c @ c),
                       "eps": float(runs[0]["deck"].get("model.eps", "nan")), "T": float(runs[0]["time"][-1]),
                       "delta": [r["value"] for r in runs], "fit": fit, "status": sorted({r["status"] for r in runs}),
                       "deck": common_parameters(r["deck"] for r in runs)})
    rows, lines = [], ["stage-IV escape rate lambda(delta) per sweep (slope of ln sigma_2(W0) over the second half of "
                       "[t_III, t_IV]); c2 / |c|^2: the quadratic term per unit of |delta c|^2"]
    for sw in sweeps:
        f = sw["fit"]
        q = f["quadratic"]
        pos, neg = f.get("exponent", {}), f.get("exponent_negative", {})
        row = {"directory": sw["directory"], "family_c": sw["family_c"], "eps": sw["eps"], "T": sw["T"],
               "runs": len(sw["delta"]), "lambda_0": f.get("rate_at_zero", math.nan),
               "c1": q["c1"]["value"], "c1_low": q["c1"]["low"], "c1_high": q["c1"]["high"],
               "c2": q["c2"]["value"], "c2_low": q["c2"]["low"], "c2_high": q["c2"]["high"],
               "c2_per_c_norm2": q["c2"]["value"] / sw["c_norm2"],
               "p": pos.get("slope", math.nan), "p_low": pos.get("low", math.nan), "p_high": pos.get("high", math.nan),
               "p_negative": neg.get("slope", math.nan)}
        rows.append(row)
        lines.append(f"  c = ({sw['family_c']}), eps = {sw['eps']:.3g}: lambda(0) = {row['lambda_0']:.5f}; c1 = "
                     f"{row['c1']:+.4f} [{row['c1_low']:+.4f}, {row['c1_high']:+.4f}]; c2 = {row['c2']:.3f} "
                     f"[{row['c2_low']:.3f}, {row['c2_high']:.3f}], per |c|^2 {row['c2_per_c_norm2']:.3f}; p over "
                     f"delta > 0 = {row['p']:.3f} [{row['p_low']:.3f}, {row['p_high']:.3f}]"
                     + (f", over delta < 0 = {row['p_negative']:.3f}" if np.isfinite(row["p_negative"]) else ""))
    status = "complete" if all(sw["status"] == ["complete"] for sw in sweeps) else "partial"
    return write_results(args.output or "escape", make_escape_figure(sweeps), status, {"sweeps": sweeps, "rows": rows},
                         rows, lines)


def make_escape_figure(sweeps):
    """(a) lambda(delta) - lambda(0) against |delta| |c| on log axes, a line per sweep, with slopes 1 and 2
    for reference; (b) lambda(delta) against delta |c| (signed)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 5.5))
    families = sorted({sw["family_c"] for sw in sweeps})
    epsilons = sorted({sw["eps"] for sw in sweeps})
    markers = "osD^v<>"
    span = []
    for sw in sweeps:
        delta = np.array(sw["delta"])
        rate = np.array(sw["fit"]["escape_rate"])
        base = sw["fit"].get("rate_at_zero", math.nan)
        scale = math.sqrt(sw["c_norm2"])
        style = dict(marker=markers[families.index(sw["family_c"]) % len(markers)],
                     color=f"C{epsilons.index(sw['eps']) % 10}",
                     label=f"c = ({sw['family_c']}), eps = {sw['eps']:.3g}")
        for sign, ls in ((1, "-"), (-1, ":")):
            chosen = (sign * delta > 0) & (rate > base)
            if chosen.any():
                x = sign * delta[chosen] * scale
                a.loglog(x, rate[chosen] - base, ls=ls, **style)
                span.extend(x)
                style["label"] = None
        b.plot(delta * scale, rate, ls="-", **dict(style, label=f"c = ({sw['family_c']}), eps = {sw['eps']:.3g}"))
    if span:
        x = np.array([min(span), max(span)])
        top = max(max(np.array(sw["fit"]["escape_rate"]) - sw["fit"].get("rate_at_zero", math.nan)) for sw in sweeps)
        for p, ls in ((1, "--"), (2, "-.")):
            a.loglog(x, top * (x / x[-1]) ** p, color="0.5", ls=ls, lw=0.8, label=f"slope {p}")
    a.set_xlabel(r"$|\delta|\,|c|$ (dotted: $\delta < 0$)")
    a.set_ylabel(r"$\lambda(\delta) - \lambda(0)$")
    readable_log_axis(a.xaxis)
    readable_log_axis(a.yaxis)
    a.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    b.set_xlabel(r"$\delta\,|c|$")
    b.set_ylabel(r"escape rate $\lambda(\delta)$")
    set_title(fig, "markov", common_parameters(sw["deck"] for sw in sweeps), f"{len(sweeps)} delta sweeps",
              "complete", (), fontsize="medium")
    fig.tight_layout()
    return fig


def set_sweep_title(fig, runs, kind, extra=()):
    """The title of a sweep's figure: the parameters its runs share (set_title)."""
    set_title(fig, "markov", common_parameters(r["deck"] for r in runs), f"{kind} sweep, {len(runs)} runs",
              sweep_status({"status": sorted({r["status"] for r in runs})}), extra, fontsize="medium")


def make_eps_figure(runs, result):
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 5.5))
    x = np.array([math.log(1 / r["value"]) for r in runs])
    xs = np.linspace(x.min(), x.max(), 50)
    for k, s in enumerate(STAGES):
        y = np.array([r[s] for r in runs])
        fit = result["fits"][s]
        colour = f"C{k}"
        a.plot(x, y, "o", color=colour, label=f"{STAGE_NAMES[s]}: slope {fit['slope']:.3f} "
                                             f"[{fit['low']:.3f}, {fit['high']:.3f}]")
        if np.isfinite(fit["slope"]):
            a.plot(xs, fit["intercept"] + fit["slope"] * xs, color=colour, lw=0.8)
    pred = result["fits"]["t_I"].get("prediction")
    a.plot(xs, [r["t_I_predicted"] for r in runs][0] + pred * (xs - x[0]), "k--", lw=0.8,
           label=rf"predicted $t_I$: slope 1/$\sigma^*$ = {pred:.3f}")
    a.set_xlabel(r"$\ln(1/\varepsilon)$")
    a.set_ylabel("onset time")
    a.set_title("stage onsets against the initial scale")
    a.legend(fontsize="small")
    for r in runs:
        b.plot(r["time"], r["loss"], label=f"eps = {r['value']:.3g}")
    b.set_xlabel("flow time t")
    b.set_ylabel("loss")
    b.set_title("loss curves")
    b.legend(fontsize="small")
    set_sweep_title(fig, runs, "eps", [f"sigma* = {np.mean(result['sigma_star']):.5f}"])
    fig.tight_layout()
    return fig


def make_delta_figure(runs, result):
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(19, 5.5))
    for k, r in enumerate(runs):
        sv = r["sv_w0"]
        a.semilogy(r["time"], sv[:, 1] / sv[:, 0], color=f"C{k % 10}", label=f"delta = {r['value']:.3g}")
        if np.isfinite(r["t_IV"]):
            a.axvline(r["t_IV"], color=f"C{k % 10}", ls=":", lw=0.8)
    a.axhline(0.1, color="k", lw=0.6, ls="--", label=r"$t_{IV}$ threshold")
    a.set_xlabel("flow time t")
    a.set_ylabel(r"$\sigma_2(W_0) / \sigma_1(W_0)$")
    # Beside the panel: with many runs a legend inside covers the curves.
    a.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    delta = np.array([r["value"] for r in runs])
    rate = np.array([r["escape"]["rate"] for r in runs])
    low = np.array([r["escape"]["low"] for r in runs])
    high = np.array([r["escape"]["high"] for r in runs])
    b.errorbar(delta, rate, yerr=[rate - low, high - rate], fmt="o", capsize=3, label="escape rate (95%)")
    lin = result["linear"]
    if np.isfinite(lin["slope"]):
        ds = np.linspace(min(0, delta.min()), delta.max(), 50)
        b.plot(ds, lin["intercept"] + lin["slope"] * ds, "k-", lw=0.8,
               label=rf"$\lambda_0 + \kappa\delta$, $\kappa$ = {lin['slope']:.3f} [{lin['low']:.3f}, {lin['high']:.3f}]")
    power = result.get("exponent")
    if power and np.isfinite(power["slope"]):
        ds = np.linspace(0, delta.max(), 100)
        b.plot(ds, result["rate_at_zero"] + math.exp(power["intercept"]) * ds ** power["slope"], "r--", lw=0.8,
               label=rf"$\lambda(0) + a\delta^p$, p = {power['slope']:.2f} [{power['low']:.2f}, {power['high']:.2f}]")
    b.set_xlabel(r"$\delta$")
    b.set_ylabel(r"growth rate of $\ln\sigma_2(W_0)$")
    b.legend(fontsize="small")
    t4 = np.array([r["t_IV"] for r in runs])
    T = np.array([r["time"][-1] for r in runs])
    reached = np.isfinite(t4)
    c.plot(delta[reached], t4[reached], "o-", label=r"$t_{IV}$")
    if (~reached).any():
        c.plot(delta[~reached], T[~reached], "v", color="tab:red", label=r"not reached by T (stall)")
    c.set_xlabel(r"$\delta$")
    c.set_ylabel(r"$t_{IV}$")
    c.legend(fontsize="small")
    set_sweep_title(fig, runs, "delta")
    fig.tight_layout()
    return fig


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode, what in (("run", "a run file: the stage figure and the PCA of the embeddings"),
                       ("sweep", "a directory of runs swept over eps or delta: the fits"),
                       ("escape", "several directories of delta sweeps (families, eps): the escape rates side by side")):
        p = sub.add_parser(mode, help=what)
        if mode == "escape":
            p.add_argument("input", nargs="+", help="DIR ...")
        else:
            p.add_argument("input", help="RUN.h5" if mode == "run" else "DIR")
        p.add_argument("-o", "--output", help="OUT.png" if mode == "run" else "PREFIX of .json, .csv, .png")
        p.add_argument(*ALLOW_PARTIAL[0], **ALLOW_PARTIAL[1])
    args = parser.parse_args(argv)
    from tokdyn_h5 import run_cli

    modes = {"run": plot_run, "sweep": sweep, "escape": escape_summary}
    return run_cli(PROG, ResultError, lambda: modes[args.mode](args))


if __name__ == "__main__":
    sys.exit(main())
