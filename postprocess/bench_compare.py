#!/usr/bin/env python3
"""One exact softmax self-attention layer in tokdyn, NumPy and PyTorch (CPU), the same machine, one run.

Usage:
    bench_compare.py [--N 4096,16384,65536] [--d 16] [--beta 1] [--ranks 2] [--threads P] [--layers 3]
                     [--repeats 3] [--warmup 1] [--block 2048] [--tolerance 1e-12] [--tokdyn PATH]
                     [--mpiexec PATH] [--json OUT] [--section.key=value ...]

The layer: N tokens x_i on S^{d-1} (float64), out_i = sum_j softmax_j(beta <x_i, x_j>) x_j (Q = K = V = I),
every pair (i, j), j = i included: N^2 pairs. Rates are pairs/s = N^2 / seconds per layer.

Implementations, for each N of --N (d = --d):
    tokdyn bench        `mpiexec -n P tokdyn bench --bench.kernel=attention --bench.N=N --bench.d=d
                        --bench.beta=beta --bench.repeats=R --bench.warmup=W`: the bare kernel on its own
                        random tokens, its "best ... pairs/s" line (best of R after W untimed passes);
    tokdyn transformer  `mpiexec -n P tokdyn transformer DECK` on a generated deck (in a temporary
                        directory): model.N = N, model.d = d, model.L = --layers, model.T = 1, attention on
                        with its defaults (softmax, Q = K = V = I, factor 1) and attention.beta = beta,
                        mlp.enabled = false, diagnostics at their defaults (the pair statistics after every
                        layer, the first and last snapshots). The time is tokdyn's own wall time of the L
                        layers: its last progress line ("layer L/L ... X pairs/s", X = L N^2 / seconds since
                        the first layer began, 3 significant digits), so start-up, the initial tokens and
                        the layer-0 diagnostics are outside it and each layer's diagnostics, the final
                        snapshot and the per-layer collective poll inside. The run file has no finer timing
                        (start_time and end_time are to the second; a 0-layer run is refused, L >= 1).
                        Extra --section.key=value arguments go to these runs only ([run], [diagnostics],
                        [tokens]; e.g. --diagnostics.every=1000 times the layers without the statistics);
    NumPy               the same layer in query blocks of --block rows (never an N x N matrix: a block is
                        block x N doubles, 1 GiB at N = 65536 and block 2048): S = (beta X_b) X^T, S -= the
                        row maxima, exp in place, out_b = (S X) / (row sums of S); OpenBLAS (or MKL) threads
                        = --threads through OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS, set
                        before NumPy is imported (what this script's process sets; tokdyn gets the
                        environment the script was started with);
    PyTorch             the same blocks in torch float64, torch.set_num_threads(--threads); skipped when
                        `import torch` fails (Debian package python3-torch).
NumPy and PyTorch are timed like tokdyn bench: the best of --repeats passes after --warmup untimed ones, on
the same tokens (uniform on the sphere, numpy.random.default_rng(1)). tokdyn runs on --ranks ranks and
NumPy and PyTorch on --threads threads (default: as many as the ranks, so the same cores).

Agreement check, before any timing, at the smallest N: `tokdyn transformer` with L = 1, T = 1,
diagnostics.snapshot_every = 1 and the MLP off; from its run file's snapshots of layer 0 (X_0) and layer 1
(X_1), NumPy and PyTorch recompute the layer by tokdyn's update rule (src/dynamics/transformer.cpp,
doc/science.md section 1): dt = T / L, X_1 = LN(X_0 + a dt Attn(X_0)), a = attention.factor = 1,
LN(v) = v / |v| row by row. The largest |difference| of any entry of X_1 must be below --tolerance
(default 1e-12). Why 1e-12: an entry of Attn is a ratio of two sums of N terms (the exponentials,
max-subtracted, in [e^{-2 beta}, 1], times entries of unit vectors); summed in any order, each sum's
rounding error is at most (N - 1) u of the sum of its terms' magnitudes (u = 2^-53), so each implementation
is within about 2 (N - 1) u of the exact layer, plus a few u from the exp (tokdyn's vectorised exp is within
2 ulp) and the logits (d products), and |X_0 + dt Attn| >= about 1 keeps the projection from amplifying it.
That worst case (all roundings aligned) allows two implementations 4 (N - 1) u apart: 1.1e-13 at N = 256,
4.5e-13 at N = 1024, 1.8e-12 at N = 4096; rounding errors of blocked or pairwise sums grow like sqrt(N) u
(7e-15 at N = 4096), and the observed differences are 2e-16 to 3e-16 at N = 64 .. 4096. 1e-12 is far
above what rounding does here and far below any other step: a tokdyn run with beta = 1.001 instead of 1
differs by 2e-5 at N = 64 (the cli_bench_compare test checks that case). --tolerance changes it.

Output on stdout: the machine (CPU model from /proc/cpuinfo, CPU count), the versions (tokdyn --version,
Python, NumPy, PyTorch), the agreement line, then a Markdown table: N, the four rates in pairs/s, and the
ratios tokdyn bench / NumPy, tokdyn bench / PyTorch, tokdyn transformer / NumPy, tokdyn transformer /
PyTorch (above 1: tokdyn is faster). --json OUT writes all of it (the table under "markdown").

Exit status: 0; 2 on an error with one line "bench_compare.py: error: ..." on stderr: bad options, a missing
tokdyn binary, a failing tokdyn (its own "tokdyn: error" line, not the launcher's notices), or an agreement
check above the tolerance.
"""

import argparse
import os
import platform
import re
import sys
import tempfile

from tokdyn_h5 import require_modules

# Looked up, not loaded: numpy loads in import_libraries once its BLAS thread count is in the environment.
require_modules("bench_compare.py", ("numpy", "h5py"), load=False)

from bench_common import (BenchError, add_tool_options, best_of, check_minimums, check_tools,  # noqa: E402
                          exit_status,
                          import_torch, machine, parse_list, run_tokdyn, tokdyn_error, tokdyn_version, write_json)

PROG = "bench_compare.py"
HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 1e-12
T_HORIZON = 1.0
FACTOR = 1.0  # attention.factor's default: the check relies on it, the deck does not set it
# Deck sections an override may touch (the model, attention and MLP are this script's to set).
OVERRIDABLE = ("run", "diagnostics", "tokens")
PAIR_LABELS = {"numpy_tokdyn": "NumPy - tokdyn", "pytorch_tokdyn": "PyTorch - tokdyn", "numpy_pytorch": "NumPy - PyTorch"}
np = None  # numpy, imported in main() once the BLAS thread count is in the environment


# --------------------------------------------------------------------------------------------- tokdyn

BENCH_HEADER = re.compile(r"^bench attention softmax: N = (\d+), d = (\d+), .*?(\d+) ranks?$", re.M)
BENCH_BEST = re.compile(r"^best (\S+) s +(\S+) pairs/s", re.M)


def tokdyn_bench(args, N):
    out, _ = run_tokdyn(args, args.ranks, "bench", [
        "bench", "--bench.kernel=attention", "--bench.style=softmax", f"--bench.N={N}", f"--bench.d={args.d}",
        f"--bench.beta={args.beta!r}", f"--bench.repeats={args.repeats}", f"--bench.warmup={args.warmup}"])
    header, best = BENCH_HEADER.search(out), BENCH_BEST.search(out)
    if not header or not best:
        raise BenchError(f"tokdyn bench ({args.tokdyn}): unexpected output: {tokdyn_error(out)}")
    got = tuple(int(v) for v in header.groups())
    if got != (N, args.d, args.ranks):
        raise BenchError(f"tokdyn bench ran N = {got[0]}, d = {got[1]} on {got[2]} ranks; asked for "
                         f"N = {N}, d = {args.d} on {args.ranks}")
    rate = float(best.group(2))  # 4 significant digits (the seconds have 4 decimals: coarser for short passes)
    return {"pairs_per_s": rate, "seconds": N * N / rate}


def write_deck(path, N, d, layers, beta, output, snapshot_every=None):
    lines = ["# written by postprocess/bench_compare.py", "[run]", f"output = {output}",
             "progress_interval = 1e9", "", "[model]", f"N = {N}", f"d = {d}", f"L = {layers}",
             f"T = {T_HORIZON!r}", "", "[attention]", "enabled = true", f"beta = {beta!r}", "", "[mlp]",
             "enabled = false", ""]
    if snapshot_every is not None:
        lines += ["[diagnostics]", f"snapshot_every = {snapshot_every}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


PROGRESS = re.compile(r"^layer (\d+)/(\d+) .*?(\S+) pairs/s\s*$", re.M)


def open_complete_run(path):
    import h5py

    from tokdyn_h5 import to_str

    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        raise BenchError(f"cannot open tokdyn's run file {path}: {exc}") from None
    status = to_str(h5.attrs.get("status", "missing"))
    if status != "complete":
        h5.close()
        raise BenchError(f"tokdyn's run file {path} has status '{status}', not complete")
    return h5


def deck_section(deck_text, section):
    """The key = value lines of one section of a resolved deck (the run file's `deck` attribute)."""
    values, current = {}, None
    for line in deck_text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == section and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def tokdyn_transformer(args, N, work):
    from tokdyn_h5 import to_scalar, to_str

    output = os.path.join(work, f"transformer-{N}.h5")
    deck = os.path.join(work, f"transformer-{N}.ini")
    write_deck(deck, N, args.d, args.layers, args.beta, output)
    out, wall = run_tokdyn(args, args.ranks, "transformer", ["transformer", deck, *args.overrides], work)
    lines = [m for m in PROGRESS.finditer(out) if int(m.group(1)) == int(m.group(2)) == args.layers]
    if not lines:
        raise BenchError(f"tokdyn transformer ({args.tokdyn}): no progress line 'layer {args.layers}/"
                         f"{args.layers} ... pairs/s' in its output: {tokdyn_error(out)}")
    rate = float(lines[-1].group(3))
    with open_complete_run(output) as h5:
        diagnostics = {k: (to_str(v) if isinstance(v, (str, bytes)) else to_scalar(v))
                       for k, v in h5["diagnostics"].attrs.items()}
        keys = deck_section(to_str(h5.attrs["deck"]), "diagnostics")
    return {"pairs_per_s": rate, "seconds_per_layer": N * N / rate, "layers": args.layers,
            "process_seconds": wall, "diagnostics_keys": keys, "diagnostics_attributes": diagnostics}


# ------------------------------------------------------------------------------------ NumPy, PyTorch

def numpy_attention(x, beta, block):
    """out_i = sum_j softmax_j(beta <x_i, x_j>) x_j, in blocks of query rows."""
    N = x.shape[0]
    out = np.empty_like(x)
    for lo in range(0, N, block):
        hi = min(lo + block, N)
        s = (beta * x[lo:hi]) @ x.T  # [b, N]
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        out[lo:hi] = (s @ x) / s.sum(axis=1, keepdims=True)
    return out


def torch_attention(torch, x, beta, block):
    N = x.shape[0]
    out = torch.empty_like(x)
    for lo in range(0, N, block):
        hi = min(lo + block, N)
        s = (beta * x[lo:hi]) @ x.T
        s.sub_(s.amax(dim=1, keepdim=True)).exp_()
        out[lo:hi] = (s @ x).div_(s.sum(dim=1, keepdim=True))
    return out


def uniform_tokens(N, d, seed=1):
    x = np.random.default_rng(seed).standard_normal((N, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def layer(attention_out, x0, dt):
    """tokdyn's attention sub-step: LN(x + a dt Attn(x)), LN(v) = v / |v| row by row."""
    y = x0 + FACTOR * dt * attention_out
    return y / np.sqrt(np.sum(y * y, axis=1, keepdims=True))


# ------------------------------------------------------------------------------------------ agreement

def check_agreement(args, N, work, torch):
    output = os.path.join(work, "check.h5")
    deck = os.path.join(work, "check.ini")
    write_deck(deck, N, args.d, 1, args.beta, output, snapshot_every=1)
    run_tokdyn(args, args.ranks, "transformer (agreement check)", ["transformer", deck], work)
    with open_complete_run(output) as h5:
        try:
            layers = list(h5["tokens/layer"][...])
            X = h5["tokens/X"]
            if 0 not in layers or 1 not in layers:
                raise BenchError(f"{output}: snapshots of layers {layers}, expected 0 and 1")
            x0 = np.asarray(X[layers.index(0)], dtype=np.float64)
            x1 = np.asarray(X[layers.index(1)], dtype=np.float64)
        except KeyError as exc:
            raise BenchError(f"{output}: no {exc.args[0] if exc.args else 'tokens'} in the run file") from None
    if x0.shape != (N, args.d):
        raise BenchError(f"{output}: tokens of shape {x0.shape}, expected ({N}, {args.d})")
    dt = T_HORIZON / 1
    result = {"N": N, "layers": 1, "T": T_HORIZON, "dt": dt, "factor": FACTOR, "beta": args.beta,
              "tolerance": args.tolerance, "max_abs_diff": {}}
    numpy_x1 = layer(numpy_attention(x0, args.beta, args.block), x0, dt)
    result["max_abs_diff"]["numpy_tokdyn"] = float(np.max(np.abs(numpy_x1 - x1)))
    if torch is not None:
        a = torch_attention(torch, torch.from_numpy(x0), args.beta, args.block).numpy()
        torch_x1 = layer(a, x0, dt)
        result["max_abs_diff"]["pytorch_tokdyn"] = float(np.max(np.abs(torch_x1 - x1)))
        result["max_abs_diff"]["numpy_pytorch"] = float(np.max(np.abs(torch_x1 - numpy_x1)))
    result["max_step"] = float(np.max(np.abs(x1 - x0)))  # how far the layer moved the tokens: the check's scale
    worst = max(result["max_abs_diff"].values())
    result["agree"] = bool(worst <= args.tolerance)  # NaN fails
    return result


# ----------------------------------------------------------------------------------------------- main

def rate_text(x):
    if x is None:
        return "n/a"
    mantissa, _, exponent = f"{x:.2e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def ratio_text(a, b):
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def markdown(rows):
    head = ["N", "tokdyn bench", "tokdyn transformer", "NumPy", "PyTorch", "bench / NumPy",
            "bench / PyTorch", "transformer / NumPy", "transformer / PyTorch"]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for r in rows:
        b, t, n = r["tokdyn_bench"]["pairs_per_s"], r["tokdyn_transformer"]["pairs_per_s"], r["numpy"]["pairs_per_s"]
        p = r["pytorch"]["pairs_per_s"] if r["pytorch"] else None
        cells = [str(r["N"]), rate_text(b), rate_text(t), rate_text(n), rate_text(p), ratio_text(b, n),
                 ratio_text(b, p), ratio_text(t, n), ratio_text(t, p)]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def check_args(args):
    args.sizes = parse_list(args.N, "--N")
    check_minimums(args, (("d", 2), ("ranks", 1), ("threads", 1), ("layers", 1), ("repeats", 1), ("warmup", 0),
                          ("block", 1)))
    if not (args.beta >= 0 and args.beta <= 709.78):
        raise BenchError("--beta must be in [0, 709.78] (tokdyn's attention.beta range)")
    if not args.tolerance > 0:
        raise BenchError("--tolerance must be > 0")
    for o in args.overrides:
        key = o[2:].partition("=")[0] if o.startswith("--") and "=" in o else ""
        section, dot, name = key.partition(".")
        if not (dot and section and name):
            raise BenchError(f"unrecognised argument '{o}' (deck overrides are --section.key=value)")
        if key == "run.output":
            raise BenchError(f"override '{o}': the script names the run files (in a temporary directory)")
        if section not in OVERRIDABLE:
            raise BenchError(f"override '{o}': only [{'], ['.join(OVERRIDABLE)}] keys may be overridden "
                             f"(N, d, beta, the layers: --N, --d, --beta, --layers)")
    check_tools(args)  # the transformer runs start in a temporary directory: absolute paths


def import_libraries(threads):
    """NumPy with its BLAS on `threads` threads (the variables must be set before the import), and PyTorch
    when it imports (None otherwise)."""
    global np
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    if "numpy" in sys.modules:
        raise BenchError("internal: numpy was imported before its thread count was set")
    require_modules(PROG, ("numpy", "h5py"))  # now loaded: an installation that fails to import says so
    import numpy

    np = numpy
    sys.path.insert(0, HERE)  # tokdyn_h5
    torch = import_torch()
    if torch is not None:
        torch.set_num_threads(threads)
    return torch


def bench(args):
    check_args(args)
    torch = import_libraries(args.threads)
    host = machine()
    versions = {"tokdyn": tokdyn_version(args.tokdyn_path), "python": platform.python_version(), "numpy": np.__version__,
                "pytorch": torch.__version__ if torch is not None else None}
    print(f"machine: {host['processor']}, {host['cpus']} CPUs ({host['usable_cpus']} usable); {host['system']}")
    print(f"versions: tokdyn {versions['tokdyn'] or 'unknown (no --version)'}; Python {versions['python']}, "
          f"NumPy {versions['numpy']}, PyTorch {versions['pytorch'] or 'not installed (python3-torch)'}")
    print(f"layer: softmax self-attention, Q = K = V = I, beta = {args.beta:g}, d = {args.d}, float64; tokdyn on "
          f"{args.ranks} rank{'s' if args.ranks > 1 else ''}, NumPy and PyTorch on {args.threads} "
          f"thread{'s' if args.threads > 1 else ''}; best of {args.repeats} after {args.warmup} untimed",
          flush=True)

    result = {"d": args.d, "beta": args.beta, "dtype": "float64", "ranks": args.ranks, "threads": args.threads,
              "layers": args.layers, "repeats": args.repeats, "warmup": args.warmup, "block": args.block,
              "overrides": args.overrides, "machine": host, "versions": versions, "rows": []}
    with tempfile.TemporaryDirectory(prefix="bench_compare.") as work:
        check = check_agreement(args, args.sizes[0], work, torch)
        result["agreement"] = check
        diffs = ", ".join(f"{PAIR_LABELS[k]} {v:.2e}" for k, v in check["max_abs_diff"].items())
        print(f"agreement at N = {check['N']} (one layer, dt = {check['dt']:g}; the layer moves tokens by up to "
              f"{check['max_step']:.2e}): max |difference| of X_1: {diffs}; tolerance {args.tolerance:.1e}: "
              f"{'ok' if check['agree'] else 'DISAGREE'}", flush=True)
        if not check["agree"]:
            if args.json:
                write_json(args.json, result)
            bad = ", ".join(f"{PAIR_LABELS[k]} {v:.2e}" for k, v in check["max_abs_diff"].items() if not v <= args.tolerance)
            raise BenchError(f"the layer at N = {check['N']} disagrees: max |difference| of X_1 {bad} "
                             f"> tolerance {args.tolerance:.1e}")
        for N in args.sizes:
            row = {"N": N, "pairs": N * N}
            row["tokdyn_bench"] = tokdyn_bench(args, N)
            row["tokdyn_transformer"] = tokdyn_transformer(args, N, work)
            x = uniform_tokens(N, args.d)
            seconds, _ = best_of(lambda: numpy_attention(x, args.beta, args.block), args.repeats, args.warmup)
            row["numpy"] = {"pairs_per_s": N * N / seconds, "seconds": seconds}
            row["pytorch"] = None
            if torch is not None:
                tx = torch.from_numpy(x)
                seconds, _ = best_of(lambda: torch_attention(torch, tx, args.beta, args.block), args.repeats,
                                     args.warmup)
                row["pytorch"] = {"pairs_per_s": N * N / seconds, "seconds": seconds}
            result["rows"].append(row)
            print(f"N = {N}: pairs/s tokdyn bench {rate_text(row['tokdyn_bench']['pairs_per_s'])}, "
                  f"tokdyn transformer {rate_text(row['tokdyn_transformer']['pairs_per_s'])}, "
                  f"NumPy {rate_text(row['numpy']['pairs_per_s'])}, PyTorch "
                  f"{rate_text(row['pytorch']['pairs_per_s'] if row['pytorch'] else None)}", flush=True)
    for row in result["rows"]:
        n, p = row["numpy"]["pairs_per_s"], row["pytorch"]["pairs_per_s"] if row["pytorch"] else None
        for name in ("tokdyn_bench", "tokdyn_transformer"):
            t = row[name]["pairs_per_s"]
            row[name]["over_numpy"] = t / n
            row[name]["over_pytorch"] = t / p if p else None
    result["markdown"] = markdown(result["rows"])
    print()
    print(f"pairs/s (N^2 per layer / seconds); tokdyn transformer: {args.layers} layers with the default "
          f"diagnostics{' and ' + ' '.join(args.overrides) if args.overrides else ''}; ratios above 1: tokdyn is faster")
    print()
    print(result["markdown"])
    if args.json:
        write_json(args.json, result)
    return 0


def parser():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--N", default="4096,16384,65536", help="token counts, a comma list (default 4096,16384,65536)")
    ap.add_argument("--d", type=int, default=16, help="dimension (default 16)")
    ap.add_argument("--beta", type=float, default=1.0, help="inverse temperature (default 1)")
    ap.add_argument("--ranks", type=int, default=2, help="tokdyn's MPI ranks (default 2)")
    ap.add_argument("--threads", type=int, help="NumPy's and PyTorch's threads (default: --ranks)")
    ap.add_argument("--layers", type=int, default=3, help="layers of the timed tokdyn transformer runs (default 3)")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes, best taken (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed passes first (default 1)")
    ap.add_argument("--block", type=int, default=2048, help="query rows per block in NumPy/PyTorch (default 2048)")
    ap.add_argument("--tolerance", type=float, default=TOLERANCE,
                    help=f"largest |difference| of the agreement check (default {TOLERANCE:g})")
    add_tool_options(ap)
    return ap


def main(argv=None):
    args, overrides = parser().parse_known_args(argv)
    args.overrides = overrides
    if args.threads is None:
        args.threads = args.ranks
    return exit_status(PROG, bench, args)


if __name__ == "__main__":
    sys.exit(main())
