"""Small helpers shared by the tokdyn post-processing scripts: the Python modules a script needs, reading
HDF5 files and attributes (checked: numbers where numbers belong, series of one length, none empty), the
run's parameters (its resolved deck) and the figures' titles, and the command-line convention (one-line
error message, exit status 2, also for an error no check foresees; TOKDYN_TRACEBACK=1 shows its traceback).

This module imports only the standard library at load time (numpy, h5py and matplotlib inside the
functions that use them), so that require_modules can report a missing one."""

import argparse
import configparser
import importlib.util
import os
import shutil
import sys

# Where a module a script needs comes from on Debian (jobscripts/install-deps-debian.sh installs them).
DEBIAN_PACKAGES = {"numpy": "python3-numpy", "h5py": "python3-h5py", "matplotlib": "python3-matplotlib",
                   "scipy": "python3-scipy"}
PLOTTING = ("numpy", "h5py", "matplotlib")
# Set in the environment before re-running a script under TOKDYN_PYTHON, so that it is tried once.
_RETRIED = "TOKDYN_PYTHON_TRIED"


def require_modules(prog, modules=PLOTTING, load=True):
    """Exit with status 2 and one line on stderr naming the modules of `modules` this Python cannot import
    and how to get them; return when it has them all. Where the environment variable TOKDYN_PYTHON names
    another interpreter, the script (when prog is the script run, not a module it imports) is first run
    again under it (once), with the same arguments.

    load=False only looks the modules up without importing them (for a script that must set variables
    before numpy loads); a module that is found but fails when imported then shows later."""
    missing = []
    for name in modules:
        try:
            found = importlib.import_module(name) if load else importlib.util.find_spec(name)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] in missing:
                continue  # h5py without numpy: numpy is named already
            found = None
        except Exception:  # an installation whose import fails: as unusable as a missing one
            found = None
        if found is None:
            missing.append(name)
    if not missing:
        return
    other = os.environ.get("TOKDYN_PYTHON", "")
    program = shutil.which(other) or other if other else ""
    # Not again under the interpreter running now (jobscripts/lib-job.sh runs the scripts under TOKDYN_PYTHON).
    this_one = bool(program) and os.path.realpath(program) == os.path.realpath(sys.executable)
    if other and not this_one and not os.environ.get(_RETRIED) and os.path.basename(sys.argv[0]) == prog:
        os.environ[_RETRIED] = "1"
        try:
            os.execv(program, [program, sys.argv[0], *sys.argv[1:]])
        except OSError as exc:
            print(f"{prog}: needs {', '.join(missing)}, and TOKDYN_PYTHON={other} cannot be run: "
                  f"{exc.strerror}", file=sys.stderr)
            sys.exit(2)
    packages = " ".join(DEBIAN_PACKAGES.get(name, f"python3-{name}") for name in missing)
    them = "it" if len(missing) == 1 else "them"
    where = (f"TOKDYN_PYTHON={other} lacks {them}" if other
             else f"or set TOKDYN_PYTHON to a Python that has {them}")
    print(f"{prog}: needs {', '.join(missing)} (Debian: apt-get install {packages}; {where})", file=sys.stderr)
    sys.exit(2)


def to_str(value):
    """Return an HDF5 string attribute as str (h5py may give bytes or str)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.item() if value.size == 1 else value.tolist()
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", errors="replace")
    return str(value)


def to_scalar(value):
    """Return a numeric HDF5 attribute as a Python scalar."""
    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return value.item() if hasattr(value, "item") else value


# The files open_h5 opened since run_cli started: [(path, h5py.File)], for the message of an unexpected error.
_OPENED = []


def open_h5(path, error):
    """Open path read-only as an h5py.File; raise error(message) when it is missing, not a regular
    file, or not HDF5."""
    import h5py

    if not os.path.exists(path):
        raise error(f"no such file: {path}")
    if not os.path.isfile(path):
        raise error(f"not a regular file: {path}")
    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        raise error(f"cannot open {path} as HDF5: {exc}") from None
    _OPENED.append((path, h5))
    return h5


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
    fig.text(0.005, 0.995, plain_text(label), ha="left", va="top", fontsize="x-large", fontweight="bold",
             color="white", bbox={"boxstyle": "round", "facecolor": "tab:red", "edgecolor": "tab:red"}, zorder=10)
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


def _member(group, name):
    """The path of a dataset or an attribute `name` of group in messages: /group/name (/name at the root)."""
    return f"{group.name.rstrip('/')}/{name}"


def read_datasets(group, path, names, error, dtype=None):
    """{name: numpy array} of the named datasets of an h5py group; error(message) naming the first missing or
    holding no numbers (text)."""
    import h5py
    import numpy as np

    out = {}
    for name in names:
        if name not in group or not isinstance(group[name], h5py.Dataset):
            raise error(f"{path}: missing dataset {_member(group, name)}")
        value = np.asarray(group[name][()])
        if value.dtype.kind not in "biufc":
            what = "text" if value.dtype.kind in "OSU" else f"{value.dtype} values"
            raise error(f"{path}: dataset {_member(group, name)} holds {what}, not numbers")
        out[name] = value.astype(dtype) if dtype is not None else value
    return out


def check_shapes(path, data, shapes, error, where="", sizes=None, empty_ok=()):
    """error(message naming the file and the dataset) unless each array data[name] named in shapes (those
    present) has the shape shapes[name]: a tuple of sizes, an int or a dimension's name ("layers", or
    "bins+1" for one more than "bins"), each name one size wherever it appears: series drawn or zipped
    together have one length. A named dimension of size 0 (an empty dataset) is an error unless it is in
    empty_ok. where: the group's path in messages ("/power/"); sizes: the sizes found by an earlier call
    (for series in several groups). Returns the sizes."""
    sizes = {} if sizes is None else sizes
    for name, shape in shapes.items():
        if name not in data:
            continue
        label, value = where + name, data[name]
        dims = [d.partition("+") if isinstance(d, str) else (d, "", "") for d in shape]
        fixed = [(d, n) for (d, _, _), n in zip(dims, value.shape) if isinstance(d, int)]
        if value.ndim != len(shape) or any(n != d for d, n in fixed):
            raise error(f"{path}: dataset {label} has shape {list(value.shape)}, not [{', '.join(map(str, shape))}]")
        for (dim, _, plus), n in zip(dims, value.shape):
            if isinstance(dim, int):
                continue
            if n == 0 and (dim not in empty_ok or sizes.get(dim, (0,))[0]):  # empty_ok: all of them empty
                raise error(f"{path}: dataset {label} is empty")
            n -= int(plus or 0)
            if dim not in sizes:
                sizes[dim] = (n, label, value.shape)
            elif sizes[dim][0] != n:
                raise error(f"{path}: dataset {label} has shape {list(value.shape)}, {sizes[dim][1]} has shape "
                            f"{list(sizes[dim][2])}: not the same number of {dim}")
    return sizes


def require_attributes(group, path, names, error):
    """error(message) naming the first of the attributes missing from an h5py group."""
    for name in names:
        if name not in group.attrs:
            raise error(f"{path}: missing attribute {_member(group, name)}")


def read_numbers(group, path, names, error, required=True):
    """{name: float} of numeric attributes of an h5py group; error(message) naming the first that holds no
    number (text), or that is missing when required (else NaN)."""
    import math

    import numpy as np

    out = {}
    for name in names:
        if name not in group.attrs:
            if required:
                raise error(f"{path}: missing attribute {_member(group, name)}")
            out[name] = math.nan
            continue
        value = np.asarray(group.attrs[name])
        if value.dtype.kind not in "biuf" or value.size != 1:
            shown = to_str(value) if value.dtype.kind in "OSU" else f"{value.dtype} {list(value.shape)}"
            raise error(f"{path}: attribute {_member(group, name)} is '{shown}', not a number")
        out[name] = float(value.reshape(-1)[0])
    return out


def typed_value(text):
    """A deck value as Python sees it: true/false -> bool, an integer -> int, a number -> float, else the
    text (lists such as "0.75, 0.19" stay text)."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def deck_parameters(text):
    """{"section.key": typed value} of a deck's text. A resolved deck may name a section twice (the
    run file's deck does): its keys are merged. Raises configparser.Error on text that is not a deck."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, comment_prefixes=("#", ";"),
                                       inline_comment_prefixes=None)
    parser.optionxform = str  # keys are case-sensitive (model.N)
    parser.read_string(text)
    return {f"{s}.{k}": typed_value(v) for s in parser.sections() for k, v in parser.items(s)}


def run_parameters(h5, path="", error=ValueError):
    """The parameters of an open run file: deck_parameters of its root attribute 'deck' (the resolved deck
    in INI form; {} when the file has none). error(message) when the attribute is not a deck."""
    text = to_str(h5.attrs["deck"]) if "deck" in h5.attrs else ""
    try:
        return deck_parameters(text)
    except configparser.Error as exc:
        raise error(f"{path}: root attribute 'deck' is not a deck: {str(exc).splitlines()[0]}") from None


def common_parameters(parameter_sets):
    """The parameters that every one of several runs has with the same value (the title of a figure of
    several runs)."""
    sets = list(parameter_sets)
    if not sets:
        return {}
    return {k: v for k, v in sets[0].items() if all(k in p and p[k] == v for p in sets[1:])}


def _solver_is(name):
    return lambda p: p.get("meanfield.solver") == name


def _weights_are(name):
    return lambda p: p.get("weights.format") == name


# The deck keys a figure's title shows for each command, with their labels (and, third, when a key is
# shown only under a condition on the others). A section whose `enabled` is false shows as "<section> off".
_MODEL = (("model.N", "N"), ("model.d", "d"), ("model.L", "L"), ("model.T", "T"))
_KERNEL = (("mlp.activation", "MLP"), ("mlp.width", "m"), ("mlp.sigma_u", "sigma_U"), ("mlp.sigma_w", "sigma_W"))
_ATTENTION = (("attention.style", "attention"), ("attention.beta", "beta"), ("attention.factor", "factor"))
_WEIGHTS = (("weights.format", "weights"), ("weights.file", "file", _weights_are("file")),
            ("synthetic.kind", "synthetic", _weights_are("synthetic")), ("synthetic.d", "d", _weights_are("synthetic")),
            ("synthetic.lambda1", "lambda_1(F)", _weights_are("synthetic")),
            ("synthetic.gap", "gap(F)", _weights_are("synthetic")))
def _finite_width(params):
    """An mlmc run of the width-m transformer (mlp.width > 0) rather than of the infinite-width scheme."""
    return str(params.get("mlp.width", 0)) not in ("0", "")


def _infinite_width(params):
    return not _finite_width(params)


def _random_matrices(params):
    """A phase run whose B or V is drawn at random (the draw's scope and period then mean something)."""
    return params.get("phase.bilinear", "identity") != "identity" or params.get("phase.value", "identity") != "identity"


TITLE_KEYS = {
    "phase": (("model.N", "n"), ("model.d", "d"), ("model.T", "T"), ("phase.systems", "systems per beta"),
              ("phase.attention", "attention"), ("phase.step", "step"), ("phase.bilinear", "B"), ("phase.value", "V"),
              ("phase.scope", "drawn per", _random_matrices), ("phase.regen_period", "redrawn every", _random_matrices))
             + _KERNEL + (("run.seed", "seed"),),
    "transformer": _MODEL + _ATTENTION + _KERNEL + (("run.seed", "seed"),),
    "mlmc": _MODEL[:2] + (("model.T", "T"), ("mlmc.L0", "L0"), ("mlmc.scheme", "scheme", _infinite_width))
            + _ATTENTION + (("mlp.activation", "MLP"), ("mlp.width", "m", _finite_width)) + _KERNEL[2:]
            + (("noise.field", "noise", _infinite_width), ("noise.features", "M", _infinite_width),
               ("mlmc.fresh_tokens", "fresh tokens"), ("mlmc.eps", "eps"), ("run.seed", "seed")),
    "sde": _MODEL[:2] + (("model.L", "steps"), ("model.T", "T")) + _ATTENTION + _KERNEL
           + (("noise.field", "noise"), ("sde.scheme", "scheme"), ("run.seed", "seed")),
    "meanfield": _MODEL[1:] + _ATTENTION + _KERNEL
                 + (("meanfield.solver", "solver"), ("meanfield.cells", "cells", _solver_is("grid")),
                    ("meanfield.points", "points", _solver_is("quadrature")), ("noise.field", "noise"),
                    ("run.seed", "seed")),
    "synchronize": _MODEL + _ATTENTION + _KERNEL + (("synchronize.replicas", "replicas"), ("run.seed", "seed")),
    "lyapunov": _MODEL[1:] + (("attention.beta", "beta"),) + _KERNEL
                + (("lyapunov.replicas", "pairs"), ("run.seed", "seed")),
    "converge": (("converge.study", "study"),) + _MODEL[:2] + (("model.T", "T"),)
                + (("converge.L0", "L0", lambda p: p.get("converge.study") == "depth"),
                   ("model.L", "L", lambda p: p.get("converge.study") != "depth"),
                   ("converge.m0", "m0", lambda p: p.get("converge.study") == "width"),
                   ("converge.N0", "N0", lambda p: p.get("converge.study") == "tokens"),
                   ("converge.levels", "levels"), ("converge.replicas", "replicas"))
                + _ATTENTION + _KERNEL[:1] + (("noise.field", "noise"),),
    "spectrum": _WEIGHTS + (("spectrum.nev", "nev"), ("spectrum.which", "which"), ("spectrum.solver", "solver"),
                            ("spectrum.residual", "I + F")),
    "power": _WEIGHTS + (("power.attention", "attention"), ("power.residual", "I + F"), ("power.causal", "causal"),
                         ("power.N", "N"), ("steer.target", "steering")),
    "markov": (("markov.data", "data"), ("markov.s", "s"), ("model.m", "m"), ("model.eps", "eps"),
               ("markov.delta", "delta"), ("model.residual", "residual"), ("flow.time", "T")),
    "lens": (("lens.attention", "attention"), ("lens.causal", "causal"), ("lens.residual", "I + F")),
    "train": (("train.optimizer", "optimizer"), ("model.layers", "layers"), ("model.heads", "heads"),
              ("model.channels", "channels"), ("train.context", "context"), ("train.batch", "batch"),
              ("train.steps", "steps"), ("bias.query", "b_Q"), ("bias.key", "b_K"), ("bias.value", "b_V"),
              ("run.seed", "seed")),
}


def plain_text(text):
    """text to show as it is in a figure: a `$` escaped, so that matplotlib does not read what lies between two
    of them (in a file name, a deck value, a token) as mathtext, which garbles it or fails."""
    return str(text).replace("$", r"\$")


def parameter_text(command, params):
    """The title line of a run's parameters: "N = 64, d = 4, ..., attention off" (TITLE_KEYS[command])."""
    parts, off = [], []
    for entry in TITLE_KEYS.get(command, ()):
        key, label = entry[:2]
        section = key.split(".")[0]
        if params.get(f"{section}.enabled") is False:
            if section not in off:
                off.append(section)
                parts.append(f"{section} off")
            continue
        if key not in params or params[key] == "" or (len(entry) > 2 and not entry[2](params)):
            continue
        value = params[key]
        if isinstance(value, bool):  # a switch: its label when on, nothing when off
            parts += [label] if value else []
        else:
            parts.append(f"{label} = {value:g}" if isinstance(value, float) else f"{label} = {value}")
    return ", ".join(parts)


def title_for(command, params, name="", status="complete", extra=(), width=110):
    """A figure's title: "tokdyn COMMAND: NAME", "partial (status: X)" when not complete, and below it the
    run's parameters (parameter_text, then `extra`) in lines of at most `width` characters; plain text
    (plain_text: a file name or value may hold a `$`)."""
    first = f"tokdyn {command}" + (f": {name}" if name else "")
    if partial_label(status):
        first += f"  [{partial_label(status)}]"
    parts = [p for p in (parameter_text(command, params), *extra) if p]
    lines = []
    for part in ", ".join(parts).split(", ") if parts else ():  # wrapped between parameters, never inside one
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    return plain_text("\n".join([first] + lines))


def plural(n, word):
    """'1 run', '3 runs': a count with its noun."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def set_title(fig, command, params, name="", status="complete", extra=(), footer=(), **text):
    """The figure's title (title_for, wrapped to the figure's width) and its provenance in a small grey footer
    below everything else: `name` (the file, the sweep) and `footer` (ranks, version). save_figure keeps both
    inside the saved picture."""
    size = text.get("fontsize", 12)
    size = size if isinstance(size, (int, float)) else 12
    width = max(40, int(fig.get_figwidth() * 72 / (0.6 * size)))  # characters that fit: about 0.6 em each
    fig.suptitle(title_for(command, params, "", status, extra, width=width), **text)
    parts = [str(p) for p in (name, *footer) if p]
    if parts:
        fig.text(0.99, 0.0, plain_text("  |  ".join(parts)), ha="right", va="top", fontsize="small", color="0.4")


class FigureWarning(UserWarning):
    """A figure that is drawn, but wrongly: an empty panel, a legend over its curves."""


# The environment variable that makes a figure problem an error (the tests set it): "error".
FIGURE_CHECK = "TOKDYN_FIGURE_CHECK"


def figure_problems(fig):
    """What is wrong with a drawn figure: a panel (with its axis on) that holds no data and no text saying why, a
    legend that covers a labelled curve of its panel (the twin panels' included) or a title, a logarithmic axis
    with a single labelled tick (no scale can be read off one). Draws the figure at its dpi (where a legend
    placed 'best' goes depends on it: check at the dpi it is saved with)."""
    import numpy as np

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        name = ax.get_title() or ax.get_ylabel() or f"panel {fig.axes.index(ax) + 1}"
        if not ax.get_visible() or not ax.axison:
            continue
        if not ax.has_data() and not any(t.get_visible() and t.get_text() for t in ax.texts):
            problems.append(f"panel '{name}' is empty and says nothing about why")
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if axis.get_scale() != "log":
                continue
            low, high = sorted(axis.get_view_interval())
            ticks = [*zip(axis.get_majorticklocs(), axis.get_majorticklabels()),
                     *zip(axis.get_minorticklocs(), axis.get_minorticklabels())]
            labelled = {loc for loc, label in ticks if low <= loc <= high and label.get_visible() and label.get_text()}
            if len(labelled) == 1:
                problems.append(f"panel '{name}' has a single labelled tick on its logarithmic {which} axis")
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        titles = [t for a in fig.axes for t in (a.title, a._left_title, a._right_title)] + [fig._suptitle]
        for t in (t for t in titles if t is not None and t.get_visible() and t.get_text()):
            if box.overlaps(t.get_window_extent(renderer)):
                problems.append(f"the legend of panel '{name}' covers the title '{t.get_text()}'")
        twins = [a for a in fig.axes if a.get_position().bounds == ax.get_position().bounds]
        # The labelled curves (an unlabelled line is a marker: a stage boundary, a reference level).
        for line in (ln for a in twins for ln in a.get_lines() if ln.get_visible() and not ln.get_label().startswith("_")):
            path = line.get_transform().transform_path(line.get_path())  # in pixels, as drawn
            if line.get_linestyle() in ("None", "none", " ", ""):
                xy = path.vertices[np.all(np.isfinite(path.vertices), axis=1)]
                covered = np.any((xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1))
            else:
                covered = path.intersects_bbox(box, filled=False)
            if covered:
                problems.append(f"the legend of panel '{name}' covers the curve '{line.get_label()}'")
                break
    return problems


def save_figure(fig, target, status="complete", dpi=100):
    """Save fig to target (a path or a file object) as PNG, marked partial unless status is complete, with
    every artist inside the picture (bbox_inches='tight': no title or footer cut off), and close it. A
    figure_problems finding is a FigureWarning, or a ValueError where TOKDYN_FIGURE_CHECK=error."""
    import warnings

    import matplotlib.pyplot as plt

    try:
        metadata = mark_partial(fig, status)
        fig.set_dpi(dpi)
        for problem in figure_problems(fig):
            if os.environ.get(FIGURE_CHECK) == "error":
                raise ValueError(f"figure: {problem}")
            warnings.warn(problem, FigureWarning, stacklevel=2)
        # The tight box of the check's drawing: savefig then draws once more, not twice (bbox_inches="tight").
        box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.15)
        fig.savefig(target, format="png", dpi=dpi, bbox_inches=box, metadata=metadata)
    finally:
        plt.close(fig)


def readable_log_axis(axis):
    """Ticks a logarithmic axis (ax.yaxis, after its data are drawn) can be read off whatever its range: over
    two decades or more matplotlib's own; over less, labels at 1, 2 and 5 of each decade; under a factor of 3,
    four evenly spaced labels (one tick alone gives no scale: figure_problems flags it)."""
    import math

    from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    if not (low > 0 and math.isfinite(high)) or high >= 100 * low:
        return
    if high >= 3 * low:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    else:
        axis.set_major_locator(MaxNLocator(nbins=4))
    axis.set_major_formatter(FormatStrFormatter("%.3g"))  # every tick labelled (LogFormatter skips some)
    axis.set_minor_formatter(NullFormatter())


def pi_label(value, _position=None):
    """A tick label of an angle in radians at a multiple of pi/2: 0, pi/2, pi, 3pi/2, 2pi, ... (LaTeX)."""
    import math

    k = round(value / (math.pi / 2))
    if k == 0:
        return "0"
    sign = "-" if k < 0 else ""
    k = abs(k)
    if k % 2:
        return rf"${sign}{'' if k == 1 else k}\pi/2$"
    return rf"${sign}{'' if k == 2 else k // 2}\pi$"


def pi_axis(axis):
    """Ticks of an angle axis (radians, e.g. ax.xaxis) at the multiples of pi/2, labelled by pi_label."""
    import math

    from matplotlib.ticker import FuncFormatter, MultipleLocator

    axis.set_major_locator(MultipleLocator(math.pi / 2))
    axis.set_major_formatter(FuncFormatter(pi_label))


# A log axis cannot draw an interval's lower end at or below zero, and a tiny one squashes the data: ends
# below mean / LOG_FLOOR are drawn there (and marked as clipped).
LOG_FLOOR = 20.0


def log_lower(mean, low):
    """(lower ends to draw on a log axis, mask of the clipped ones) of intervals [low, ...] around positive
    means: ends below mean / LOG_FLOOR, zero or negative included, are raised to mean / LOG_FLOOR."""
    import numpy as np

    mean, low = np.asarray(mean, dtype=float), np.asarray(low, dtype=float)
    floor = mean / LOG_FLOOR
    clipped = ~(low >= floor)  # NaN ends count as clipped
    return np.where(clipped, floor, low), clipped


def interval_verdict(low, high, predicted, at_most=False):
    """Whether an interval [low, high] disagrees with a prediction, as tokdyn's console says it ("<-
    DISAGREES"): at_most (a bound on the value): the interval lies above it; otherwise the interval excludes
    it. Returns (disagrees, text); no interval (NaN ends) is not a disagreement."""
    import math

    if not (math.isfinite(low) and math.isfinite(high)):
        return False, "no interval"
    if at_most:
        return (True, f"the interval lies above the bound {predicted:.4g}") if low > predicted else \
            (False, f"at or below the bound {predicted:.4g}")
    if low <= predicted <= high:
        return False, "the interval holds the prediction"
    return True, f"the interval excludes the prediction {predicted:.4g}"


def unexpected(exc):
    """The message of an error no check foresaw: the file being read (else the files read), the exception, and
    the line of a post-processing script it came through (a bug shows where it is)."""
    import traceback

    # The file a function on the way held (open_h5's h5py.File in a local variable): the error came while
    # reading it; else every file read.
    opened = {id(h5): path for path, h5 in _OPENED}
    held = [opened[id(v)] for frame, _ in traceback.walk_tb(exc.__traceback__) for v in frame.f_locals.values()
            if id(v) in opened]
    paths = held[-1:] or list(dict.fromkeys(path for path, _ in _OPENED))
    where = paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} other files" if paths else "no file"
    here = os.path.dirname(os.path.abspath(__file__))
    frames = traceback.extract_tb(exc.__traceback__)
    frame = ([f for f in frames if os.path.dirname(os.path.abspath(f.filename)) == here] or frames)[-1]
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return (f"{where}: {type(exc).__name__}: {text} ({os.path.basename(frame.filename)} line {frame.lineno}, "
            f"in {frame.name})")


def run_cli(prog, error, body):
    """Run body() for a script's main: on `error` print "PROG: error: ..." on stderr and return 2; on any
    other exception too (unexpected: the file, the exception and where), unless TOKDYN_TRACEBACK is set;
    otherwise print the paths body returned (None: nothing), one a line, and return 0."""
    _OPENED.clear()
    try:
        written = body()
    except error as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # data no check foresaw, or a bug: one line all the same
        if os.environ.get("TOKDYN_TRACEBACK"):
            raise
        print(f"{prog}: error: {unexpected(exc)}", file=sys.stderr)
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


# ---------------------------------------------------------------------------------------------------------
# The reader for users: `import tokdyn_h5; run = tokdyn_h5.load("x.h5")`.

class Run:
    """A tokdyn run file read into memory.

    Attributes:
        path     the file's path
        command  the tokdyn command that wrote it ("transformer", "spectrum", ...)
        status   "complete", or running | checkpointed | failed for an unfinished run
        params   every key of the run's resolved deck, typed: {"model.N": 64, "attention.beta": 1.0,
                 "mlp.activation": "relu", "attention.enabled": True, ...}
        attrs    the root attributes as written (tokdyn_version, git_revision, seed, ranks, start_time,
                 end_time, run_id, petsc_options, deck, ...)
        data     every dataset as a numpy array, by path without the leading '/': data["diagnostics/energy"]
        info     for each dataset path, {"description", "units", "axes"} (the dataset's attributes, written
                 from tokdyn's declaration of the path: `tokdyn --outputs`; axes as a list of names in storage
                 order, as many as the array has dimensions)
        groups   the attributes of each group by its path: groups["markov"]["t_I"], groups["power"]["state"]

    run["diagnostics/energy"] is run.data["diagnostics/energy"]; `"tokens/X" in run` tests for a dataset;
    print(run.describe()) lists every dataset with its shape, units and description.
    """

    def __init__(self, path, command, status, params, attrs, data, info, groups=None):
        self.path, self.command, self.status = path, command, status
        self.params, self.attrs, self.data, self.info = params, attrs, data, info
        self.groups = groups or {}

    def __getitem__(self, name):
        return self.data[name.lstrip("/")]

    def __contains__(self, name):
        return name.lstrip("/") in self.data

    def __repr__(self):
        return f"<tokdyn run {self.path!r}: {self.command}, {self.status}, {len(self.data)} datasets>"

    def describe(self):
        """One line per dataset: path, shape, units, axes and description."""
        lines = [f"{self.path}: tokdyn {self.command} ({self.status}), "
                 f"tokdyn {self.attrs.get('tokdyn_version', '?')}, {self.attrs.get('ranks', '?')} ranks"]
        for name in sorted(self.data):
            meta = self.info.get(name, {})
            shape = "x".join(str(n) for n in self.data[name].shape) or "scalar"
            lines.append(f"  {name:32s} [{shape}] ({', '.join(meta.get('axes', []))}) "
                         f"{meta.get('units', '')}: {meta.get('description', '')}")
        for group in sorted(self.groups):
            for key, value in sorted(self.groups[group].items()):
                lines.append(f"  {group}@{key} = {value!r}")
        return "\n".join(lines)


def _attribute_value(value):
    import numpy as np
    if isinstance(value, (bytes, str, np.bytes_)):
        return to_str(value)
    return to_scalar(value) if np.ndim(value) == 0 else np.asarray(value)


def load(path, allow_partial=False):
    """Read the run file at `path` into a Run (see its docstring).

    Typed parameters come from the file's root attributes "section.key" (booleans stored as 0/1 are returned
    as bool, using the deck's text to tell them from integers); files written before those attributes
    existed have them parsed from the stored deck. A run that is not complete raises ValueError unless
    allow_partial is true. A missing or non-HDF5 file raises ValueError with the reason, as does a dataset
    whose dimensions are not the axes its declaration names.
    """
    import h5py
    import numpy as np

    f = open_h5(path, ValueError)
    with f:
        attrs = {k: (to_str(v) if isinstance(v, (bytes, str, np.bytes_)) else to_scalar(v))
                 for k, v in f.attrs.items()}
        status = run_status(f, path)
        if status != "complete" and not allow_partial:
            raise ValueError(f"{path}: the run is not complete (status {status}); load(..., allow_partial=True)")
        from_deck = run_parameters(f, path)
        params = {}
        for key, value in from_deck.items():
            stored = attrs.get(key)
            if stored is None:
                params[key] = value
            elif isinstance(value, bool):
                params[key] = bool(stored)
            else:
                params[key] = stored
        data, info, groups = {}, {}, {}

        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                groups[name] = {k: _attribute_value(v) for k, v in obj.attrs.items()}
            elif isinstance(obj, h5py.Dataset):
                data[name] = obj[()]
                meta = {k: to_str(obj.attrs[k]) for k in ("description", "units", "axes") if k in obj.attrs}
                if "axes" in meta:
                    meta["axes"] = [a.strip() for a in meta["axes"].split(",")]
                    if len(meta["axes"]) != max(obj.ndim, 1):  # a single value: one axis name
                        raise ValueError(f"{path}: dataset {name} has {obj.ndim} dimensions, its declaration "
                                         f"names {len(meta['axes'])} axes ({', '.join(meta['axes'])})")
                info[name] = meta

        f.visititems(visit)
    return Run(path, attrs.get("command", "?"), status, params, attrs, data, info, groups)
