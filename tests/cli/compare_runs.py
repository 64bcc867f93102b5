#!/usr/bin/python3
"""Compares tokdyn run files pairwise: every dataset, bitwise (--tol 0) or to a relative tolerance, and every
attribute of the groups and datasets below the root (results such as /markov@t_I or /train@final_val_loss),
exactly. Timings are the one thing two runs of a deck do not share and are skipped: datasets with the
attribute `timing`, attributes whose names end in `seconds` or `_per_second`. The root's attributes are the
run's identity (its id, times, output name, run-control keys) and are not compared.

    compare_runs.py A B [A2 B2 ...] [--tol T] [--except-attribute PATH@NAME ...]

--except-attribute leaves one attribute out, for runs that differ in it by design (two optimizers that take
the same steps: /train@optimizer).
"""
import argparse
import sys

import h5py
import numpy as np


def is_timing(name):
    return name.endswith("seconds") or name.endswith("_per_second")


# HDF5's dimension-scale links: object references, equal in meaning but not comparable as values.
REFERENCES = ("DIMENSION_LIST", "REFERENCE_LIST")


def datasets(f):
    """Every dataset but timings."""
    names = []
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and "timing" not in o.attrs else None)
    return sorted(names)


def attribute_difference(fa, fb, excepted=()):
    """'' when every non-timing attribute of every object below the root agrees exactly (but those named
    PATH@NAME in excepted), else what differs."""
    objects = []
    fa.visit(objects.append)
    for n in objects:
        if n not in fb:
            continue  # the datasets' comparison names a missing object
        a, b = fa[n].attrs, fb[n].attrs
        ka = sorted(k for k in a if not is_timing(k) and k not in REFERENCES)
        kb = sorted(k for k in b if not is_timing(k) and k not in REFERENCES)
        if ka != kb:
            return f"{n}: attributes differ: {ka} vs {kb}"
        for k in ka:
            if f"/{n}@{k}" in excepted:
                continue
            x, y = np.asarray(a[k]), np.asarray(b[k])
            same = np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)
            if not same:
                return f"attribute {n}@{k} differs ({a[k]!r} vs {b[k]!r})"
    return ""


def difference(path_a, path_b, tol, excepted=()):
    """'' when the files agree, else the first difference; the largest relative difference (tol > 0)."""
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        na, nb = datasets(fa), datasets(fb)
        if na != nb:
            return f"datasets differ: {na} vs {nb}", 0.0
        worst = 0.0
        for n in na:
            x, y = fa[n][()], fb[n][()]
            if x.shape != y.shape:
                return f"{n}: shapes {x.shape} vs {y.shape}", worst
            if tol == 0:
                same = np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)
                if not same:
                    return f"{n} differs (bitwise comparison)", worst
            elif x.size:
                if x.dtype.kind in "iu" and n.endswith("histogram"):
                    # A cosine within round-off of a bin edge may land in the neighbouring bin.
                    moved = np.abs(x - y).sum() / 2
                    if moved > max(2, 1e-3 * x.sum()):
                        return f"{n}: {moved} pairs in other bins", worst
                    continue
                xf, yf = x.astype(float), y.astype(float)
                ok = np.isfinite(xf) & np.isfinite(yf)
                err = np.max(np.abs(xf[ok] - yf[ok]) / np.maximum(1.0, np.abs(xf[ok]))) if ok.any() else 0.0
                if not np.array_equal(np.isfinite(xf), np.isfinite(yf)):
                    return f"{n}: NaN in one file only", worst
                worst = max(worst, err)
                if err > tol:
                    return f"{n}: relative difference {err:.3g} > {tol:g}", worst
        # Attributes hold results too; across rank counts (tol > 0) their last bits may differ.
        if tol == 0:
            why = attribute_difference(fa, fb, excepted)
            if why:
                return why, worst
        return "", worst


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("files", nargs="+", help="pairs of run files")
    p.add_argument("--tol", type=float, default=0.0, help="max |a - b| / max(1, |a|); 0 means bitwise")
    p.add_argument("--except-attribute", action="append", default=[], metavar="PATH@NAME",
                   help="an attribute not compared, e.g. /train@optimizer")
    args = p.parse_args()
    if len(args.files) % 2:
        sys.exit("compare_runs: give the files in pairs")
    for a, b in zip(args.files[::2], args.files[1::2]):
        why, worst = difference(a, b, args.tol, args.except_attribute)
        if why:
            sys.exit(f"compare_runs: {a} vs {b}: {why}")
        print(f"compare_runs: {a} and {b} agree (max relative difference {worst:.3g})")


if __name__ == "__main__":
    main()
