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


# A run file's root attribute `status`: running | checkpointed | failed | complete. Only a complete run is
# plotted unless the script is given --allow-partial, and then its figure and outputs say "partial".
ALLOW_PARTIAL = (("--allow-partial",), {"action": "store_true",
                                        "help": "plot a file whose status is not complete (an unfinished or "
                                                "failed run): the figure and outputs are marked partial"})


def run_status(h5, path):
    """The status of an open run file: its root attribute 'status' ('missing' when absent). A file named
    *.part is never complete, whatever it says: a finished run is renamed to its output name."""
    status = to_str(h5.attrs["status"]) if "status" in h5.attrs else "missing"
    if status == "complete" and os.path.basename(path).endswith(".part"):
        return "complete, but still named .part"
    return status


def open_run(path, error, allow_partial, command=None):
    """Open a run file (open_h5) and check it: return (h5py.File, status). A file of another command than
    `command` (when given), and then one that is not complete unless allow_partial, raise error(message
    naming the file and its command or status)."""
    h5 = open_h5(path, error)
    try:
        if command is not None:
            require_command(h5, path, command, error)
        status = run_status(h5, path)
        if status != "complete" and not allow_partial:
            raise error(f"{path}: status is '{status}', not complete (an unfinished or failed run); "
                        f"--allow-partial plots it anyway")
    except error:
        h5.close()
        raise
    return h5, status


def partial_label(status):
    """The mark of figures and outputs from a run that is not complete: 'partial (status: X)'; '' when complete."""
    return "" if status == "complete" else f"partial (status: {status})"


def mark_partial(fig, status):
    """Stamp partial_label(status) in a red box at the top left of fig (nothing for a complete run) and return
    the savefig metadata that carries the same text in the PNG ('Description'), for tools and tests."""
    label = partial_label(status)
    if not label:
        return {}
    fig.text(0.005, 0.995, label, ha="left", va="top", fontsize="x-large", fontweight="bold", color="white",
             bbox={"boxstyle": "round", "facecolor": "tab:red", "edgecolor": "tab:red"}, zorder=10)
    return {"Description": label}


def require_command(h5, path, command, error):
    """error(message) unless the file was written by `tokdyn <command>` (its root attribute 'command')."""
    found = to_str(h5.attrs.get("command", ""))
    if found != command:
        raise error(f"{path}: root attribute 'command' is '{found}', not '{command}'")


def study_group(h5, path, command, group, error):
    """The group /<group> of a file written by `tokdyn <command>`; error(message) when the file is
    another command's or lacks the group."""
    require_command(h5, path, command, error)
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
