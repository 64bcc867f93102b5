#!/usr/bin/python3
"""Compares the datasets of two tokdyn run files: bitwise (--tol 0) or to a relative tolerance."""
import argparse
import sys

import h5py
import numpy as np


def datasets(f):
    """Every dataset but timings (attribute `timing`), the one thing two runs of a deck do not share."""
    names = []
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and "timing" not in o.attrs else None)
    return sorted(names)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--tol", type=float, default=0.0, help="max |a - b| / max(1, |a|); 0 means bitwise")
    args = p.parse_args()
    with h5py.File(args.a, "r") as fa, h5py.File(args.b, "r") as fb:
        na, nb = datasets(fa), datasets(fb)
        if na != nb:
            sys.exit(f"compare_runs: datasets differ: {na} vs {nb}")
        worst = 0.0
        for n in na:
            x, y = fa[n][()], fb[n][()]
            if x.shape != y.shape:
                sys.exit(f"compare_runs: {n}: shapes {x.shape} vs {y.shape}")
            if args.tol == 0:
                same = np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)
                if not same:
                    sys.exit(f"compare_runs: {n} differs (bitwise comparison)")
            elif x.size:
                if x.dtype.kind in "iu" and n.endswith("histogram"):
                    # A cosine within round-off of a bin edge may land in the neighbouring bin.
                    moved = np.abs(x - y).sum() / 2
                    if moved > max(2, 1e-3 * x.sum()):
                        sys.exit(f"compare_runs: {n}: {moved} pairs in other bins")
                    continue
                xf, yf = x.astype(float), y.astype(float)
                ok = np.isfinite(xf) & np.isfinite(yf)
                err = np.max(np.abs(xf[ok] - yf[ok]) / np.maximum(1.0, np.abs(xf[ok]))) if ok.any() else 0.0
                if not np.array_equal(np.isfinite(xf), np.isfinite(yf)):
                    sys.exit(f"compare_runs: {n}: NaN in one file only")
                worst = max(worst, err)
                if err > args.tol:
                    sys.exit(f"compare_runs: {n}: relative difference {err:.3g} > {args.tol:g}")
        print(f"compare_runs: {len(na)} datasets agree (max relative difference {worst:.3g})")


if __name__ == "__main__":
    main()
