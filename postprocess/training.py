#!/usr/bin/env python3
"""Summaries and figures of `tokdyn train` runs: optimizers and symmetry-breaking biases (doc/science.md section 10).

Usage:
    training.py PATH... [-o PREFIX] [--last K] [--allow-partial]

PATH: run files of `tokdyn train` or directories holding them (the tasks of jobscripts/train-sweep.sh).
The runs are grouped by MLP activation, optimizer and symmetry setting (symmetric, or the resampled biases
on: b_Q, b_Q + b_V, ...); the seeds of a group are its samples. For each group:
- the end-of-training validation loss, EMA-smoothed (the file's final_val_loss_ema) and raw (the last
  record), the lowest raw value along the run (the headline number of the paper) and the mean of the last K
  raw values (--last, default 10 records), each as a mean over seeds with its 95% interval (Student t,
  n - 1 degrees of freedom; no interval for one seed);
- the effect of the biases for each activation and optimizer: the difference (biased - symmetric) of each of
  those numbers with its 95% interval, paired by seed when both sides have the same seeds (a seed fixes the
  initial weights and the batches; the validation sequences are the same for every run), else Welch's,
  stated as a gain, a loss or no difference at that level;
- with both GELU and PReLU runs, whether the biases' effect differs between them: (effect with PReLU) -
  (effect with GELU) of the smoothed end loss, paired by seed.
PREFIX.md holds the same as Markdown tables (the replication table of doc/commands/train.md).
Figures: PREFIX-losses.png (validation loss against step, raw thin and EMA thick, seed mean with a min-max
band, a panel per optimizer), PREFIX-charges.png (the Noether charges |L| / (|P| |theta|) against step on a
log axis, every run), PREFIX-alignment.png ((a) each head's mean cos(W_K e_t, mean b_Q) as a z-score against
its random-direction null, by symmetry setting, next to the null's N(0, 1); (b) the cosines over the
vocabulary of the most aligned head, its largest tokens named). Writes PREFIX.json, PREFIX.csv (a row per
run); PREFIX defaults to DIR/training for one directory, else ./training.

Every figure's title names the parameters the runs share (their decks).

Errors (a missing file, no train runs, a run not complete without --allow-partial, an empty dataset or
series of different lengths, text where a number belongs) end with one line "training.py: error: ..." on
stderr and exit status 2. A run that is not complete lacks the end-of-run attributes: its numbers are its
last records (the lowest finite loss); a run that failed with NaN is drawn up to its last finite values.
"""

import csv
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import PLOTTING, require_modules  # noqa: E402

# One line naming what is missing, before numpy, h5py, matplotlib and scipy (the intervals) load.
require_modules("training.py", PLOTTING + ("scipy",))

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, common_parameters, open_run,  # noqa: E402
                       plain_text, plural, read_datasets, read_numbers, run_parameters, save_figure, set_title, study_group,
                       to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "training.py"
DIAGNOSTICS = ("step", "val_loss", "val_loss_ema", "train_loss_ema", "charge_relative")
ATTRIBUTES = ("final_val_loss", "final_val_loss_ema", "min_val_loss", "min_val_step", "final_train_loss_ema",
              "tokens_per_second")
BIAS_NAMES = (("query", "b_Q"), ("key", "b_K"), ("value", "b_V"))
# The shapes of the datasets (tokdyn_h5.check_shapes): the diagnostics one row per record; per head, the
# alignment's columns (mean cos, null mean, null std, p) and the cosines over the vocabulary.
SHAPES = {name: ("records",) for name in DIAGNOSTICS}
ALIGNMENT_SHAPES = {"alignment": ("heads", 4), "alignment_cos": ("heads", "vocabulary")}


class ResultError(Exception):
    """A problem with the inputs: reported as one line, exit status 2."""


def symmetry_label(params):
    """'symmetric', or the biases on ('b_Q + b_V'), '(mean)' when fixed at their means (params: run_parameters)."""
    on = [name for key, name in BIAS_NAMES if params.get(f"bias.{key}", False) is True]
    if not on:
        return "symmetric"
    return " + ".join(on) + (" (mean)" if params.get("bias.sampling", "resample") == "mean" else "")


def read_run(path, allow_partial=False, last=10):
    """A train run as a dict: its deck's optimizer and symmetry, seed, diagnostics and end attributes, and
    last_mean, the mean of its last `last` raw validation losses (fewer when it has fewer records)."""
    h5, status = open_run(path, ResultError, allow_partial, command="train")
    with h5:
        g = study_group(h5, path, "train", "train", ResultError)
        d = read_datasets(h5["diagnostics"], path, DIAGNOSTICS, ResultError, dtype=float)
        params = run_parameters(h5, path, ResultError)
        root = read_numbers(h5, path, ("seed", "ranks"), ResultError)
        r = {"path": path, "status": status, "seed": int(root["seed"]), "parameters": params,
             "optimizer": params["train.optimizer"], "symmetry": symmetry_label(params),
             "activation": str(params.get("model.mlp", "gelu")),
             "ranks": int(root["ranks"]), **d}
        # A run that is not complete lacks the end-of-run attributes: NaN.
        r.update(read_numbers(g, path, ATTRIBUTES, ResultError, required=status == "complete"))
        check_shapes(path, d, SHAPES, ResultError, "/diagnostics/")
        if status != "complete":  # what a partial run has: its last records, the lowest finite loss
            finite = d["val_loss"][np.isfinite(d["val_loss"])]
            r["final_val_loss"] = d["val_loss"][-1]
            r["final_val_loss_ema"] = d["val_loss_ema"][-1]
            r["min_val_loss"] = float(finite.min()) if finite.size else math.nan
            r["final_train_loss_ema"] = d["train_loss_ema"][-1]
        r["alignment"] = r["alignment_cos"] = None
        if "alignment" in g and "alignment_cos" in g:
            r.update(read_datasets(g, path, ("alignment", "alignment_cos"), ResultError, dtype=float))
            check_shapes(path, r, ALIGNMENT_SHAPES, ResultError, "/train/", empty_ok=("heads",))
        r["vocabulary"] = to_str(g.attrs["vocabulary"]).split("\n")[:-1] if "vocabulary" in g.attrs else []
    v = r["val_loss"][1:][-last:]
    r["last_mean"] = float(np.mean(v)) if v.size else math.nan
    return r


def find_runs(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.h5")))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise ResultError(f"no such file or directory: {p}")
    return [f for f in files if not f.endswith(".ckpt.h5")]


def interval(values):
    """(mean, half width of the 95% Student-t interval; nan for one value)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), math.nan
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))


def paired(a, b):
    """Mean of the differences b_i - a_i (the same seed i) and the half width of its 95% Student interval."""
    return interval(np.asarray(b, float) - np.asarray(a, float))


def welch(a, b):
    """Mean of b - a and the half width of its 95% Welch interval (nan when a side has one value)."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    diff = float(b.mean() - a.mean())
    if a.size < 2 or b.size < 2:
        return diff, math.nan
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, 0.0
    dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    return diff, float(stats.t.ppf(0.975, dof) * se)


def compare(base, rs, key):
    """(difference of rs - base in `key`, 95% half width, "paired by seed" or "Welch")."""
    a = {r["seed"]: r[key] for r in base}
    b = {r["seed"]: r[key] for r in rs}
    if sorted(a) == sorted(b) and len(a) == len(base) and len(b) == len(rs):
        # The same seeds on both sides: the same initial weights and batches (and validation sequences).
        seeds = sorted(b)
        return (*paired([a[k] for k in seeds], [b[k] for k in seeds]), "paired by seed")
    return (*welch(list(a.values()), list(b.values())), "Welch")


def judge(diff, half):
    if math.isnan(half):
        return "no interval (one seed)"
    if diff + half < 0:
        return "the biases help (the interval is below 0)"
    if diff - half > 0:
        return "the biases hurt (the interval is above 0)"
    return "no difference at 95% (the interval holds 0)"


def fmt(mean, half):
    return f"{mean:.4f}" + ("" if math.isnan(half) else f" +- {half:.4f}")


# The numbers of a run compared across groups: (key, label).
MEASURES = (("final_val_loss_ema", "end EMA"), ("min_val_loss", "lowest raw"), ("last_mean", "mean of last K"))


def summarise(runs, lines, last=10):
    """Per (activation, optimizer, symmetry) group the means and intervals; per activation and optimizer the
    biases' effects; with two activations the difference of the effects (lines: the console report)."""
    groups = {}
    for r in runs:
        groups.setdefault((r["activation"], r["optimizer"], r["symmetry"]), []).append(r)
    table = []
    lines.append(f"{'mlp':<5} {'optimizer':<9} {'symmetry':<12} {'seeds':>5}  {'end EMA (95%)':<20} "
                 f"{'end raw (95%)':<20} {'lowest raw (95%)':<20} {f'last {last} (95%)':<20} {'train EMA':<8}")
    for (act, opt, sym), rs in sorted(groups.items()):
        row = {"activation": act, "optimizer": opt, "symmetry": sym, "seeds": sorted(r["seed"] for r in rs)}
        for key in ("final_val_loss_ema", "final_val_loss", "min_val_loss", "last_mean", "final_train_loss_ema"):
            row[key], row[key + "_ci95"] = interval([r[key] for r in rs])
        table.append(row)
        lines.append(f"{act:<5} {opt:<9} {sym:<12} {len(rs):>5}  "
                     + " ".join(f"{fmt(row[k], row[k + '_ci95']):<20}"
                                for k in ("final_val_loss_ema", "final_val_loss", "min_val_loss", "last_mean"))
                     + f" {row['final_train_loss_ema']:.4f}")
    # The biases' effect on each measure, per activation and optimizer, against its symmetric runs.
    effects = []
    for act, opt in sorted({(a, o) for a, o, _ in groups}):
        base = groups.get((act, opt, "symmetric"))
        if not base:
            continue
        for (a, o, sym), rs in sorted(groups.items()):
            if (a, o) != (act, opt) or sym == "symmetric":
                continue
            effect = {"activation": act, "optimizer": opt, "symmetry": sym}
            for key, label in MEASURES:
                diff, half, kind = compare(base, rs, key)
                verdict = judge(diff, half)
                prefix = {"final_val_loss_ema": "", "min_val_loss": "min_", "last_mean": "last_"}[key]
                effect.update({prefix + "difference": diff, prefix + "ci95": half, prefix + "verdict": verdict})
                effect["interval"] = kind
                lines.append(f"{act} {opt}: {sym} - symmetric, {label} {fmt(diff, half)} ({kind}): {verdict}")
            effects.append(effect)
    return table, effects


def activation_contrast(runs, lines):
    """With GELU and PReLU runs of the same seeds: per optimizer and biased setting, (biased - symmetric with
    PReLU) - (biased - symmetric with GELU) of the smoothed end loss, paired by seed, with its 95% interval."""
    by = {(r["activation"], r["optimizer"], r["symmetry"], r["seed"]): r["final_val_loss_ema"] for r in runs}
    out = []
    for opt, sym in sorted({(r["optimizer"], r["symmetry"]) for r in runs if r["symmetry"] != "symmetric"}):
        seeds = sorted(s for (a, o, y, s) in by if (a, o, y) == ("gelu", opt, sym)
                       and all((act, opt, y2, s) in by for act in ("gelu", "prelu") for y2 in (sym, "symmetric")))
        if len(seeds) < 2:
            continue
        d = [(by[("prelu", opt, sym, s)] - by[("prelu", opt, "symmetric", s)])
             - (by[("gelu", opt, sym, s)] - by[("gelu", opt, "symmetric", s)]) for s in seeds]
        diff, half = interval(d)
        verdict = ("larger gain with PReLU" if diff + half < 0 else "larger gain with GELU" if diff - half > 0
                   else "no difference at 95%")
        out.append({"optimizer": opt, "symmetry": sym, "seeds": seeds, "difference": diff, "ci95": half,
                    "verdict": verdict})
        lines.append(f"{opt}: effect of {sym} with PReLU - with GELU, end EMA {fmt(diff, half)} (paired by seed): "
                     f"{verdict}")
    return out


def markdown(table, effects, contrast, last):
    """The groups and the effects as Markdown tables (3 decimals, +- the 95% half width)."""
    def cell(mean, half):
        return f"{mean:.3f}" + ("" if math.isnan(half) else f" +- {half:.3f}")
    out = [f"| MLP | optimizer | symmetry | seeds | end EMA | end raw | raw min | mean of last {last} |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in table:
        out.append(f"| {g['activation']} | {g['optimizer']} | {g['symmetry']} | {len(g['seeds'])} | "
                   + " | ".join(cell(g[k], g[k + "_ci95"])
                                for k in ("final_val_loss_ema", "final_val_loss", "min_val_loss", "last_mean")) + " |")
    out += ["", f"| MLP | optimizer | biases - symmetric | end EMA | raw min | mean of last {last} | interval |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for e in effects:
        out.append(f"| {e['activation']} | {e['optimizer']} | {e['symmetry']} | {cell(e['difference'], e['ci95'])} | "
                   f"{cell(e['min_difference'], e['min_ci95'])} | {cell(e['last_difference'], e['last_ci95'])} | "
                   f"{e['interval']} |")
    if contrast:
        out += ["", "| optimizer | biases | effect with PReLU - with GELU (end EMA) | verdict |", "| --- | --- | --- | --- |"]
        for c in contrast:
            out.append(f"| {c['optimizer']} | {c['symmetry']} | {cell(c['difference'], c['ci95'])} | {c['verdict']} |")
    return "\n".join(out) + "\n"


def alignment_summary(runs, lines):
    """Each head's z = (mean cos - null mean) / null std and p-value, by symmetry setting."""
    out = {}
    for r in runs:
        a = r["alignment"]
        if a is None or a.size == 0:
            continue
        z = (a[:, 0] - a[:, 1]) / a[:, 2]
        s = out.setdefault(r["symmetry"], {"z": [], "p": []})
        s["z"] += z.tolist()
        s["p"] += a[:, 3].tolist()
    for sym, s in sorted(out.items()):
        z, p = np.array(s["z"]), np.array(s["p"])
        lines.append(f"alignment, {sym}: {z.size} heads, |z| median {np.median(np.abs(z)):.2f}, "
                     f"{int(np.sum(p < 0.01))} with p < 0.01 (the null expects {0.01 * z.size:.1f})")
        s["heads"], s["far"] = int(z.size), int(np.sum(p < 0.01))
    return out


def finite_median(values):
    """The median of the finite values (NaN: a run cut short has none)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if v.size else math.nan


def colours(keys):
    cmap = plt.get_cmap("tab10")
    return {k: cmap(i % 10) for i, k in enumerate(sorted(keys))}


def set_runs_title(fig, runs, what, **text):
    """The title of a figure of one or more runs: `what` and the parameters they share; their number in the
    footer (set_title)."""
    status = "complete" if all(r["status"] == "complete" for r in runs) else "partial"
    set_title(fig, "train", common_parameters(r["parameters"] for r in runs), plural(len(runs), "run"), status,
              [what], **text)


def make_losses_figure(runs):
    """A panel per optimizer (columns) and MLP activation (rows, when the runs have several)."""
    optimizers = sorted({r["optimizer"] for r in runs})
    activations = sorted({r["activation"] for r in runs})
    symmetries = colours({r["symmetry"] for r in runs})
    fig, axes = plt.subplots(len(activations), len(optimizers), figsize=(5.5 * len(optimizers), 4.5 * len(activations)),
                             squeeze=False, sharey=True)
    for ax, (act, opt) in zip(axes.flat, [(a, o) for a in activations for o in optimizers]):
        mine = [r for r in runs if r["optimizer"] == opt and r["activation"] == act]
        for sym, colour in symmetries.items():
            rs = [r for r in mine if r["symmetry"] == sym]
            if not rs:
                continue
            n = min(len(r["step"]) for r in rs)
            step = rs[0]["step"][:n]
            for key, width, alpha in (("val_loss", 0.8, 0.5), ("val_loss_ema", 2.0, 1.0)):
                y = np.array([r[key][:n] for r in rs])
                label = f"{sym} ({plural(len(rs), 'seed')})" if key == "val_loss_ema" else None
                ax.plot(step[1:], y.mean(0)[1:], color=colour, lw=width, alpha=alpha, label=label)
                if len(rs) > 1:
                    ax.fill_between(step[1:], y.min(0)[1:], y.max(0)[1:], color=colour, alpha=0.12 * alpha, lw=0)
        ax.set_title(opt if len(activations) == 1 else f"{opt}, {act.upper()}")
        ax.set_xlabel("optimizer step")
        ax.grid(alpha=0.3)
        if mine:
            ax.legend(fontsize=8)
        values = [r[key][1:] for r in mine for key in ("val_loss", "val_loss_ema")]
        if not mine:
            ax.text(0.5, 0.5, f"no {opt} run with {act}", ha="center", va="center", transform=ax.transAxes)
        elif not np.isfinite(np.concatenate(values)).any():  # a run that failed at once: say so, not a blank panel
            ax.text(0.5, 0.5, "no finite validation loss after step 0", ha="center", va="center",
                    transform=ax.transAxes, color="tab:red")
    # Spikes (ECD's bounces) would flatten every curve: the axis stops at the 99th percentile of the values
    # (the finite ones: a run that failed ends in NaN or Inf).
    values = np.concatenate([r["val_loss"][1:] for r in runs] + [r["val_loss_ema"][1:] for r in runs])
    values = values[np.isfinite(values)]
    if values.size:
        low, high = float(values.min()), float(np.percentile(values, 99))
        axes[0][0].set_ylim(low - 0.05 * (high - low), high + 0.1 * (high - low))
    for row in axes:
        row[0].set_ylabel("validation loss (nats per token):\nraw thin, EMA thick")
    several = any(len({r["seed"] for r in runs if (r["optimizer"], r["symmetry"]) == (o, s)}) > 1
                  for o in optimizers for s in symmetries)  # a band needs two seeds
    set_runs_title(fig, runs, "validation loss" + (", mean over seeds and min-max band" if several else ""))
    fig.tight_layout()  # room for the title's lines above the panels' titles
    return fig


def make_charges_figure(runs):
    fig, ax = plt.subplots(figsize=(8, 5))
    optimizers = colours({r["optimizer"] for r in runs})
    styles = dict(zip(sorted({r["symmetry"] for r in runs}), ("-", "--", ":", "-.") * 4))
    labelled = set()
    for r in sorted(runs, key=lambda r: (r["optimizer"], r["symmetry"], r["seed"])):
        q = r["charge_relative"]
        ok = q > 0
        if not ok.any():
            continue
        key = (r["optimizer"], r["symmetry"])
        ax.semilogy(r["step"][ok], q[ok], color=optimizers[r["optimizer"]], ls=styles[r["symmetry"]], lw=1,
                    label=None if key in labelled else f"{key[0]}, {key[1]}")
        labelled.add(key)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("|L_QK, L_VO| / (|P| |theta|)")
    ax.set_title("Noether charges of the heads (every run; zero values left out)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if labelled:  # none when no run has a nonzero charge (one that failed at once)
        ax.legend(fontsize=7, ncol=2)
    set_runs_title(fig, runs, "charges", fontsize=10)
    fig.tight_layout()
    return fig


def make_alignment_figure(runs, summary):
    """(a) the heads' key-bias alignment against the null; (b) the most aligned head's cosines over the
    vocabulary, only when a run has b_Q (the panel is left out otherwise)."""
    best = None
    for r in runs:
        al = r["alignment"]
        if al is None or al.size == 0 or r["symmetry"] == "symmetric":
            continue
        z = np.abs((al[:, 0] - al[:, 1]) / al[:, 2])
        h = int(np.argmax(z))
        if best is None or z[h] > best[0]:
            best = (z[h], r, h)
    if best is None:
        fig, a = plt.subplots(figsize=(7, 4.5))
    else:
        fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    edges = np.linspace(-8, 8, 41)
    for sym, s in sorted(summary.items()):
        a.hist(np.clip(s["z"], -8, 8), bins=edges, density=True, alpha=0.5, label=f"{sym} ({len(s['z'])} heads)")
    x = np.linspace(-8, 8, 400)
    a.plot(x, np.exp(-x * x / 2) / math.sqrt(2 * math.pi), "k--", label="null N(0, 1)")
    a.set_xlabel("z = (mean cos(W_K e_t, mean b_Q) - null mean) / null std")
    a.set_ylabel("density over heads")
    a.set_title("(a) key-bias alignment per head against random directions")
    a.legend(fontsize=8)
    if best is not None:
        _, r, h = best
        cos = r["alignment_cos"][h]
        seen = np.flatnonzero(np.isfinite(cos))  # NaN: a token absent from the validation sequences
        order = seen[np.argsort(cos[seen])]
        b.bar(np.arange(order.size), cos[order], color="tab:blue", width=1.0)
        vocab = r["vocabulary"]

        def names(ids):
            return " ".join(repr(vocab[i]) if i < len(vocab) else str(i) for i in ids)

        b.text(0.02, 0.97, plain_text(f"largest: {names(order[::-1][:6])}\nsmallest: {names(order[:6])}"),
               transform=b.transAxes,
               va="top", fontsize=8, family="monospace", bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
        heads = r["alignment"].shape[0]
        b.set_title(plain_text(f"(b) most aligned head: {os.path.basename(r['path'])}, head {h} of {heads}"),
                    fontsize=9)
        b.set_xlabel("vocabulary tokens, sorted" + ("" if seen.size == cos.size else
                                                    f" ({seen.size} of {cos.size}: those the validation shows)"))
        b.set_ylabel("cos(W_K e_t, mean b_Q)")
    set_runs_title(fig, runs, "key-bias alignment" + ("" if best else " (no run with b_Q: no panel (b))"), fontsize=10)
    fig.tight_layout()
    return fig


def save(fig, out, status):
    save_figure(fig, out, status, dpi=120)


def main_body(args):
    if args.last < 1:
        raise ResultError(f"--last must be at least 1 (got {args.last})")
    files = find_runs(args.paths)
    runs = [read_run(f, args.allow_partial, args.last) for f in files]
    if not runs:
        raise ResultError(f"no tokdyn train run files in {' '.join(args.paths)}")
    if args.output:
        prefix = args.output
    elif len(args.paths) == 1 and os.path.isdir(args.paths[0]):
        prefix = os.path.join(args.paths[0], "training")
    else:
        prefix = "training"
    status = "complete" if all(r["status"] == "complete" for r in runs) else "partial"
    lines = []
    table, effects = summarise(runs, lines, args.last)
    contrast = activation_contrast(runs, lines)
    align = alignment_summary(runs, lines)
    for line in lines:
        print(line)
    result = {"runs": len(runs), "status": status, "last": args.last, "groups": table, "bias_effects": effects,
              "activation_contrast": contrast,
              "alignment": {k: {"heads": v["heads"], "far_p01": v["far"]} for k, v in align.items()},
              "tokens_per_second": finite_median([r["tokens_per_second"] for r in runs])}
    with open(prefix + ".json", "w") as f:
        json.dump(result, f, indent=1)
    with open(prefix + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "activation", "optimizer", "symmetry", "seed", "status", "final_val_loss_ema",
                    "final_val_loss", "min_val_loss", "min_val_step", "last_mean", "final_train_loss_ema",
                    "tokens_per_second", "charge_relative_max"])
        for r in runs:
            w.writerow([os.path.basename(r["path"]), r["activation"], r["optimizer"], r["symmetry"], r["seed"],
                        r["status"], r["final_val_loss_ema"], r["final_val_loss"], r["min_val_loss"], r["min_val_step"],
                        r["last_mean"],
                        r["final_train_loss_ema"], r["tokens_per_second"], float(np.max(r["charge_relative"]))])
    with open(prefix + ".md", "w") as f:
        f.write(markdown(table, effects, contrast, args.last))
    outs = [prefix + ".json", prefix + ".csv", prefix + ".md"]
    for name, fig in figures(runs, align):
        path = f"{prefix}-{name}.png"
        save(fig, path, status)
        outs.append(path)
    return outs


def figures(runs, align):
    """[(name, figure)] of the runs: losses, charges, alignment (align: alignment_summary)."""
    return [("losses", make_losses_figure(runs)), ("charges", make_charges_figure(runs)),
            ("alignment", make_alignment_figure(runs, align))]


ARGUMENTS = (
    (("paths",), {"nargs": "+", "metavar": "PATH", "help": "train run files or directories of them"}),
    (("-o", "--output"), {"help": "prefix of the outputs (default DIR/training or ./training)"}),
    (("--last",), {"type": int, "default": 10, "metavar": "K",
                   "help": "records in the mean of the last raw validation losses (default 10)"}),
    ALLOW_PARTIAL,
)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS, main_body, argv)


if __name__ == "__main__":
    sys.exit(main())
