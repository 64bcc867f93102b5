"""Small helpers shared by the tokdyn post-processing scripts: reading HDF5 files and attributes,
and the command-line convention (one-line error message, exit status 2)."""

import argparse
import os
import sys

import numpy as np


def to_str(value):
    """Return an HDF5 string attribute as str (h5py may give bytes or str)."""
    if isinstance(value, np.ndarray):
        value = value.item() if value.size == 1 else value.tolist()
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", errors="replace")
    return str(value)


def to_scalar(value):
    """Return a numeric HDF5 attribute as a Python scalar."""
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return value.item() if hasattr(value, "item") else value


def open_h5(path, error):
    """Open path read-only as an h5py.File; raise error(message) when it is missing, not a regular
    file, or not HDF5."""
    import h5py  # imported here so the scripts' --help works without h5py

    if not os.path.exists(path):
        raise error(f"no such file: {path}")
    if not os.path.isfile(path):
        raise error(f"not a regular file: {path}")
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise error(f"cannot open {path} as HDF5: {exc}") from None


def study_group(h5, path, command, group, error):
    """The group /<group> of a file written by `tokdyn <command>`; error(message) when the file is
    another command's or lacks the group."""
    found = to_str(h5.attrs.get("command", ""))
    if found != command:
        raise error(f"{path}: root attribute 'command' is '{found}', not '{command}'")
    if group not in h5:
        raise error(f"{path}: missing group /{group}")
    return h5[group]


def read_datasets(group, path, names, error, dtype=None):
    """{name: numpy array} of the named datasets of an h5py group; error(message) naming the first missing."""
    out = {}
    for name in names:
        if name not in group:
            raise error(f"{path}: missing dataset {group.name}/{name}")
        out[name] = np.asarray(group[name][()], dtype=dtype)
    return out


def require_attributes(group, path, names, error):
    """error(message) naming the first of the attributes missing from an h5py group."""
    for name in names:
        if name not in group.attrs:
            raise error(f"{path}: missing attribute {group.name}/{name}")


def run_cli(prog, error, body):
    """Run body() for a script's main: on `error` print "PROG: error: ..." on stderr and return 2;
    otherwise print the paths body returned (None: nothing), one a line, and return 0."""
    try:
        written = body()
    except error as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    for path in written or ():
        print(path)
    return 0


def cli_main(prog, doc, error, arguments, body, argv=None):
    """A script's main: parse argv by `arguments`, pairs (flags, add_argument options), with the
    first line of doc as the description, then return run_cli(prog, error, lambda: body(args))."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    for flags, options in arguments:
        parser.add_argument(*flags, **options)
    args = parser.parse_args(argv)
    return run_cli(prog, error, lambda: body(args))
