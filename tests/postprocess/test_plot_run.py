"""Tests for postprocess/plot_run.py.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess

Set TOKDYN_RUNFILE to a run file produced by the real code to also plot it.
"""

import os
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import run_in_process

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "plot_run.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def random_sphere(rng, n, d):
    """Return n points drawn uniformly on the unit sphere in R^d."""
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def diagnostics(x, beta, edges):
    """Return (energy, order, mean_cos, min_cos, hist) for tokens x [N, d]."""
    n = x.shape[0]
    gram = np.clip(x @ x.T, -1.0, 1.0)
    iu = np.triu_indices(n, k=1)
    pairs = gram[iu]
    energy = (np.exp(beta) - np.exp(beta * gram)).sum() / (2.0 * n * n)  # E_beta of doc/science.md section 5.1
    order = np.linalg.norm(x.mean(axis=0))
    hist, _ = np.histogram(pairs, bins=edges)
    mean_cos = pairs.mean() if pairs.size else np.nan
    min_cos = pairs.min() if pairs.size else np.nan
    return energy, order, mean_cos, min_cos, hist.astype(np.int64)


def write_run(path, n=32, d=2, snapshots=5, diag_every=1, layers=20,
              status="complete", beta=1.0, bins=40, seed=7):
    """Write a synthetic tokdyn run file following the schema.

    Tokens start uniform on the sphere and are pulled towards a common
    direction layer by layer, so the figure shows clustering.
    """
    rng = np.random.default_rng(seed)
    x = random_sphere(rng, n, d)
    pole = np.zeros(d)
    pole[0] = 1.0
    edges = np.linspace(-1.0, 1.0, bins + 1)
    dt = 0.1
    snap_layers = sorted(set(np.linspace(0, layers, snapshots).round().astype(int)))
    X, snap_l, diag = [], [], []
    for layer in range(layers + 1):
        if layer in snap_layers:
            X.append(x.copy())
            snap_l.append(layer)
        if layer % diag_every == 0:
            diag.append((layer, layer * dt) + diagnostics(x, beta, edges))
        x = x + 0.15 * (pole + 0.3 * rng.standard_normal((n, d)))
        x /= np.linalg.norm(x, axis=1, keepdims=True)

    with h5py.File(path, "w") as h5:
        h5.attrs["tokdyn_version"] = "0.1.0"
        # a variable-length ASCII string (h5py may hand it back as bytes)
        h5.attrs.create("git_revision", "abc1234", dtype=h5py.string_dtype("ascii"))
        h5.attrs["command"] = "transformer"
        h5.attrs["deck"] = f"[model]\nn = {n}\nd = {d}\nbeta = {beta}\n"
        h5.attrs["seed"] = np.int64(seed)
        h5.attrs["ranks"] = np.int32(2)
        h5.attrs["start_time"] = "2024-01-01T00:00:00Z"
        h5.attrs["end_time"] = "2024-01-01T00:01:00Z"
        h5.attrs["status"] = status

        tok = h5.create_group("tokens")
        tok["X"] = np.array(X, dtype=np.float64)
        tok["layer"] = np.array(snap_l, dtype=np.int64)
        tok["time"] = np.array(snap_l, dtype=np.float64) * dt

        dg = h5.create_group("diagnostics")
        dg.attrs["beta"] = float(beta)
        dg["layer"] = np.array([r[0] for r in diag], dtype=np.int64)
        dg["time"] = np.array([r[1] for r in diag], dtype=np.float64)
        dg["energy"] = np.array([r[2] for r in diag], dtype=np.float64)
        dg["order_parameter"] = np.array([r[3] for r in diag], dtype=np.float64)
        dg["mean_cosine"] = np.array([r[4] for r in diag], dtype=np.float64)
        dg["min_cosine"] = np.array([r[5] for r in diag], dtype=np.float64)
        dg["cosine_histogram"] = np.array([r[6] for r in diag], dtype=np.int64)
        dg["cosine_bin_edges"] = edges
    return path


def run_script(*args):
    """Run plot_run.py (in this process: conftest.run_in_process) and return the CompletedProcess."""
    return run_in_process(SCRIPT, *args)


def check_png(path, min_pixels=200):
    """Check that path is a plausible PNG image."""
    import matplotlib.image as mpimg

    path = Path(path)
    assert path.is_file()
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    assert path.stat().st_size > 10_000
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    assert img.shape[0] >= min_pixels and img.shape[1] >= min_pixels
    # not a blank image
    assert float(img[..., :3].std()) > 0.01
    return img


def test_histogram_consistent_with_tokens(tmp_path):
    """The synthetic file itself follows the schema (sanity check of the fixture)."""
    path = write_run(tmp_path / "run.h5", n=10)
    with h5py.File(path, "r") as h5:
        hist = h5["diagnostics/cosine_histogram"][()]
        assert hist.shape == (21, 40)
        assert np.all(hist.sum(axis=1) == 10 * 9 // 2)
        assert h5["diagnostics/cosine_bin_edges"].shape == (41,)
        assert h5["tokens/X"].shape[1:] == (10, 2)


def test_plot_default_output(tmp_path):
    """A complete 2-d run is plotted to RUNFILE.png and the path is printed."""
    runfile = write_run(tmp_path / "run.h5")
    result = run_script(runfile)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "run.png"
    assert result.stdout.strip() == str(out)
    img = check_png(out)
    assert img.shape[0] > 600 and img.shape[1] > 900


@pytest.mark.parametrize("d", [3, 8])
def test_plot_higher_dimension_explicit_output(tmp_path, d):
    """Tokens in d > 2 are projected; -o and --snapshots are honoured."""
    runfile = write_run(tmp_path / "run.h5", d=d, n=50, snapshots=7, diag_every=2)
    out = tmp_path / "sub" / "figure.png"
    out.parent.mkdir()
    result = run_script(runfile, "-o", out, "--snapshots", 3)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    check_png(out)


def test_single_snapshot_and_diagnostic(tmp_path):
    """K = S = 1 (e.g. a run stopped right after the initial layer)."""
    runfile = write_run(tmp_path / "one.h5", layers=0, snapshots=1)
    with h5py.File(runfile, "r") as h5:
        assert h5["tokens/X"].shape[0] == 1
        assert h5["diagnostics/layer"].shape == (1,)
    result = run_script(runfile, "--snapshots", 4)
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "one.png")


@pytest.mark.parametrize("status", ["failed", "running", "checkpointed"])
def test_incomplete_run_is_refused_unless_allowed(tmp_path, status):
    """A file whose status is not 'complete' is refused (one line, exit 2), and plotted with --allow-partial."""
    runfile = write_run(tmp_path / "run.h5", status=status, layers=6)
    result = run_script(runfile)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"plot_run.py: error: {runfile}: status is '{status}', not complete (an unfinished or failed run); "
        f"--allow-partial plots it anyway"]
    assert not (tmp_path / "run.png").exists()
    result = run_script(runfile, "--allow-partial")
    assert result.returncode == 0, result.stderr
    check_png(tmp_path / "run.png")


def test_error_missing_file(tmp_path):
    """A missing run file gives a one-line error and exit code 2."""
    result = run_script(tmp_path / "nope.h5")
    assert result.returncode == 2
    assert "error" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("plot_run.py: error:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nope.png").exists()


def test_error_not_hdf5(tmp_path):
    """A file that is not HDF5 gives a one-line error and exit code 2."""
    bogus = tmp_path / "bogus.h5"
    bogus.write_text("this is not an HDF5 file\n")
    result = run_script(bogus)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("plot_run.py: error:")
    assert "Traceback" not in result.stderr


def test_error_missing_group(tmp_path):
    """A file without /diagnostics gives a one-line error naming the group."""
    runfile = write_run(tmp_path / "run.h5")
    with h5py.File(runfile, "a") as h5:
        del h5["diagnostics"]
    result = run_script(runfile)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("plot_run.py: error:")
    assert "diagnostics" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(not os.path.isfile(os.environ.get("TOKDYN_RUNFILE", "")),
                    reason="TOKDYN_RUNFILE does not name an existing run file")
def test_plot_real_runfile(tmp_path):
    """Plot a run file written by the real C++ code (set TOKDYN_RUNFILE)."""
    out = tmp_path / "real.png"
    result = run_script(os.environ["TOKDYN_RUNFILE"], "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    check_png(out)


def test_nonpositive_energy_and_single_token(tmp_path):
    """Linear energy axis for values <= 0; N = 1 (no pairs, NaN cosines) works."""
    neg = write_run(tmp_path / "neg.h5", layers=5)
    with h5py.File(neg, "a") as h5:
        h5["diagnostics/energy"][...] -= 5.0
    one = write_run(tmp_path / "one.h5", n=1, layers=3)
    for runfile in (neg, one):
        result = run_script(runfile)
        assert result.returncode == 0, result.stderr
        check_png(runfile.with_suffix(".png"))


def test_helpers():
    """Snapshot choice includes first and last; default output name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.snapshot_indices(10, 4) == [0, 3, 6, 9]
    assert module.snapshot_indices(2, 4) == [0, 1]
    assert module.snapshot_indices(1, 4) == [0]
    assert module.default_output("dir/run.h5") == "dir/run.png"
    assert module.default_output("run.dat") == "run.dat.png"


def load_plot_run():
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("command", ["sde", "transformer"])
def test_steps_axis_and_title(tmp_path, command):
    """An sde run's L counts time steps of [0, T]: its panels and snapshots are against the time t (here 0.1
    per step), a transformer's against the layer. The title names the deck's parameters."""
    module = load_plot_run()
    runfile = write_run(tmp_path / "run.h5", layers=10, snapshots=3)
    with h5py.File(runfile, "a") as h5:
        h5.attrs["command"] = command
        h5.attrs["deck"] = "[model]\nN = 32\nd = 2\nL = 10\nT = 1\n\n[sde]\nscheme = heun\n"
        time, layer = h5["diagnostics/time"][()], h5["diagnostics/layer"][()]
        snapshot_time, snapshot_layer = h5["tokens/time"][()], h5["tokens/layer"][()]
    fig = module.make_figure(module.read_run(str(runfile)), 3)
    energy, cosines = fig.axes[0], fig.axes[2]  # fig.axes[1]: the order parameter's twin
    sde = command == "sde"
    assert [energy.get_xlabel(), cosines.get_xlabel()] == ["time t" if sde else "layer"] * 2
    assert np.allclose(energy.lines[0].get_xdata(), time if sde else layer)
    assert np.allclose(cosines.lines[0].get_xdata(), time if sde else layer)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title().startswith(("t = ", "layer "))]
    assert titles == ([f"t = {t:.4g}" for t in snapshot_time] if sde else [f"layer {k}" for k in snapshot_layer])
    title = fig._suptitle.get_text()
    assert title.startswith(f"tokdyn {command}\n")
    # Provenance in the footer, not the title: the file, the ranks, the version.
    footer = [t.get_text() for t in fig.texts if t.get_text().startswith("run.h5")]
    assert len(footer) == 1 and "ranks" in footer[0] and "tokdyn " in footer[0]
    assert ("N = 32, d = 2, steps = 10, T = 1" if sde else "N = 32, d = 2, L = 10, T = 1") in title
    assert ("scheme = heun" in title) == sde
    import matplotlib.pyplot as plt

    plt.close(fig)
