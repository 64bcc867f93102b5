"""Tests for postprocess/animate.py: the movie (MP4 through ffmpeg, GIF without it), one frame per snapshot, the
principal components for d > 3, the XDMF's hyperslabs against the run file, the temporary names, the errors.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess/test_animate.py

The run files are small synthetic ones written here with h5py; set TOKDYN_RUNFILE to a run file produced by the
real code to also animate it (a copy: the XDMF goes beside the run file).
"""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import PYTHON, _script_module, run_in_process

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "animate.py"
FAST = ("--dpi", "40")  # small frames: the tests look at frame counts and files, not at the picture
RED = np.array([0xD6, 0x27, 0x28]) / 255  # matplotlib's tab:red, the partial mark's box
needs_ffmpeg = pytest.mark.skipif(not (shutil.which("ffmpeg") and shutil.which("ffprobe")),
                                  reason="ffmpeg or ffprobe is not on PATH")


def run_script(*args):
    return run_in_process(SCRIPT, *args)


def module():
    return _script_module(SCRIPT)


def sphere_tokens(rng, snapshots, n, d, pull=0.25):
    """[snapshots, n, d] unit vectors, uniform at first and pulled towards e_1 snapshot by snapshot."""
    x = rng.standard_normal((n, d))
    pole = np.eye(d)[0]
    out = []
    for _ in range(snapshots):
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out.append(x.copy())
        x = x + pull * (pole + 0.3 * rng.standard_normal((n, d)))
    return np.array(out)


def write_run(path, X=None, snapshots=5, n=12, d=2, status="complete", command="transformer", seed=3):
    """A run file with /tokens (X, layer every 2, time 0.5 per layer) and the root attributes the scripts read."""
    X = sphere_tokens(np.random.default_rng(seed), snapshots, n, d) if X is None else np.asarray(X)
    with h5py.File(path, "w") as h5:
        h5.attrs["tokdyn_version"] = "0.1.0"
        h5.attrs["git_revision"] = "abc1234"
        h5.attrs["command"] = command
        h5.attrs["deck"] = f"[model]\nN = {X.shape[1]}\nd = {X.shape[-1]}\nL = {2 * (len(X) - 1)}\nT = 4\n"
        h5.attrs["ranks"] = np.int32(2)
        h5.attrs["status"] = status
        tokens = h5.create_group("tokens")
        tokens["X"] = X
        tokens["layer"] = np.arange(len(X), dtype=np.int64) * 2
        tokens["time"] = np.arange(len(X), dtype=np.float64) * 2 * 0.5
    return Path(path)


def ffprobe(path):
    """(frames counted, average frame rate, container names) of a movie."""
    result = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                             "stream=nb_read_frames,avg_frame_rate:format=format_name", "-of", "json", str(path)],
                            capture_output=True, text=True, check=True, timeout=60)
    info = json.loads(result.stdout)
    stream = info["streams"][0]
    return int(stream["nb_read_frames"]), stream["avg_frame_rate"], info["format"]["format_name"].split(",")


def gif_frames(path):
    """The frames of a GIF as RGB arrays in [0, 1]."""
    from PIL import Image, ImageSequence

    with Image.open(path) as img:
        assert img.format == "GIF"
        return [np.asarray(frame.convert("RGB"), dtype=float) / 255 for frame in ImageSequence.Iterator(img)]


def red_box_pixels(frame):
    corner = frame[:60, : frame.shape[1] // 3]
    return int((np.abs(corner - RED).max(axis=2) < 0.06).sum())


def assert_error(result, *words):
    """Exit status 2, one line "animate.py: error: ..." holding each of words."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("animate.py: error: "), lines
    for word in words:
        assert word in lines[0], lines


def no_tools_path(tmp_path, monkeypatch):
    """PATH without ffmpeg (an empty directory)."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert module().find_ffmpeg() is None


# ------------------------------------------------------------------------------------------ the movie

@needs_ffmpeg
def test_mp4_one_frame_per_snapshot(tmp_path):
    runfile = write_run(tmp_path / "run.h5", snapshots=6, d=2)
    result = run_script(runfile, "--fps", "5", *FAST)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(tmp_path / "run.mp4"), str(tmp_path / "run.xdmf")]
    assert (tmp_path / "run.mp4").read_bytes()[4:8] == b"ftyp"
    frames, rate, formats = ffprobe(tmp_path / "run.mp4")
    assert frames == 6 and rate == "5/1" and "mp4" in formats
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5", "run.mp4", "run.xdmf"]  # no temporary left


def test_gif_without_ffmpeg(tmp_path, monkeypatch):
    """No ffmpeg on PATH: a GIF, one frame per snapshot, each frame another picture; --format mp4 is an error."""
    runfile = write_run(tmp_path / "run.h5", snapshots=4, d=2)
    no_tools_path(tmp_path, monkeypatch)
    result = run_script(runfile, "--no-xdmf", *FAST)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(tmp_path / "run.gif")]
    frames = gif_frames(tmp_path / "run.gif")
    assert len(frames) == 4
    assert all(np.abs(a - b).max() > 0.1 for a, b in zip(frames, frames[1:]))
    assert not (tmp_path / "run.xdmf").exists()

    (tmp_path / "run.gif").unlink()
    result = run_script(runfile, "--format", "mp4", *FAST)
    assert_error(result, "ffmpeg", "not on PATH", "--format gif")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-path", "run.h5"]


@pytest.mark.parametrize("d", [3, 5])
def test_gif_in_higher_dimension(tmp_path, d):
    """--format gif with ffmpeg or without it; -o names the movie; d = 3 (S^2 in 3-D) and d = 5 (projected)."""
    runfile = write_run(tmp_path / "run.h5", snapshots=3, n=10, d=d)
    out = tmp_path / "movie" / "tokens.gif"
    out.parent.mkdir()
    result = run_script(runfile, "-o", out, "--format", "gif", *FAST)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(out), str(tmp_path / "run.xdmf")]
    assert len(gif_frames(out)) == 3


def test_axes_of_each_dimension():
    """d = 2: the unit circle, x1 and x2; d = 3: 3-D axes, limits holding the sphere; limits fixed across frames."""
    import matplotlib.pyplot as plt

    m = module()
    rng = np.random.default_rng(1)
    for d in (2, 3):
        X = sphere_tokens(rng, 4, 9, d)
        run = {"X": X, "count": 4, "layer": np.arange(4) * 3, "time": np.arange(4) * 0.25, "masses": None,
               "command": "transformer", "parameters": {}, "status": "complete", "path": "r.h5", "ranks": 1,
               "version": "", "revision": ""}
        fig, draw = m.make_figure(run)
        ax = fig.axes[0]
        assert (ax.name == "3d") == (d == 3)
        limits = []
        for i in range(4):
            draw(i)
            limits.append([ax.get_xlim(), ax.get_ylim()] + ([ax.get_zlim()] if d == 3 else []))
            assert ax.get_title() == f"layer {3 * i}, t = {0.25 * i:g}  (snapshot {i + 1} of 4)"
        assert all(np.allclose(lim, limits[0]) for lim in limits)
        assert all(low <= -1.0 and high >= 1.0 for low, high in limits[0])
        assert [ax.get_xlabel(), ax.get_ylabel()] == ["$x_1$", "$x_2$"]
        plt.close(fig)


def test_tokens_off_the_sphere_are_drawn_where_they_are():
    """A pre-norm run's tokens (|x| up to 3): the limits hold them and the unit circle; the title says so."""
    import matplotlib.pyplot as plt

    X = 3.0 * sphere_tokens(np.random.default_rng(2), 3, 8, 2) + np.array([1.5, 0.0])
    run = {"X": X, "count": 3, "layer": np.arange(3), "time": None, "masses": None, "command": "transformer",
           "parameters": {}, "status": "complete", "path": "r.h5", "ranks": None, "version": "", "revision": ""}
    fig, draw = module().make_figure(run)
    draw(2)
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= min(-1.0, X[..., 0].min()) and x1 >= X[..., 0].max() and y0 <= X[..., 1].min() and y1 >= 1.0
    assert f"|x| up to {np.linalg.norm(X, axis=2).max():.3g}" in fig._suptitle.get_text()
    circle = ax.lines[0].get_xydata()
    assert np.allclose(np.linalg.norm(circle, axis=1), 1.0)
    plt.close(fig)


def test_principal_components_find_the_dominant_direction():
    """d = 5 tokens spread along e_3 (and little else): PC1 is e_3, it carries most of the variance, the axis says
    so, and the drawn coordinates are the projections on PC1 and PC2, within limits fixed for every frame."""
    import matplotlib.pyplot as plt

    m = module()
    rng = np.random.default_rng(4)
    snapshots, n, d = 4, 40, 5
    X = np.empty((snapshots, n, d))
    for s in range(snapshots):
        x = 0.15 * rng.standard_normal((n, d))
        x[:, 2] += rng.uniform(-1.0, 1.0, n)
        X[s] = x / np.linalg.norm(x, axis=1, keepdims=True)
    mean, axes, share = m.principal_axes(X, snapshots)
    assert abs(axes[0] @ np.eye(d)[2]) > 0.99
    assert share[0] > 0.6 and np.isclose(share.sum(), 1.0) and np.all(np.diff(share) <= 0)
    assert np.allclose(axes @ axes.T, np.eye(d), atol=1e-10)
    assert np.allclose(mean, X.reshape(-1, d).mean(axis=0))
    # The same as numpy's SVD of all snapshots' centred tokens, up to each component's sign.
    _, singular, vt = np.linalg.svd(X.reshape(-1, d) - mean, full_matrices=False)
    assert np.allclose(np.abs(axes[:2] @ vt[:2].T), np.eye(2), atol=1e-8)
    assert np.allclose(share, singular ** 2 / (singular ** 2).sum())

    run = {"X": X, "count": snapshots, "layer": np.arange(snapshots), "time": np.arange(snapshots) * 0.5,
           "masses": None, "command": "transformer", "parameters": {}, "status": "complete", "path": "r.h5",
           "ranks": 2, "version": "0.1.0", "revision": "abc"}
    fig, draw = m.make_figure(run)
    ax = fig.axes[0]
    assert ax.get_xlabel() == f"PC1 ({100 * share[0]:.1f} % of variance)"
    assert ax.get_ylabel() == f"PC2 ({100 * share[1]:.1f} % of variance)"
    limits = None
    for i in range(snapshots):
        draw(i)
        shown = ax.collections[-1].get_offsets()
        assert np.allclose(shown, (X[i] - mean) @ axes[:2].T)
        assert np.corrcoef(shown[:, 0], X[i][:, 2])[0, 1] ** 2 > 0.95  # PC1 is the third coordinate
        assert limits is None or limits == (ax.get_xlim(), ax.get_ylim())
        limits = (ax.get_xlim(), ax.get_ylim())
        assert limits[0][0] <= shown[:, 0].min() and shown[:, 0].max() <= limits[0][1]
    plt.close(fig)


# ------------------------------------------------------------------------------------------ the XDMF

def check_xdmf(path, runfile, group="tokens", points="X", time="time"):
    """Every grid of the XDMF: its time, N points, and a hyperslab of the run file's snapshot i (its first three
    coordinates), named relative to the XDMF. Returns the root element."""
    root = ET.parse(path).getroot()
    with h5py.File(runfile, "r") as h5:
        X, times = h5[group][points][()], h5[group][time][()]
    snapshots, n, d = X.shape
    k = min(d, 3)
    grids = root.findall("./Domain/Grid/Grid")
    assert root.find("./Domain/Grid").get("CollectionType") == "Temporal"
    assert len(grids) == snapshots
    for i, grid in enumerate(grids):
        assert float(grid.find("Time").get("Value")) == times[i]
        topology = grid.find("Topology")
        assert topology.get("TopologyType") == "Polyvertex" and int(topology.get("NumberOfElements")) == n
        geometry = grid.find("Geometry")
        assert geometry.get("GeometryType") == ("XY" if d == 2 else "XYZ")
        slab = geometry.find("DataItem")
        assert slab.get("ItemType") == "HyperSlab" and slab.get("Dimensions") == f"1 {n} {k}"
        selection, source = slab.findall("DataItem")
        start, stride, count = np.array(selection.text.split(), dtype=int).reshape(3, 3)
        assert start.tolist() == [i, 0, 0] and stride.tolist() == [1, 1, 1] and count.tolist() == [1, n, k]
        assert source.get("Format") == "HDF" and source.text == f"{runfile.name}:/{group}/{points}"
        assert [int(v) for v in source.get("Dimensions").split()] == list(X.shape)
        assert (source.get("NumberType"), source.get("Precision")) == ("Float", "8")
        picked = X[start[0]:start[0] + count[0], start[1]:start[1] + count[1], start[2]:start[2] + count[2]]
        assert np.array_equal(picked[0], X[i, :, :k])
    return root


@pytest.mark.parametrize("d", [2, 3, 5])
def test_xdmf_hyperslabs_match_the_run_file(tmp_path, d):
    runfile = write_run(tmp_path / "run.h5", snapshots=4, n=7, d=d)
    result = run_script(runfile, "--xdmf-only")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(tmp_path / "run.xdmf")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5", "run.xdmf"]
    text = (tmp_path / "run.xdmf").read_text()
    assert str(tmp_path) not in text  # the run file is named relative to the XDMF
    root = check_xdmf(tmp_path / "run.xdmf", runfile)
    about = root.find("./Domain/Information").get("Value")
    assert ("the first three coordinates" in about) == (d > 3) and ("XY" in about) == (d == 2)
    token = root.find("./Domain/DataItem[@Name='token']")
    assert token.text.split() == [str(i) for i in range(7)]
    references = root.findall("./Domain/Grid/Grid/Attribute[@Name='token']/DataItem")
    assert len(references) == 4 and all(r.get("Dimensions") == "7" for r in references)


def test_meanfield_points(tmp_path, monkeypatch):
    """A meanfield run of the quadrature solver: its points, their times and masses (an XDMF attribute)."""
    runfile = tmp_path / "mf.h5"
    X = sphere_tokens(np.random.default_rng(5), 3, 20, 3)
    with h5py.File(runfile, "w") as h5:
        h5.attrs["command"] = "meanfield"
        h5.attrs["status"] = "complete"
        g = h5.create_group("meanfield")
        g.attrs["solver"] = "quadrature"
        g["points"] = X
        g["snapshot_time"] = np.array([0.0, 0.5, 1.0])
        g["masses"] = np.full(20, 1 / 20)
    no_tools_path(tmp_path, monkeypatch)
    result = run_script(runfile, *FAST)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(tmp_path / "mf.gif"), str(tmp_path / "mf.xdmf")]
    assert len(gif_frames(tmp_path / "mf.gif")) == 3
    root = check_xdmf(tmp_path / "mf.xdmf", runfile, "meanfield", "points", "snapshot_time")
    masses = root.findall("./Domain/Grid/Grid/Attribute[@Name='mass']/DataItem")
    assert [m.text for m in masses] == ["mf.h5:/meanfield/masses"] * 3


def test_xdmf_only_needs_no_matplotlib(tmp_path):
    """As a program on a Python without matplotlib: --xdmf-only writes the XDMF; a movie names what it needs."""
    runfile = write_run(tmp_path / "run.h5", snapshots=2, d=3)
    code = ("import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    env = dict(os.environ)
    env.pop("TOKDYN_PYTHON", None)
    result = subprocess.run([PYTHON, "-c", code, str(SCRIPT), str(runfile), "--xdmf-only"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{tmp_path / 'run.xdmf'}\n", "")
    result = subprocess.run([PYTHON, "-c", code, str(SCRIPT), str(runfile), "--format", "gif"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 2 and result.stderr.splitlines() == [
        "animate.py: needs matplotlib (Debian: apt-get install python3-matplotlib; or set TOKDYN_PYTHON to a "
        "Python that has it)"]
    assert not (tmp_path / "run.gif").exists()


# ------------------------------------------------------------------------------------------ temporary names

def test_outputs_are_replaced_only_when_complete(tmp_path, monkeypatch):
    """A movie that fails half-way leaves the old movie and XDMF and no temporary file; one that succeeds replaces
    both, with the usual file mode."""
    m = module()
    runfile = write_run(tmp_path / "run.h5", snapshots=4, d=2)
    (tmp_path / "run.gif").write_bytes(b"old movie")
    (tmp_path / "run.xdmf").write_text("old xdmf")
    label = m.Frames.label

    def failing(self, i):
        if i == 2:
            assert any(p.name.endswith(".tmp.gif") for p in tmp_path.iterdir())  # the frames go to a temporary
            raise RuntimeError("disk full at frame 2")
        return label(self, i)

    monkeypatch.setattr(m.Frames, "label", failing)
    result = run_script(runfile, "--format", "gif", *FAST)
    assert_error(result, "RuntimeError: disk full at frame 2")
    assert (tmp_path / "run.gif").read_bytes() == b"old movie"
    assert (tmp_path / "run.xdmf").read_text() == "old xdmf"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.gif", "run.h5", "run.xdmf"]

    monkeypatch.setattr(m.Frames, "label", label)
    result = run_script(runfile, "--format", "gif", *FAST)
    assert result.returncode == 0, result.stderr
    assert len(gif_frames(tmp_path / "run.gif")) == 4
    check_xdmf(tmp_path / "run.xdmf", runfile)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.gif", "run.h5", "run.xdmf"]
    mask = os.umask(0)
    os.umask(mask)
    assert {(tmp_path / n).stat().st_mode & 0o777 for n in ("run.gif", "run.xdmf")} == {0o666 & ~mask}


# ------------------------------------------------------------------------------------------ errors

def drop(name):
    return lambda h5: h5.__delitem__(name)


def replace(**values):
    """Replace datasets of a run file: replace(X=...) for /tokens/X."""
    def change(h5):
        for name, value in values.items():
            del h5["tokens"][name]
            h5["tokens"][name] = value
    return change


ERRORS = {
    "no tokens": (drop("tokens"), ["missing group /tokens"]),
    "no X": (drop("tokens/X"), ["missing dataset /tokens/X"]),
    "X rank 2": (replace(X=np.ones((4, 6))), ["/tokens/X must have shape", "[4, 6]"]),
    "d = 1": (replace(X=np.ones((4, 6, 1))), ["/tokens/X must have shape", "d >= 2", "[4, 6, 1]"]),
    "no snapshots": (replace(X=np.ones((0, 6, 2)), layer=np.ones(0, int), time=np.ones(0)),
                     ["dataset /tokens/X is empty"]),
    "text": (replace(X=np.array(["x"] * 4, dtype=h5py.string_dtype())), ["/tokens/X holds text, not numbers"]),
    "short time": (replace(time=np.arange(3.0)), ["/tokens/time", "not the same number of snapshots"]),
    "no layer": (drop("tokens/layer"), ["missing dataset /tokens/layer"]),
}


@pytest.mark.parametrize("case", ERRORS)
def test_error_in_run_file(tmp_path, case):
    change, words = ERRORS[case]
    runfile = write_run(tmp_path / "run.h5", snapshots=4, n=6, d=2)
    with h5py.File(runfile, "r+") as h5:
        change(h5)
    assert_error(run_script(runfile, *FAST), str(runfile), *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]


def test_error_missing_and_not_hdf5(tmp_path):
    assert_error(run_script(tmp_path / "nope.h5"), f"no such file: {tmp_path / 'nope.h5'}")
    bogus = tmp_path / "bogus.h5"
    bogus.write_text("not HDF5\n")
    assert_error(run_script(bogus), f"cannot open {bogus} as HDF5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bogus.h5"]


def test_error_options(tmp_path):
    runfile = write_run(tmp_path / "run.h5", snapshots=2, d=2)
    assert_error(run_script(runfile, "--xdmf-only", "--no-xdmf"), "--xdmf-only and --no-xdmf")
    assert_error(run_script(runfile, "--fps", "0"), "--fps and --dpi must be positive")
    assert_error(run_script(runfile, "--dpi", "-5"), "--fps and --dpi must be positive")
    missing = tmp_path / "no-such-directory" / "movie.gif"
    assert_error(run_script(runfile, "-o", missing, *FAST), f"cannot write {missing}: No such file or directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]


def test_nan_tokens(tmp_path, monkeypatch):
    """NaN in a complete run: an error naming the snapshot. A failed run with --allow-partial: drawn up to the last
    finite snapshot (a warning says so), its frames marked partial."""
    X = sphere_tokens(np.random.default_rng(6), 5, 8, 2)
    X[3, 2, 1] = np.nan
    runfile = write_run(tmp_path / "run.h5", X=X)
    assert_error(run_script(runfile, *FAST), f"{runfile}: dataset /tokens/X holds NaN or Inf at snapshot 3 (layer 6)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]

    with h5py.File(runfile, "r+") as h5:
        h5.attrs["status"] = "failed"
    no_tools_path(tmp_path, monkeypatch)
    result = run_script(runfile, "--allow-partial", "--dpi", "60")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"animate.py: warning: {runfile}: dataset /tokens/X holds NaN or Inf from "
                                          f"snapshot 3 (layer 6) on: drawing the 3 snapshots before it"]
    frames = gif_frames(tmp_path / "run.gif")
    assert len(frames) == 3 and min(red_box_pixels(f) for f in frames) > 200
    assert len(ET.parse(tmp_path / "run.xdmf").getroot().findall("./Domain/Grid/Grid")) == 3


@pytest.mark.parametrize("status", ["running", "checkpointed", "failed"])
def test_incomplete_run_is_refused_unless_allowed(tmp_path, monkeypatch, status):
    runfile = write_run(tmp_path / "run.h5", snapshots=3, d=2, status=status)
    result = run_script(runfile, *FAST)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"animate.py: error: {runfile}: status is '{status}', not complete (an unfinished or failed run); "
        f"--allow-partial plots it anyway"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]
    if status != "failed":
        return
    no_tools_path(tmp_path, monkeypatch)
    result = run_script(runfile, "--allow-partial", "--dpi", "60")
    assert result.returncode == 0, result.stderr
    assert min(red_box_pixels(f) for f in gif_frames(tmp_path / "run.gif")) > 200
    assert 'status failed' in (tmp_path / "run.xdmf").read_text()
    # A complete run's frames carry no mark.
    complete = write_run(tmp_path / "complete.h5", snapshots=3, d=2)
    assert run_script(complete, "--dpi", "60", "--no-xdmf").returncode == 0
    assert max(red_box_pixels(f) for f in gif_frames(tmp_path / "complete.gif")) < 20


# ------------------------------------------------------------------------------------------ the real code's run

@pytest.mark.skipif(not os.path.isfile(os.environ.get("TOKDYN_RUNFILE", "")),
                    reason="TOKDYN_RUNFILE does not name an existing run file")
def test_real_runfile(tmp_path):
    runfile = tmp_path / "real.h5"
    shutil.copy(os.environ["TOKDYN_RUNFILE"], runfile)
    with h5py.File(runfile, "r") as h5:
        snapshots = h5["tokens/X"].shape[0]
    result = run_script(runfile, "--format", "gif", *FAST)
    assert result.returncode == 0, result.stderr
    assert len(gif_frames(tmp_path / "real.gif")) == snapshots
    check_xdmf(tmp_path / "real.xdmf", runfile)

