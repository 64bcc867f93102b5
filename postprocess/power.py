#!/usr/bin/env python3
"""Plot a `tokdyn power` run file: tokens through power-method layers (doc/science.md section 7).

Usage:
    power.py RUNFILE [-o OUT.png] [--plane first|last] [--tokens K] [--allow-partial]

Panels:
    (a) alignment gamma_t of the layer outputs with each layer's v_1 (|P_S x| for a complex pair):
        mean, median and the quartile band, the inputs' mean, and the random baseline sqrt(2/(pi d));
    (b) rho_t, the fraction of tokens whose alignment grew in layer t, with the 1/2 line;
    (c) trajectories of up to K tokens in the plane of v_1, v_2 of the first or the last layer
        (orthonormal coordinates; the unit circle for scale);
    (d) the steering curve when the file has /steer: alignment of the outputs with the target u
        (mean and min) against the strength c; otherwise the misalignment (sine of the angle to
        v_1 or to S) against layer, log scale, with the closed-form rate |lambda_2|/|lambda_1| of the
        last layer (|lambda_3| for a complex pair; |1 + lambda_k| for a residual run, whose layers act
        by I + F) drawn over the layers the file's fitted ratio comes from (the later half of those
        above round-off), through their mean: the early layers are a transient.
The title names the run's parameters.
A summary (final state, last gamma, mean rho, error ratio, rotation, steering) is printed on
stdout, then the path written (default: RUNFILE with .h5 -> .png).

Errors (missing file, not HDF5, not a power run, missing dataset, an empty dataset or series of different
lengths, text where a number belongs, a run whose status is not complete without --allow-partial) end with a
one-line message "power.py: error: ..." on stderr and exit status 2. With --allow-partial an unfinished or
failed run is drawn, marked "partial (status: X)".
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

require_modules("power.py")  # one line naming what is missing, before numpy, h5py and matplotlib load

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, open_run, plain_text, read_datasets,  # noqa: E402
                       read_numbers, require_attributes, run_parameters, save_figure, set_title, study_group, to_str)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "power.py"
POWER = ("layer", "gamma_mean", "gamma_median", "gamma_q1", "gamma_q3", "gamma_in_mean", "sin_mean", "rho",
         "gap", "lambda1_abs", "lambda2_abs", "rotation", "angle", "pair", "plane_first", "plane_last")
POWER_ATTRIBUTES = ("state", "baseline", "baseline_plane", "error_ratio", "error_ratio_closed_form", "rho_mean", "d",
                    "N", "attention", "residual")
STEER = ("strength", "alpha", "alignment_mean", "alignment_min", "gap", "eigvec_alignment")
TEXT_ATTRIBUTES = ("state", "attention")
# The shapes of the datasets (tokdyn_h5.check_shapes): per layer, the token coordinates [L+1, N, 2] per state,
# per steering strength.
SHAPES = {**{name: ("layers",) for name in POWER}, "plane_first": ("states", "tokens", 2),
          "plane_last": ("states", "tokens", 2)}
STEER_SHAPES = {name: ("strengths",) for name in STEER}


class ResultError(Exception):
    """A file that cannot be read or is not a power run."""


def read_result(path, allow_partial=False):
    """Return a dict of the /power (and /steer, when present) datasets and attributes of a power run."""
    h5, status = open_run(path, ResultError, allow_partial, "power")
    with h5:
        g = study_group(h5, path, "power", "power", ResultError)
        out = {"path": path, "status": status, "parameters": run_parameters(h5, path, ResultError)}
        out.update(read_datasets(g, path, POWER, ResultError, np.float64))
        require_attributes(g, path, POWER_ATTRIBUTES, ResultError)
        out.update((name, to_str(g.attrs[name])) for name in TEXT_ATTRIBUTES)
        out.update(read_numbers(g, path, [n for n in POWER_ATTRIBUTES if n not in TEXT_ATTRIBUTES], ResultError))
        check_shapes(path, out, SHAPES, ResultError, "/power/")
        out["steer"] = None
        if "steer" in h5:
            s = h5["steer"]
            steer = read_datasets(s, path, STEER, ResultError, np.float64)
            check_shapes(path, steer, STEER_SHAPES, ResultError, "/steer/")
            steer["layers"] = to_str(s.attrs.get("layers", "last"))
            steer["target"] = to_str(s.attrs.get("target_spec", ""))
            out["steer"] = steer
    return out


def default_output(path):
    """RUNFILE.h5 -> RUNFILE.png."""
    return path[:-3] + ".png" if path.endswith(".h5") else path + ".png"


def fit_window(sin_mean):
    """Indices of the layers tokdyn power fits its error ratio over (fitted_error_ratio in
    src/studies/power_study.cpp): the later half of those whose mean sine lies above the round-off floor 1e-12."""
    above = np.flatnonzero(sin_mean > 1e-12)
    return above[len(above) // 2:]


def ratio_name(residual, pair):
    """The closed-form error ratio of the run's matrix, in LaTeX: |lambda_2|/|lambda_1| (|lambda_3| after a
    complex leading pair), of 1 + lambda for a residual run (its layers act by I + F)."""
    k = 3 if pair else 2
    if residual:
        return rf"|1 + \lambda_{k}|\,/\,|1 + \lambda_1|"
    return rf"|\lambda_{k}|\,/\,|\lambda_1|"


def reference_line(layer, sin_mean, ratio):
    """(layers, values) of the closed-form decay ratio^t over the fit window, through the window's mean of
    log sine (least squares with the slope fixed), or None without a window or a positive ratio."""
    window = fit_window(sin_mean)
    if len(window) < 2 or not (np.isfinite(ratio) and ratio > 0):
        return None
    t = layer[window]
    intercept = np.mean(np.log(sin_mean[window])) - np.log(ratio) * np.mean(t)
    return t, np.exp(intercept + np.log(ratio) * t)


def token_subset(n, k):
    """Up to k token indices spread evenly over 0..n-1."""
    return np.unique(np.linspace(0, n - 1, min(k, n)).round().astype(int))


def make_figure(r, plane="last", tokens=32):
    """The four-panel figure of result r (read_result)."""
    layer = r["layer"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    (ax, bx), (cx, dx) = axes
    pair = r["pair"].astype(bool)

    ax.fill_between(layer, r["gamma_q1"], r["gamma_q3"], color="tab:blue", alpha=0.25, label="quartiles")
    ax.plot(layer, r["gamma_mean"], color="tab:blue", label=r"mean $\gamma_t$ (outputs)")
    ax.plot(layer, r["gamma_median"], color="tab:blue", ls=":", label="median")
    ax.plot(layer, r["gamma_in_mean"], color="tab:gray", lw=1, label="mean of the inputs (same $v_{1,t}$)")
    ax.axhline(r["baseline"], color="k", ls="--", lw=1, label=rf"random direction $\sqrt{{2/(\pi d)}}$ = {r['baseline']:.3f}")
    if pair.any():
        ax.axhline(r["baseline_plane"], color="k", ls="-.", lw=1, label=f"random, plane: {r['baseline_plane']:.3f}")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("layer t")
    ax.set_ylabel(r"$\gamma_t = |P x_i| / |x_i|$")
    ax.set_title(f"alignment with each layer's $v_1$ ({int(pair.sum())} of {len(layer)} layers with a complex pair)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="center right")  # below the converged curves, above the random level

    bx.plot(layer, r["rho"], "o-", ms=3, color="tab:orange", label=rf"$\rho_t$ (mean {r['rho_mean']:.3f})")
    bx.axhline(0.5, color="k", ls="--", lw=1, label="1/2")
    bx.set_ylim(-0.02, 1.02)
    bx.set_xlabel("layer t")
    bx.set_ylabel(r"fraction with $\gamma(x_i(t+1)) > \gamma(x_i(t))$")
    bx.set_title(rf"tilt towards $v_{{1,t}}$; final state: {plain_text(r['state'])}", fontsize=10)
    bx.legend(fontsize=8, loc="lower right")

    coords = r["plane_" + plane]  # [L+1, N, 2]
    ids = token_subset(coords.shape[1], tokens)
    circle = np.linspace(0, 2 * np.pi, 200)
    cx.plot(np.cos(circle), np.sin(circle), color="0.8", lw=1)
    colors = plt.cm.viridis(np.linspace(0, 1, len(ids)))
    for color, i in zip(colors, ids):
        cx.plot(coords[:, i, 0], coords[:, i, 1], "-", lw=0.6, color=color, alpha=0.7)
        cx.plot(coords[-1, i, 0], coords[-1, i, 1], "o", ms=3, color=color)
        cx.plot(coords[0, i, 0], coords[0, i, 1], "x", ms=3, color=color)
    cx.set_aspect("equal")
    cx.set_xlim(-1.05, 1.05)
    cx.set_ylim(-1.05, 1.05)
    cx.set_xlabel(r"$\langle x, e_1 \rangle$")
    cx.set_ylabel(r"$\langle x, e_2 \rangle$")
    cx.set_title(f"{len(ids)} tokens in the plane of $v_1, v_2$ of the {plane} layer (x: start, o: end)", fontsize=10)

    steer = r["steer"]
    if steer is not None:
        c = steer["strength"]
        order = np.argsort(c)
        dx.plot(c[order], steer["alignment_mean"][order], "o-", color="tab:green", label=r"mean $|\langle x_i, u\rangle|$")
        dx.plot(c[order], steer["alignment_min"][order], "s--", color="tab:red", ms=4, label="min over tokens")
        dx.plot(c[order], steer["eigvec_alignment"][order], ":", color="k", label=r"$|\langle v_1(F'_L), u\rangle|$")
        if (c > 0).all():
            dx.set_xscale("log")
        elif (c > 0).sum() >= 2:
            dx.set_xscale("symlog", linthresh=max(np.min(c[c > 0]), 1e-3))
        dx.set_ylim(0, 1.02)
        dx.set_xlabel(r"strength c ($\alpha = c\,|\lambda_1(F_L)|$)")
        dx.set_ylabel("alignment with the target u")
        dx.set_title(plain_text(f"steering {steer['target']} ({steer['layers']} "
                                f"layer{'s' if steer['layers'] == 'all' else ''})"), fontsize=10)
        dx.legend(fontsize=8, loc="lower right")
    else:
        sin = r["sin_mean"]
        positive = sin > 0
        dx.semilogy(layer[positive], sin[positive], color="tab:purple", label="mean sine of the angle to $v_1$ (or S)")
        ratio = r["error_ratio_closed_form"]
        line = reference_line(layer, sin, ratio)
        if line is not None:
            name = ratio_name(bool(r["residual"]), bool(pair[-1]))
            dx.semilogy(*line, "k--", lw=1.2, label=rf"closed form $({name})^t$ = {ratio:.4f}$^t$ (fit window)")
        dx.set_xlabel("layer t")
        dx.set_ylabel("misalignment")
        dx.set_title(f"error decay: fitted ratio {r['error_ratio']:.4f} per layer", fontsize=10)
        dx.legend(fontsize=8, loc="lower left")
    # d is in the deck for synthetic weights only.
    extra = [] if "synthetic.d" in r["parameters"] else [f"d = {int(r['d'])}"]
    # The matrix each layer applies, as the console's layer lines name it.
    acting = "I + F" if r["residual"] else "F"
    extra.append(f"last layer |lambda_1({acting})| = {r['lambda1_abs'][-1]:.4g}, gap({acting}) = {r['gap'][-1]:.4g}")
    set_title(fig, "power", r["parameters"], os.path.basename(r["path"]), r["status"], extra)
    fig.tight_layout()
    return fig


def plot(r, out, plane="last", tokens=32):
    """Write the four-panel figure of result r to out."""
    fig = make_figure(r, plane, tokens)
    save_figure(fig, out, r["status"], dpi=110)


def summarize(result, output, plane, tokens, allow_partial=False):
    """Read the result, print its summary, write the figure; return [the path written]."""
    r = read_result(result, allow_partial)
    out = output or default_output(result)
    print(f"final state: {r['state']}; gamma {r['gamma_mean'][-1]:.6f} (baseline {r['baseline']:.4f}); "
          f"mean rho {r['rho_mean']:.4f}")
    print(f"error ratio per layer {r['error_ratio']:.6f} (closed form {r['error_ratio_closed_form']:.6f})")
    if r["pair"][-1]:
        print(f"rotation at the last layer {r['rotation'][-1]:.6f} (arg lambda_1 {r['angle'][-1]:.6f})")
    if r["steer"] is not None:
        s = r["steer"]
        k = int(np.argmax(s["strength"]))
        print(f"steering: alignment min {s['alignment_min'][k]:.6f} at c = {s['strength'][k]:g}")
    plot(r, out, plane, tokens)
    return [out]


ARGUMENTS = ((("result",), {}),
             (("-o", "--output"), {"help": "PNG to write (default: RUNFILE with .h5 -> .png)"}),
             (("--plane",), {"choices": ("first", "last"), "default": "last",
                             "help": "draw the trajectories in the plane of v_1, v_2 of this layer"}),
             (("--tokens",), {"type": int, "default": 32, "help": "tokens to draw (default 32)"}),
             ALLOW_PARTIAL)


def main(argv=None):
    return cli_main(PROG, __doc__, ResultError, ARGUMENTS,
                    lambda a: summarize(a.result, a.output, a.plane, a.tokens, a.allow_partial), argv)


if __name__ == "__main__":
    sys.exit(main())
