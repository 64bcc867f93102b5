#!/usr/bin/env python3
"""The normalisation family of `tokdyn transformer` (model.norm) against NumPy, layer by layer.

Usage: norm_reference.py RUN.h5 NORM BETA FACTOR ALPHA [--mlp] [--heads H] [--causal]

Without --mlp the run has softmax attention only (Q = K = V = I) and a snapshot after every layer; each
layer's snapshot is compared with the NumPy step of the previous one, h = FACTOR T / L:
    post  x <- LN(x + h A(x))
    pre   x <- x + h A(LN(x))
    peri  x <- x + h LN(A(LN(x)))
    ngpt  x <- LN(x + h alpha * (LN(A(x)) - x))
A(y)_i = sum_j e^{beta <y_i, y_j>} y_j / sum_j e^{beta <y_i, y_j>}, LN(v) = v / |v| row by row; with
--heads H each block of d/H coordinates is a head of its own (logits and values from that block alone), and
with --causal the sums run over j <= i. Tolerance 1e-13
(the step's round-off is ~1e-16; 1e-13 leaves room for N sums of terms up to 1 and for the exponentials).
With --mlp the run has the random MLP too, which NumPy cannot redraw; the last layer's diagnostics are then
checked against its snapshot: |mean u|, the mean and the minimum cosine of the directions u_i = x_i / |x_i|
(the diagnostics see the directions whatever the norm), to 1e-12.
Exits 1 with the worst difference when a check fails.
"""
import sys

import h5py
import numpy as np


def ln(v):
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def attention(y, beta, heads=1, causal=False):
    n, d = y.shape
    w = d // heads
    out = np.empty_like(y)
    for g in range(heads):
        b = y[:, g * w:(g + 1) * w]
        s = beta * (b @ b.T)
        if causal:
            s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[:, g * w:(g + 1) * w] = (e @ b) / e.sum(axis=1, keepdims=True)
    return out


def step(x, norm, beta, h, alpha, heads, causal):
    A = lambda y: attention(y, beta, heads, causal)  # noqa: E731
    if norm == "post":
        return ln(x + h * A(x))
    if norm == "pre":
        return x + h * A(ln(x))
    if norm == "peri":
        return x + h * ln(A(ln(x)))
    return ln(x + h * alpha * (ln(A(x)) - x))


def main():
    path, norm, beta, factor, alpha = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    heads = int(sys.argv[sys.argv.index("--heads") + 1]) if "--heads" in sys.argv else 1
    causal = "--causal" in sys.argv
    with h5py.File(path, "r") as f:
        X = f["tokens/X"][...]
        layers = f["tokens/layer"][...]
        t = f["tokens/time"][...]
        diag = {k: f["diagnostics/" + k][...] for k in ("order_parameter", "mean_cosine", "min_cosine")}
    if "--mlp" in sys.argv:
        u = ln(X[-1])
        n = len(u)
        c = u @ u.T
        off = c[~np.eye(n, dtype=bool)]
        got = np.array([diag["order_parameter"][-1], diag["mean_cosine"][-1], diag["min_cosine"][-1]])
        want = np.array([np.linalg.norm(u.mean(axis=0)), off.mean(), off.min()])
        worst = np.max(np.abs(got - want))
        print(f"{norm} with MLP: diagnostics of the directions, max |tokdyn - numpy| = {worst:.3g}")
        return 0 if worst <= 1e-12 else 1
    d = X.shape[2]
    a = np.array([float(v) for v in alpha.split(",")])
    a = np.full(d, a[0]) if a.size == 1 else a
    h = factor * (t[1] - t[0]) / (layers[1] - layers[0])
    worst = 0.0
    for k in range(1, len(layers)):
        assert layers[k] == layers[k - 1] + 1, "a snapshot after every layer"
        worst = max(worst, np.max(np.abs(X[k] - step(X[k - 1], norm, beta, h, a, heads, causal))))
    radius = np.abs(np.linalg.norm(X[-1], axis=1) - 1).max()
    print(f"{norm}, {heads} head(s){', causal' if causal else ''}: {len(layers) - 1} layers, "
          f"max |tokdyn - numpy| = {worst:.3g}, max ||x| - 1| after the last = {radius:.3g}")
    return 0 if worst <= 1e-13 else 1


if __name__ == "__main__":
    sys.exit(main())
