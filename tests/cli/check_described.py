#!/usr/bin/python3
"""Checks that a tokdyn run file describes itself: every dataset has a non-empty description, units and
axes (the axes as many as the dataset's dimensions, 'scalar' for none), no group is empty, the root has the
PETSc options and every key of the stored deck as a typed attribute equal to the deck's value. One line per
problem on stderr, exit 1 when there is any."""
import configparser
import sys

import h5py
import numpy as np


def deck_values(text):
    """The resolved deck's keys, 'section.key' -> text value."""
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"), inline_comment_prefixes=None,
                                       strict=False)  # a section may come twice (two commands' keys share it)
    parser.optionxform = str
    parser.read_string(text)
    return {f"{s}.{k}": v for s in parser.sections() for k, v in parser[s].items()}


def typed_equal(attr, text):
    """The typed attribute against the deck's text: int64 for integers and booleans (0/1), double, or str."""
    if isinstance(attr, (bytes, str)):
        value = attr.decode() if isinstance(attr, bytes) else attr
        return value == text.strip().strip('"')
    if isinstance(attr, (np.integer, int)):
        t = text.strip().lower()
        return int(attr) == (1 if t == "true" else 0 if t == "false" else int(t))
    return float(attr) == float(text) or (np.isnan(float(attr)) and np.isnan(float(text)))


def check(path):
    problems = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                if len(obj) == 0 and len(obj.attrs) == 0:
                    problems.append(f"group /{name} is empty")
                return
            for key in ("description", "units", "axes"):
                value = obj.attrs.get(key)
                if value is None or not str(value.decode() if isinstance(value, bytes) else value).strip():
                    problems.append(f"dataset /{name} has no {key}")
            axes = obj.attrs.get("axes")
            if axes is not None:
                axes = axes.decode() if isinstance(axes, bytes) else str(axes)
                expected = max(obj.ndim, 1)
                count = 1 if axes == "scalar" else len(axes.split(","))
                if count != expected and not (obj.ndim == 0 and axes == "scalar"):
                    problems.append(f"dataset /{name}: axes '{axes}' for {obj.ndim} dimensions")
        f.visititems(visit)
        if "petsc_options" not in f.attrs:
            problems.append("no root attribute petsc_options")
        deck = f.attrs["deck"]
        for key, text in deck_values(deck.decode() if isinstance(deck, bytes) else deck).items():
            if key not in f.attrs:
                problems.append(f"deck key {key} is not a root attribute")
            elif not typed_equal(f.attrs[key], text):
                problems.append(f"root attribute {key} = {f.attrs[key]!r}, the deck says {text!r}")
        if "undescribed_datasets" in f.attrs:
            problems.append(f"undescribed_datasets: {f.attrs['undescribed_datasets']}")
    return problems


def main():
    bad = 0
    for path in sys.argv[1:]:
        for p in check(path):
            print(f"{path}: {p}", file=sys.stderr)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
