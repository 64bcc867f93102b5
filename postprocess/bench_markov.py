#!/usr/bin/env python3
"""Benchmark `tokdyn bench --bench.kernel=markov` against NumPy and PyTorch (CPU) on the same windows.

Usage:
    bench_markov.py [--windows N] [--seed SEED] [--text FILE [--max-chars K]] [--s S] [--m M]
                    [--ranks 1,2] [--repeats R] [--threads T] [--chunk B] [--tokdyn PATH]
                    [--mpiexec PATH] [--json OUT]

Every implementation computes, at the same fixed weights, the loss and the full gradient (forward and
backward pass) of the one-layer, one-head transformer on all windows of a text (doc/science.md
section 8): tokens = the text's characters, vocabulary = its distinct characters in code-point order
(d of them); window o = 0 .. n - s - 1 has the positions x = tokens[o : o + s] and the target
y = tokens[o + s] (N = n - s windows, weight 1/N each); theta = (W0 [d, m], WQ [m, mk], WK [m, mk],
W1 [m, d]) flat, row-major, mk = m, theta_k = sin(k + 1) / sqrt(m) (as tokdyn bench sets it);
q = W0[x_last] WQ, k_j = W0[x_j] WK, a = softmax_j <q, k_j> (tau = 1), logits = (sum_j a_j W0[x_j]) W1,
loss = mean cross-entropy; |grad| = the Euclidean norm of d loss / d theta.

Implementations, each timed as the best of --repeats passes after one untimed pass:
    tokdyn          `mpiexec -n P tokdyn bench --bench.kernel=markov ...` for each P of --ranks (its
                    own timing: best of --repeats after one warm-up); the count form below, in C++/MPI;
    numpy counts    the count form, vectorised over windows in chunks of --chunk, with a hand-written
                    backward: a window is (last token t, counts n [d]); with S = (W0 WQ)(W0 WK)^T and
                    M = W0 W1 [d, d], alpha_i = n_i e^{S[t, i]} / sum_k n_k e^{S[t, k]}, logits = alpha M;
    torch counts    the same count form in PyTorch float64, autograd backward;
    torch positions the plain model over positions in PyTorch float64 (embedding lookup [B, s, m],
                    scores, softmax, weighted sum, logits, cross-entropy), autograd backward, in chunks
                    of --chunk windows with the gradients accumulated: what a PyTorch user would write.
The count arrays (counts [N, d], last tokens, targets) are built once, outside the timing, as tokdyn
builds its items once at setup; torch positions reads the windows as a strided view of the tokens.
PyTorch runs with --threads threads (torch.set_num_threads); NumPy uses its BLAS's default threads.
Without PyTorch (`import torch` fails) the torch rows are skipped (Debian package python3-torch).

Data: by default a text of --windows + s letters a, b, c, d drawn from the Markov chain
P = lam I + (1 - lam) 1 pi^T, pi = (0.75, 0.19, 0.05, 0.01), lam = 0.5, x_1 ~ pi, with
numpy.random.default_rng(--seed) (draws: the pi samples, then the stay coins); --text FILE takes a
UTF-8 file instead (--max-chars K: its first K characters). The text is written to a temporary file
for tokdyn, removed at the end.

Output on stdout: a header (N, s, d, m, the machine, the versions), one agreement line per
implementation (relative differences of loss and |grad| to tokdyn's run on the fewest ranks, which
must be below 1e-10), and the table: seconds per pass, sequence-positions/s (N s / seconds),
sequences/s, and the speed-up of tokdyn on the most ranks over each row. --json OUT writes all of it.

Exit status: 0; 1 when an implementation disagrees with tokdyn (a "DISAGREE: ..." line, after the
table); 2 on an error (missing or failing tokdyn or mpiexec, unreadable text, bad options), with a
one-line message "bench_markov.py: error: ..." on stderr.
"""

import argparse
import math
import os
import platform
import re
import sys
import tempfile

from tokdyn_h5 import require_modules

require_modules("bench_markov.py", ("numpy",))  # one line naming what is missing, before numpy loads

import numpy as np  # noqa: E402

from bench_common import (BenchError, add_tool_options, best_of, check_minimums, check_tools,  # noqa: E402
                          exit_status,
                          import_torch, machine, parse_list, run_tokdyn, tokdyn_error, write_json)

PROG = "bench_markov.py"
PI = (0.75, 0.19, 0.05, 0.01)
LAM = 0.5
LETTERS = "abcd"
TOLERANCE = 1e-10
TAU = 1.0


# ---------------------------------------------------------------------------------------------- data

def markov_text(length, seed):
    """length letters of the chain P = lam I + (1 - lam) 1 pi^T, x_1 ~ pi: x_t repeats x_{t-1} with
    probability lam, else is a fresh draw from pi (so x_t is the fresh draw at the last non-stay)."""
    rng = np.random.default_rng(seed)
    fresh = rng.choice(len(PI), size=length, p=PI)
    stay = rng.random(length) < LAM
    stay[0] = False
    last_fresh = np.maximum.accumulate(np.where(stay, 0, np.arange(length)))
    return "".join(np.array(list(LETTERS))[fresh[last_fresh]])


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise BenchError(f"cannot read text file '{path}': {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BenchError(f"text file '{path}': invalid UTF-8 at byte {exc.start}") from None
    return text


class Problem:
    """The windows of a text and the weights, with the count form built once."""

    def __init__(self, text, s, m):
        vocabulary = sorted(set(text))
        self.d, self.s, self.m = len(vocabulary), s, m
        if self.d < 2:
            raise BenchError(f"the text has {self.d} distinct characters; at least 2 are needed")
        if len(text) < s + 1:
            raise BenchError(f"the text has {len(text)} characters, fewer than s + 1 = {s + 1}")
        index = {c: i for i, c in enumerate(vocabulary)}
        self.tokens = np.fromiter((index[c] for c in text), dtype=np.int64, count=len(text))
        self.N = len(text) - s
        d, N = self.d, self.N
        # counts[o] = histogram of tokens[o : o + s]: differences of the running histogram.
        running = np.zeros((len(text) + 1, d), dtype=np.int32)
        running[np.arange(1, len(text) + 1), self.tokens] = 1
        np.cumsum(running, axis=0, out=running)
        self.counts = (running[s:s + N] - running[:N]).astype(np.float64)
        del running
        self.last = self.tokens[s - 1:s - 1 + N].copy()
        self.target = self.tokens[s:s + N].copy()
        sizes = (d * m, m * m, m * m, m * d)
        self.theta = np.sin(np.arange(1, sum(sizes) + 1, dtype=np.float64)) / math.sqrt(m)
        self.sizes = sizes

    def split(self, theta):
        """W0, WQ, WK, W1 as views of a flat theta (NumPy or torch)."""
        d, m = self.d, self.m
        a, b, c = self.sizes[0], self.sizes[0] + self.sizes[1], self.sizes[0] + 2 * self.sizes[1]
        return (theta[:a].reshape(d, m), theta[a:b].reshape(m, m), theta[b:c].reshape(m, m),
                theta[c:].reshape(m, d))


# --------------------------------------------------------------------------------------- NumPy counts

def numpy_counts(p, chunk):
    """Loss and flat gradient, the count form with the backward written out."""
    W0, WQ, WK, W1 = p.split(p.theta)
    Q, K = W0 @ WQ, W0 @ WK
    S = Q @ K.T / TAU
    M = W0 @ W1
    dS, dM = np.zeros_like(S), np.zeros_like(M)
    loss = 0.0
    d, N = p.d, p.N
    with np.errstate(divide="ignore"):
        for lo in range(0, N, chunk):
            hi = min(lo + chunk, N)
            n, t, y = p.counts[lo:hi], p.last[lo:hi], p.target[lo:hi]
            rows = np.arange(hi - lo)
            z = S[t] + np.log(n)  # -inf where a token is absent: alpha_i = 0
            z -= z.max(axis=1, keepdims=True)
            alpha = np.exp(z)
            alpha /= alpha.sum(axis=1, keepdims=True)
            logits = alpha @ M
            logits -= logits.max(axis=1, keepdims=True)
            e = np.exp(logits)
            sum_e = e.sum(axis=1)
            loss += np.sum(np.log(sum_e) - logits[rows, y])
            dlogits = e / sum_e[:, None]
            dlogits[rows, y] -= 1.0
            dlogits /= N
            dM += alpha.T @ dlogits
            dalpha = dlogits @ M.T
            dz = alpha * (dalpha - np.sum(alpha * dalpha, axis=1, keepdims=True))
            onehot = np.zeros((hi - lo, d))
            onehot[rows, t] = 1.0
            dS += onehot.T @ dz
    dQ, dK = dS @ K / TAU, dS.T @ Q / TAU
    dW0 = dQ @ WQ.T + dK @ WK.T + dM @ W1.T
    grad = np.concatenate([dW0.ravel(), (W0.T @ dQ).ravel(), (W0.T @ dK).ravel(), (W0.T @ dM).ravel()])
    return loss / N, grad


# -------------------------------------------------------------------------------------------- PyTorch

class TorchBench:
    """The two PyTorch implementations; tensors made once (outside the timing)."""

    def __init__(self, torch, p, chunk):
        self.torch, self.p, self.chunk = torch, p, chunk
        self.theta = torch.tensor(p.theta, dtype=torch.float64, requires_grad=True)
        with np.errstate(divide="ignore"):
            self.log_counts = torch.from_numpy(np.log(p.counts))
        self.last = torch.from_numpy(p.last)
        self.target = torch.from_numpy(p.target)
        # Window o = tokens[o : o + s]: rows of a strided view, no copy.
        self.windows = torch.from_numpy(p.tokens[:p.N + p.s - 1]).unfold(0, p.s, 1)

    def _run(self, chunk_loss):
        self.theta.grad = None
        total = 0.0
        for lo in range(0, self.p.N, self.chunk):
            loss = chunk_loss(lo, min(lo + self.chunk, self.p.N))
            loss.backward()
            total += loss.item()
        return total, self.theta.grad.numpy().copy()

    def counts(self):
        F = self.torch.nn.functional

        def chunk_loss(lo, hi):
            W0, WQ, WK, W1 = self.p.split(self.theta)
            S = (W0 @ WQ) @ (W0 @ WK).T / TAU
            alpha = self.torch.softmax(S[self.last[lo:hi]] + self.log_counts[lo:hi], dim=1)
            logits = alpha @ (W0 @ W1)
            return F.cross_entropy(logits, self.target[lo:hi], reduction="sum") / self.p.N

        return self._run(chunk_loss)

    def positions(self):
        F = self.torch.nn.functional

        def chunk_loss(lo, hi):
            W0, WQ, WK, W1 = self.p.split(self.theta)
            e = F.embedding(self.windows[lo:hi], W0)  # [B, s, m]
            q = e[:, -1] @ WQ  # [B, mk]
            k = e @ WK  # [B, s, mk]
            scores = (k @ q.unsqueeze(-1)).squeeze(-1) / TAU  # [B, s]
            a = self.torch.softmax(scores, dim=1)
            h = (a.unsqueeze(1) @ e).squeeze(1)  # [B, m]
            return F.cross_entropy(h @ W1, self.target[lo:hi], reduction="sum") / self.p.N

        return self._run(chunk_loss)


# --------------------------------------------------------------------------------------------- tokdyn

HEADER = re.compile(r"^bench markov: (\d+) windows of s = (\d+), vocabulary d = (\d+), m = mk = (\d+), "
                    r"(\d+) ranks?: loss (\S+), \|grad\| (\S+)$", re.M)
BEST = re.compile(r"^best (\S+) s +(\S+) sequence-positions/s", re.M)


def tokdyn_bench(args, ranks, text_file):
    out, _ = run_tokdyn(args, ranks, "bench", [
        "bench", "--bench.kernel=markov", f"--bench.text_file={text_file}", f"--bench.s={args.s}",
        f"--bench.m={args.m}", f"--bench.repeats={args.repeats}", "--bench.warmup=1"])
    header, best = HEADER.search(out), BEST.search(out)
    if not header or not best:
        raise BenchError(f"tokdyn bench on {ranks} rank{'s' if ranks > 1 else ''} ({args.tokdyn}): "
                         f"unexpected output: {tokdyn_error(out)}")
    N, s, d, m, P = (int(v) for v in header.groups()[:5])
    # The rate has 4 significant digits, the seconds 4 decimals: the rate is the finer for short passes.
    return {"implementation": "tokdyn", "ranks": P, "threads": None, "N": N, "s": s, "d": d, "m": m,
            "loss": float(header.group(6)), "grad_norm": float(header.group(7)),
            "seconds": N * s / float(best.group(2))}


# ----------------------------------------------------------------------------------------------- main

def check_args(args):
    check_minimums(args, (("windows", 1), ("s", 2), ("m", 1), ("repeats", 1), ("threads", 1), ("chunk", 1)))
    if args.max_chars is not None and args.text is None:
        raise BenchError("--max-chars needs --text")
    if args.max_chars is not None and args.max_chars < 1:
        raise BenchError("--max-chars must be >= 1")
    check_tools(args)


def table(rows, reference_seconds):
    head = ("implementation", "ranks/threads", "s per pass", "seq-positions/s", "sequences/s",
            "tokdyn speed-up")
    body = [(r["implementation"], r["parallel"], f"{r['seconds']:.4g}", f"{r['positions_per_s']:.3e}",
             f"{r['sequences_per_s']:.3e}", f"{r['seconds'] / reference_seconds:.2f}x") for r in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]

    def fmt(row):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(b) for b in body])


def bench(args):
    check_args(args)
    ranks = parse_list(args.ranks, "--ranks")
    if args.text is not None:
        text = read_text(args.text)
        source = f"text {args.text}, {len(text)} characters"
        if args.max_chars is not None and args.max_chars < len(text):
            text = text[:args.max_chars]
            source += f", the first {args.max_chars} taken"
    else:
        text = markov_text(args.windows + args.s, args.seed)
        source = f"Markov chain pi = {PI}, lam = {LAM}, seed {args.seed}"
    p = Problem(text, args.s, args.m)
    torch = import_torch()

    results = []
    with tempfile.TemporaryDirectory(prefix="bench_markov.") as scratch:
        text_file = os.path.join(scratch, "text.txt")
        with open(text_file, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        for P in ranks:
            results.append(tokdyn_bench(args, P, text_file))
    if (results[0]["N"], results[0]["d"]) != (p.N, p.d):
        raise BenchError(f"tokdyn reads N = {results[0]['N']} windows, d = {results[0]['d']}; "
                         f"this script N = {p.N}, d = {p.d}")
    for r in results:
        r["parallel"] = f"{r['ranks']} rank{'s' if r['ranks'] > 1 else ''}"

    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "torch": torch.__version__ if torch else None}
    host = machine()
    print(f"bench markov: N = {p.N} windows, s = {p.s}, d = {p.d}, m = mk = {p.m}; {source}")
    print(f"machine: {host['cpus']} CPUs, {host['processor']}; numpy {versions['numpy']}, "
          f"torch {versions['torch'] or 'not installed'}")

    def add(name, parallel, fn, threads=None):
        seconds, (loss, grad) = best_of(fn, args.repeats)
        results.append({"implementation": name, "ranks": None, "threads": threads, "parallel": parallel,
                        "N": p.N, "s": p.s, "d": p.d, "m": p.m, "loss": float(loss),
                        "grad_norm": float(np.linalg.norm(grad)), "seconds": seconds})

    add("numpy counts", "BLAS default", lambda: numpy_counts(p, args.chunk))
    if torch is None:
        print("PyTorch: not installed (Debian package python3-torch)")
    else:
        torch.set_num_threads(args.threads)
        tb = TorchBench(torch, p, args.chunk)
        add("torch counts", f"{args.threads} threads", tb.counts, args.threads)
        add("torch positions", f"{args.threads} threads", tb.positions, args.threads)

    reference = results[0]
    disagree = []
    print(f"agreement with tokdyn on {reference['parallel']} (loss {reference['loss']:.15e}, "
          f"|grad| {reference['grad_norm']:.15e}), relative differences:")
    for r in results:
        r["rel_loss"] = abs(r["loss"] - reference["loss"]) / abs(reference["loss"])
        r["rel_grad"] = abs(r["grad_norm"] - reference["grad_norm"]) / abs(reference["grad_norm"])
        r["agree"] = max(r["rel_loss"], r["rel_grad"]) < TOLERANCE
        label = f"{r['implementation']} ({r['parallel']})"
        print(f"  {label:32s} loss {r['rel_loss']:.2e}  |grad| {r['rel_grad']:.2e}  "
              f"{'ok' if r['agree'] else 'DISAGREES'}")
        if not r["agree"]:
            disagree.append(f"{label}: loss {r['loss']:.15e} (rel {r['rel_loss']:.2e}), "
                            f"|grad| {r['grad_norm']:.15e} (rel {r['rel_grad']:.2e})")
    fastest = results[len(ranks) - 1]  # tokdyn on the most ranks
    for r in results:
        r["positions_per_s"] = p.N * p.s / r["seconds"]
        r["sequences_per_s"] = p.N / r["seconds"]
        r["tokdyn_speedup"] = r["seconds"] / fastest["seconds"]
    print()
    print(f"forward + backward over all {p.N} windows (best of {args.repeats}; speed-up of tokdyn on "
          f"{fastest['parallel']} over each row):")
    print(table(results, fastest["seconds"]))
    if args.json:
        out = {"N": p.N, "s": p.s, "d": p.d, "m": p.m, "source": source, "repeats": args.repeats,
               "threads": args.threads, "chunk": args.chunk, "machine": host, "versions": versions,
               "tolerance": TOLERANCE, "agree": not disagree, "results": results}
        write_json(args.json, out)
    for line in disagree:
        print(f"DISAGREE: {line}")
    return 1 if disagree else 0


def parser():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, default=100000, help="windows of the generated text (default 100000)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated text (default 1)")
    ap.add_argument("--text", help="a UTF-8 text file instead of the generated text")
    ap.add_argument("--max-chars", type=int, help="with --text: its first K characters only")
    ap.add_argument("--s", type=int, default=32, help="window length (default 32)")
    ap.add_argument("--m", type=int, default=16, help="embedding width m = mk (default 16)")
    ap.add_argument("--ranks", default="1,2", help="tokdyn rank counts, a comma list (default 1,2)")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes, best taken (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch threads (default 2)")
    ap.add_argument("--chunk", type=int, default=8192, help="windows per chunk in NumPy/PyTorch (default 8192)")
    add_tool_options(ap)
    return ap


def main(argv=None):
    return exit_status(PROG, bench, parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
