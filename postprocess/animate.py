#!/usr/bin/env python3
"""Make a movie of a tokdyn run's token snapshots, and an XDMF file beside the run file so that ParaView opens it.

Usage:
    animate.py RUN.h5 [-o OUT] [--format mp4|gif|auto] [--fps F] [--dpi D] [--xdmf-only] [--no-xdmf]
               [--allow-partial]

The movie has one frame per snapshot of /tokens/X (transformer, sde, power; a meanfield run of the quadrature
solver: /meanfield/points, the marker area proportional to each point's mass), titled with the frame's layer
(sde: step) and model time and, above, the run's parameters. The colour of a token is its index, so a token can
be followed from frame to frame.
    d = 2: the tokens on the unit circle S^1 (equal aspect);
    d = 3: the tokens on S^2 in 3-D, a wireframe unit sphere behind them, the same view in every frame;
    d > 3: the projection on the two leading principal components of all the snapshots' tokens together (centred
           on their mean; the axes say the share of the variance each carries), with the outline of the unit
           sphere's projection, a unit circle.
The axis limits are the same in every frame and hold every point: the tokens of a run whose tokens leave the
sphere (model.norm = pre) are drawn where they are, the unit circle or sphere staying as a reference.

Format: MP4 (H.264, through ffmpeg) when ffmpeg is on PATH, else a GIF (matplotlib's PillowWriter); --format
gif always writes a GIF, --format mp4 needs ffmpeg. With --format auto (the default) an -o ending in .gif or
.mp4 picks that format. The default output is RUN.mp4 (RUN.gif) beside the run file. The movie is written under
a temporary name in its directory and renamed when complete: an existing file of the same name is replaced only
by a whole movie.

XDMF: RUN.xdmf beside the run file (unless --no-xdmf; --xdmf-only writes it alone, quickly: it holds no data,
and matplotlib is not needed). An XDMF 2 temporal collection with a grid per snapshot: the snapshot's N points as
a Polyvertex topology, their coordinates an HDF5 hyperslab of the run file (named relative to the XDMF, so the
two files can move together), the snapshot's time (tokens/time) as the grid's time, and per point the token
index ("token"; a meanfield run: also the point's "mass"). Geometry XY for d = 2, XYZ for d = 3; for d > 3 the
first three coordinates x1, x2, x3 (the file says so in an Information element). ParaView: File > Open RUN.xdmf,
the "XDMF Reader", Apply, then Play. Written under a temporary name and renamed, as the movie.

The paths written are printed (the movie, then the XDMF).

Errors (missing file, not HDF5, no /tokens group, a dataset missing, of another rank or length than those it goes
with, empty (no snapshots) or holding text, NaN or Inf among the tokens, --format mp4 without ffmpeg, a run whose
status is not complete without --allow-partial) end with a one-line message "animate.py: error: ..." on stderr and
exit status 2. With --allow-partial an unfinished or failed run is drawn, its frames marked "partial (status: X)";
a failed run whose later snapshots hold NaN or Inf is drawn up to the last finite one (a warning says so).
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokdyn_h5 import require_modules  # noqa: E402

# One line naming what is missing, before numpy and h5py load; matplotlib only when a movie is made.
require_modules("animate.py", ("numpy", "h5py"))

import numpy as np  # noqa: E402
from tokdyn_h5 import (ALLOW_PARTIAL, check_shapes, cli_main, mark_partial, open_run, partial_label,  # noqa: E402
                       plain_text, read_datasets, run_parameters, set_title, to_scalar, to_str)

PROG = "animate.py"
FORMATS = ("mp4", "gif")
# Where the snapshots are, by group: (points, layer or None, time); a meanfield run of the quadrature solver has
# no /tokens but its points (and their masses).
SOURCES = {"tokens": ("X", "layer", "time"), "meanfield": ("points", None, "snapshot_time")}


class AnimateError(Exception):
    """A run file that cannot be animated, or an output that cannot be written."""


def find_ffmpeg():
    """The path of ffmpeg on PATH, or None."""
    return shutil.which("ffmpeg")


def beside(runfile, extension):
    """RUNFILE with .h5 (or .hdf5) replaced by extension (".mp4"), or extension appended."""
    root, ext = os.path.splitext(runfile)
    return (root if ext.lower() in (".h5", ".hdf5") else runfile) + extension


def movie_format(requested, output):
    """"mp4" or "gif": what --format asks, auto: the -o's extension, else mp4 when ffmpeg is on PATH."""
    if requested == "auto":
        ext = os.path.splitext(output or "")[1].lower()
        requested = ext[1:] if ext in (".mp4", ".gif") else "mp4" if find_ffmpeg() else "gif"
    if requested == "mp4" and not find_ffmpeg():
        raise AnimateError("an MP4 needs ffmpeg, which is not on PATH (Debian: apt-get install ffmpeg); "
                           "--format gif writes a GIF without it")
    return requested


def read_run(h5, path, status, allow_partial):
    """The run's snapshots: a dict of its parameters, the points' dataset (h5py, read a snapshot at a time: a run's
    snapshots may not fit in memory), their layers and times, and the number of snapshots to draw (count)."""
    import h5py

    run = {"path": path, "status": status, "command": to_str(h5.attrs.get("command", "")) or "transformer",
           "parameters": run_parameters(h5, path, AnimateError),
           "ranks": to_scalar(h5.attrs["ranks"]) if "ranks" in h5.attrs else None,
           "version": to_str(h5.attrs.get("tokdyn_version", "")), "revision": to_str(h5.attrs.get("git_revision", ""))}
    group_name = next((g for g in SOURCES if isinstance(h5.get(g), h5py.Group) and SOURCES[g][0] in h5[g]),
                      "tokens")
    if not isinstance(h5.get(group_name), h5py.Group):
        raise AnimateError(f"{path}: missing group /tokens (the file holds no token snapshots)")
    group, (points, layer, time) = h5[group_name], SOURCES[group_name]
    where = f"/{group_name}/"
    if points not in group or not isinstance(group[points], h5py.Dataset):
        raise AnimateError(f"{path}: missing dataset {where}{points}")
    X = group[points]
    if X.dtype.kind not in "iuf":  # read_datasets's words; the points themselves are read a snapshot at a time
        what = "text" if X.dtype.kind in "OSU" else f"{X.dtype} values"
        raise AnimateError(f"{path}: dataset {where}{points} holds {what}, not numbers")
    if X.ndim != 3 or X.shape[2] < 2:
        raise AnimateError(f"{path}: dataset {where}{points} must have shape [snapshots, points, d >= 2], "
                           f"got {list(X.shape)}")
    names = ([layer] if layer else []) + [name for name in (time, "masses") if name in group]  # layer: required
    series = read_datasets(group, path, names, AnimateError)
    shapes = {points: ("snapshots", "points", "d"), **{name: ("snapshots",) for name in (layer, time) if name},
              "masses": ("points",)}
    check_shapes(path, {points: X, **series}, shapes, AnimateError, where)
    run.update(X=X, name=f"{where}{points}", layer=series.get(layer), time=series.get(time),
               masses=series.get("masses"), count=finite_snapshots(run, X, series.get(layer), allow_partial))
    return run


def finite_snapshots(run, X, layer, allow_partial):
    """How many leading snapshots hold only finite numbers: all of them, or (--allow-partial, a run not complete)
    those before the first with NaN or Inf; otherwise NaN or Inf is an error."""
    for i in range(X.shape[0]):
        if np.isfinite(X[i]).all():
            continue
        at = f"snapshot {i}" + (f" (layer {int(layer[i])})" if layer is not None else "")
        if not (allow_partial and run["status"] != "complete") or i == 0:
            raise AnimateError(f"{run['path']}: dataset {X.name} holds NaN or Inf at {at}")
        print(f"{PROG}: warning: {run['path']}: dataset {X.name} holds NaN or Inf from {at} on: "
              f"drawing the {i} snapshots before it", file=sys.stderr)
        return i
    return X.shape[0]


# ------------------------------------------------------------------------------------------ XDMF

def xdmf_text(run, h5name):
    """The XDMF (version 2) of the run's snapshots, its data read from the run file named h5name (relative to
    the XDMF's directory)."""
    import xml.etree.ElementTree as ET

    X = run["X"]
    n, d = X.shape[1], X.shape[2]
    k = min(d, 3)
    numbers = {"f": "Float", "i": "Int", "u": "UInt"}[X.dtype.kind]
    root = ET.Element("Xdmf", Version="2.0")
    domain = ET.SubElement(root, "Domain")
    about = f"tokdyn {run['command']} run {h5name} (status {run['status']}): {n} points on S^{d - 1}"
    if d == 2:
        about += "; geometry XY (z = 0)"
    elif d > 3:
        about += f"; d = {d}: the geometry is the first three coordinates x1, x2, x3"
    ET.SubElement(domain, "Information", Name="tokdyn", Value=about)
    # The token index once; each grid refers to it (an index written per grid would repeat N numbers S times).
    token = ET.SubElement(domain, "DataItem", Name="token", Dimensions=str(n), NumberType="Int", Format="XML")
    token.text = " ".join(map(str, range(n)))
    collection = ET.SubElement(domain, "Grid", Name=run["name"], GridType="Collection", CollectionType="Temporal")
    times = run["time"] if run["time"] is not None else run["layer"]
    for i in range(run["count"]):
        label = f"snapshot {i}" + (f", layer {int(run['layer'][i])}" if run["layer"] is not None else "")
        grid = ET.SubElement(collection, "Grid", Name=label, GridType="Uniform")
        ET.SubElement(grid, "Time", Value=repr(float(times[i])) if times is not None else str(i))
        ET.SubElement(grid, "Topology", TopologyType="Polyvertex", NumberOfElements=str(n), NodesPerElement="1")
        geometry = ET.SubElement(grid, "Geometry", GeometryType="XY" if d == 2 else "XYZ")
        slab = ET.SubElement(geometry, "DataItem", ItemType="HyperSlab", Dimensions=f"1 {n} {k}", Type="HyperSlab")
        # start, stride and count of the slab in [snapshot, point, coordinate]
        ET.SubElement(slab, "DataItem", Dimensions="3 3", Format="XML").text = f"{i} 0 0 1 1 1 1 {n} {k}"
        ET.SubElement(slab, "DataItem", Dimensions=" ".join(map(str, X.shape)), NumberType=numbers,
                      Precision=str(X.dtype.itemsize), Format="HDF").text = f"{h5name}:{run['name']}"
        attribute = ET.SubElement(grid, "Attribute", Name="token", AttributeType="Scalar", Center="Node")
        ET.SubElement(attribute, "DataItem", Reference="XML", Dimensions=str(n),  # ParaView needs the size here
                      NumberType="Int").text = '/Xdmf/Domain/DataItem[@Name="token"]'
        if run["masses"] is not None:
            attribute = ET.SubElement(grid, "Attribute", Name="mass", AttributeType="Scalar", Center="Node")
            ET.SubElement(attribute, "DataItem", Dimensions=str(n), NumberType="Float", Precision="8",
                          Format="HDF").text = f"{h5name}:/meanfield/masses"
    ET.indent(root)
    return '<?xml version="1.0" ?>\n<!DOCTYPE Xdmf SYSTEM "Xdmf.dtd" []>\n' + ET.tostring(root, "unicode") + "\n"


def write_complete(path, write, extension):
    """Write path through write(a temporary name in its directory, ending in extension: ffmpeg and Pillow take
    the format from it), then rename it to path: under that name there is the old file or the whole new one,
    never a part. Returns path."""
    directory, name = os.path.split(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp" + extension, dir=directory)
    except OSError as exc:
        raise AnimateError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    try:
        write(temporary)
        mask = os.umask(0)  # mkstemp makes the file private; the output gets the usual mode
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path


def write_xdmf(run, path):
    text = xdmf_text(run, os.path.basename(run["path"]))

    def write(temporary):
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)

    return write_complete(path, write, ".xdmf")


# ------------------------------------------------------------------------------------------ the movie

def principal_axes(X, count):
    """(mean, components [d, d] as rows, share of the variance of each) of the points of snapshots [0, count)
    together, components by decreasing variance, each signed so that its largest entry is positive."""
    d = X.shape[2]
    total, first, second = 0, np.zeros(d), np.zeros((d, d))
    for i in range(count):
        x = np.asarray(X[i], dtype=float)
        total += x.shape[0]
        first += x.sum(axis=0)
        second += x.T @ x
    mean = first / total
    variance, vectors = np.linalg.eigh(second / total - np.outer(mean, mean))
    order = np.argsort(variance)[::-1]
    variance, vectors = np.clip(variance[order], 0.0, None), vectors[:, order].T
    vectors *= np.where(vectors[np.arange(d), np.abs(vectors).argmax(axis=1)] < 0, -1.0, 1.0)[:, None]
    share = variance / variance.sum() if variance.sum() > 0 else np.zeros(d)
    return mean, vectors, share


class Frames:
    """How a run's snapshots are drawn: coordinates(i) the drawn coordinates of snapshot i (d > 3: its principal
    components), the axis labels and limits, the same for every frame."""

    def __init__(self, run):
        self.run, self.X, self.count = run, run["X"], run["count"]
        self.d = self.X.shape[2]
        self.dims = self.d if self.d <= 3 else 2  # the drawn coordinates
        if self.d > 3:
            self.mean, self.axes, self.share = principal_axes(self.X, self.count)
            self.centre = -self.axes[:2] @ self.mean  # where the projection of the unit sphere (a disc) is
            self.labels = [f"PC{j + 1} ({100 * self.share[j]:.1f} % of variance)" for j in range(2)]
        else:
            self.centre = np.zeros(self.dims)
            self.labels = [f"$x_{j + 1}$" for j in range(self.dims)]
        low, high, largest = self.centre - 1.0, self.centre + 1.0, 0.0
        for i in range(self.count):
            y = self.coordinates(i)
            low, high = np.minimum(low, y.min(axis=0)), np.maximum(high, y.max(axis=0))
            largest = max(largest, float(np.linalg.norm(self.X[i], axis=1).max()))
        self.largest_norm = largest
        # One square box for every axis (equal aspect), 5 % of room around the points and the reference.
        middle, half = (low + high) / 2, 1.05 * float((high - low).max()) / 2
        self.limits = [(m - half, m + half) for m in middle]

    def coordinates(self, i):
        x = np.asarray(self.X[i], dtype=float)
        return (x - self.mean) @ self.axes[:2].T if self.d > 3 else x

    def label(self, i):
        """The frame's title: its layer (sde: step) and model time, and which snapshot of how many."""
        run = self.run
        parts = []
        if run["layer"] is not None:
            parts.append(f"{'step' if run['command'] == 'sde' else 'layer'} {int(run['layer'][i])}")
        if run["time"] is not None and run["command"] != "power":  # power's time is its layer
            parts.append(f"t = {run['time'][i]:.4g}")
        return ", ".join(parts) + f"  (snapshot {i + 1} of {self.count})"


def make_figure(run):
    """The movie's figure and draw(i), which shows snapshot i in it."""
    import matplotlib.pyplot as plt

    frames = Frames(run)
    fig = plt.figure(figsize=(7.2, 8.0))
    three = frames.dims == 3
    # 3-D axes keep a margin of their own inside their box.
    ax = fig.add_axes((0.02, 0.03, 0.94, 0.78) if three else (0.12, 0.09, 0.8, 0.68),
                      projection="3d" if three else None)
    angle = np.linspace(0.0, 2.0 * np.pi, 361)
    if three:
        u, v = np.meshgrid(np.linspace(0.0, 2.0 * np.pi, 25), np.linspace(0.0, np.pi, 13))
        ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.75", lw=0.5)
        ax.view_init(elev=20, azim=-60)
        ax.set_box_aspect((1, 1, 1))
        ax.set_zlim(*frames.limits[2])
        ax.set_zlabel(frames.labels[2])
    else:
        ax.plot(frames.centre[0] + np.cos(angle), frames.centre[1] + np.sin(angle), color="0.6", lw=0.8)
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
    ax.set_xlim(*frames.limits[0])
    ax.set_ylim(*frames.limits[1])
    ax.set_xlabel(frames.labels[0])
    ax.set_ylabel(frames.labels[1])

    n = frames.X.shape[1]
    size = np.full(n, max(2.0, min(30.0, 3000.0 / n)))
    if run["masses"] is not None:  # the area of a quadrature point: its mass
        size = size * run["masses"] * n
    colour = plt.get_cmap("viridis")(np.linspace(0.0, 1.0, n))
    params = dict(run["parameters"])
    params.setdefault("model.N", n)
    params.setdefault("model.d", frames.d)
    extra = []
    if frames.largest_norm > 1.0 + 1e-6:
        extra.append(f"tokens off the sphere: |x| up to {frames.largest_norm:.3g}")
    if frames.d > 3:
        extra.append("principal components of all snapshots")
    # Below the top edge: a partial run's mark (mark_partial) sits in the top left corner.
    set_title(fig, run["command"], params, status=run["status"], extra=extra, y=0.955,
              color="black" if run["status"] == "complete" else "tab:red")
    footer = [os.path.basename(run["path"])] + ([f"{run['ranks']} ranks"] if run["ranks"] is not None else [])
    if run["version"]:
        footer.append(f"tokdyn {run['version']} ({run['revision'] or '?'})")
    fig.text(0.99, 0.005, plain_text("  |  ".join(footer)), ha="right", va="bottom", fontsize="small", color="0.4")
    mark_partial(fig, run["status"])
    shown = []

    def draw(i):
        while shown:
            shown.pop().remove()
        shade = {"depthshade": False} if three else {}  # a token's colour is its index, near or far
        shown.append(ax.scatter(*frames.coordinates(i).T, s=size, c=colour, alpha=0.85, edgecolors="none", **shade))
        ax.set_title(frames.label(i), fontsize="medium")

    return fig, draw


def write_movie(run, path, fmt, fps, dpi):
    """Write the run's movie to path as fmt (mp4, gif); return path."""
    require_modules(PROG, ("matplotlib",))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation

    fig, draw = make_figure(run)
    if fmt == "mp4":
        matplotlib.rcParams["animation.ffmpeg_path"] = find_ffmpeg()
        comment = partial_label(run["status"])
        writer = animation.FFMpegWriter(fps=fps, codec="h264", metadata={"comment": comment} if comment else None)
    else:
        writer = animation.PillowWriter(fps=fps)

    def write(temporary):
        with writer.saving(fig, temporary, dpi):
            for i in range(run["count"]):
                draw(i)
                writer.grab_frame()

    try:
        return write_complete(path, write, "." + fmt)
    except subprocess.CalledProcessError as exc:
        said = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        raise AnimateError(f"ffmpeg failed (exit status {exc.returncode}) writing {path}"
                           + (f": {said[-1]}" if said else "")) from None
    finally:
        plt.close(fig)


def animate(args):
    """Read the run file, write the movie and the XDMF as asked; return the paths written."""
    if args.xdmf_only and args.no_xdmf:
        raise AnimateError("--xdmf-only and --no-xdmf leave nothing to write")
    if not args.fps > 0 or not args.dpi > 0:
        raise AnimateError(f"--fps and --dpi must be positive (got {args.fps:g} and {args.dpi:g})")
    fmt = None if args.xdmf_only else movie_format(args.format, args.output)
    h5, status = open_run(args.runfile, AnimateError, args.allow_partial)
    written = []
    with h5:
        run = read_run(h5, args.runfile, status, args.allow_partial)
        if fmt is not None:
            written.append(write_movie(run, args.output or beside(args.runfile, "." + fmt), fmt, args.fps, args.dpi))
        if not args.no_xdmf:
            written.append(write_xdmf(run, beside(args.runfile, ".xdmf")))
    return written


ARGUMENTS = (
    (("runfile",), {"metavar": "RUN.h5", "help": "tokdyn run file with token snapshots (/tokens/X)"}),
    (("-o", "--output"), {"metavar": "OUT", "help": "the movie (default: RUN.mp4, or RUN.gif, beside the run file)"}),
    (("--format",), {"choices": ("auto",) + FORMATS, "default": "auto",
                     "help": "mp4 (needs ffmpeg), gif, or auto: by OUT's extension, else mp4 when ffmpeg is on "
                             "PATH, else gif (default)"}),
    (("--fps",), {"type": float, "default": 4.0, "help": "frames (snapshots) per second (default: 4)"}),
    (("--dpi",), {"type": float, "default": 100.0, "help": "pixels per inch of the 7.2 x 8 inch frames "
                                                           "(default: 100)"}),
    (("--xdmf-only",), {"action": "store_true", "help": "write only RUN.xdmf (no movie)"}),
    (("--no-xdmf",), {"action": "store_true", "help": "write only the movie (no RUN.xdmf)"}),
    ALLOW_PARTIAL,
)


def main(argv=None):
    return cli_main(PROG, __doc__, AnimateError, ARGUMENTS, animate, argv)


if __name__ == "__main__":
    sys.exit(main())
