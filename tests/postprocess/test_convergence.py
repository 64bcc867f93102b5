"""Tests for postprocess/convergence.py.

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess/test_convergence.py

Set TOKDYN_CONVERGE_DIR to a directory of `tokdyn converge` result files (a
real sweep's output) to also fit it.
"""

import csv
import importlib.util
import json
import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import run_in_process

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "convergence.py"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
METRICS = ("mse_grid", "mse_sup", "mse_final")
LEVELS = (4, 8, 16, 32, 64)
TOKEN_METRICS = ("w2_sup", "w2_final", "mmd2_sup", "energy_error_sup", "mean_error_sup")
TOKEN_LEVELS = (16, 32, 64, 128, 256)


def load_module():
    """Import convergence.py as a module (for its helper functions)."""
    spec = importlib.util.spec_from_file_location("convergence", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synthetic_errors(levels=LEVELS, replicas=16, slope=-1.0, sigma=0.3, seed=3, metrics=METRICS):
    """Return {metric: array [R, J]} of errors c * level^slope * lognormal noise.

    Each replica has a common lognormal factor across levels (so pairing the
    levels of a replica matters) and an independent factor per level. The
    mean of exp(sigma Z) is the same at every level, so the slope of
    log(mean error) against log(level) is exactly `slope`.
    """
    rng = np.random.default_rng(seed)
    lv = np.asarray(levels, dtype=float)
    out = {}
    for k, metric in enumerate(metrics):
        c = (0.05, 0.2, 0.04, 0.1, 0.03)[k]
        common = rng.standard_normal((replicas, 1))
        own = rng.standard_normal((replicas, lv.size))
        noise = np.exp(sigma * (0.8 * common + 0.6 * own))
        out[metric] = c * lv[None, :] ** slope * noise
    return out


def write_result(path, levels, replicas, errors, study="depth", status="complete",
                 command="converge", seed=1, reference_layers=512, bytes_attrs=False):
    """Write one result file following the `tokdyn converge` schema.

    errors maps each metric to an array [len(replicas), len(levels)].
    With bytes_attrs the string attributes are fixed-length byte strings
    (h5py hands them back as bytes); otherwise variable-length strings.
    """
    def text(value):
        return np.bytes_(value.encode()) if bytes_attrs else value

    with h5py.File(path, "w") as h5:
        h5.attrs["tokdyn_version"] = text("0.1.0")
        h5.attrs.create("git_revision", "abc1234", dtype=h5py.string_dtype("ascii"))
        h5.attrs["command"] = text(command)
        h5.attrs["deck"] = text(f"[converge]\nstudy = {study}\n")
        h5.attrs["seed"] = np.int64(seed)
        h5.attrs["ranks"] = np.int32(1)
        h5.attrs["start_time"] = text("2024-01-01T00:00:00Z")
        h5.attrs["end_time"] = text("2024-01-01T00:01:00Z")
        h5.attrs["status"] = text(status)
        g = h5.create_group("converge")
        g.attrs["study"] = text(study)
        g.attrs["reference_layers"] = np.int64(reference_layers)
        g["levels"] = np.asarray(levels, dtype=np.float64)
        g["replicas"] = np.asarray(replicas, dtype=np.float64)
        for metric in METRICS:
            g[metric] = np.asarray(errors[metric], dtype=np.float64).reshape(
                len(replicas), len(levels))
    return path


def write_single(path, errors, levels=LEVELS, replica_ids=None, **kw):
    """Write all replicas and levels of `errors` into one multi-level file."""
    R = errors[METRICS[0]].shape[0]
    replica_ids = list(range(R)) if replica_ids is None else list(replica_ids)
    return write_result(path, levels, replica_ids, errors, **kw)


def write_split(directory, errors, levels=LEVELS, writer=None, name="r{i:03d}_l{level}.h5", **kw):
    """Write one file per (level, replica), as a sweep does; return the paths.

    writer (default write_result) writes one file; name is formatted with the replica i, the
    level and the sweep's array task (level index * R + i).
    """
    writer = writer or write_result
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    R = next(iter(errors.values())).shape[0]
    paths = []
    for i in range(R):
        for j, level in enumerate(levels):
            sub = {m: v[i:i + 1, j:j + 1] for m, v in errors.items()}
            path = directory / name.format(i=i, level=level, task=j * R + i)
            paths.append(writer(path, [level], [i], sub, **kw))
    return paths


def run_script(*args, cwd=None):
    """Run convergence.py's main(args) in this process (conftest.run_in_process: the imports are most of a
    start-up) in the folder cwd; return the CompletedProcess."""
    here = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return run_in_process(SCRIPT, *args)
    finally:
        os.chdir(here)


def run_ok(*args, cwd=None):
    """Run the script, assert success and return (summary dict, CompletedProcess)."""
    result = run_script(*args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    prefix = None
    argv = [str(a) for a in args]
    if "-o" in argv:
        prefix = argv[argv.index("-o") + 1]
    else:
        line = [x for x in result.stdout.splitlines() if x.startswith("wrote ")][0]
        prefix = os.path.join(cwd or ".", line[len("wrote "):].rsplit(".", 1)[0])
    with open(prefix + ".json") as f:
        return json.load(f), result


def assert_error(result, *needles):
    """Check a one-line error with exit status 2 and no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [x for x in result.stderr.strip().splitlines()
             if not x.startswith("convergence.py: warning:")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("convergence.py: error:")
    for needle in needles:
        assert needle in lines[0], lines[0]


def check_png(path, min_pixels=200):
    """Check that path is a plausible PNG image."""
    import matplotlib.image as mpimg

    path = Path(path)
    assert path.is_file()
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    assert img.shape[0] >= min_pixels and img.shape[1] >= min_pixels
    assert float(img[..., :3].std()) > 0.01  # not blank
    return img


@pytest.mark.parametrize("true_slope,study", [(-1.0, "depth"), (-0.5, "width")])
def test_slope_recovered(tmp_path, true_slope, study):
    """The fitted slope lies in its CI and the CI covers the true slope."""
    errors = synthetic_errors(slope=true_slope, seed=5)  # a well-behaved seed
    path = write_single(tmp_path / "all.h5", errors, study=study)
    summary, result = run_ok(path, "-o", tmp_path / "fit")
    assert summary["study"] == study
    for metric in METRICS:
        fit = summary["metrics"][metric]
        low, high = fit["slope_ci"]
        assert low < fit["slope"] < high
        assert low < true_slope < high, (metric, fit)
        assert high - low < 0.4
        assert abs(fit["slope"] - true_slope) < 0.15
    assert summary["expected_slope"] == -1.0
    assert f"slope of log mse_grid against log {'L' if study == 'depth' else 'm'}" \
        in result.stdout
    # A slope whose interval excludes the expected -1 is flagged as report.py flags it; one that holds it not.
    flagged = [x for x in result.stdout.splitlines() if x.startswith("slope of log") and "<- DISAGREES: " in x]
    assert len(flagged) == (0 if true_slope == -1.0 else len(METRICS)), result.stdout
    check_png(tmp_path / "fit.png")


def test_slope_matches_numpy(tmp_path):
    """The point slope is the least-squares slope of log(mean) on log(level)."""
    errors = synthetic_errors(slope=-1.0, seed=5)
    path = write_single(tmp_path / "all.h5", errors)
    summary, _ = run_ok(path, "-o", tmp_path / "fit", "--bootstrap", 200)
    for metric in METRICS:
        mean = errors[metric].mean(axis=0)
        expected = np.polyfit(np.log(LEVELS), np.log(mean), 1)[0]
        assert summary["metrics"][metric]["slope"] == pytest.approx(expected, rel=1e-10)


def test_split_files_equal_single_file(tmp_path):
    """One file per (level, replica), one per replica and one multi-level file agree."""
    errors = synthetic_errors(replicas=6, seed=11)
    single = write_single(tmp_path / "single.h5", errors)
    write_split(tmp_path / "sweep", errors)
    per_replica = tmp_path / "per_replica"
    per_replica.mkdir()
    for i in range(6):
        write_result(per_replica / f"r{i}.h5", LEVELS, [i],
                     {m: errors[m][i:i + 1] for m in METRICS})
    a, _ = run_ok(single, "-o", tmp_path / "a", "--seed", 4)
    b, out_b = run_ok(tmp_path / "sweep", "-o", tmp_path / "b", "--seed", 4)
    c, _ = run_ok(per_replica, "-o", tmp_path / "c", "--seed", 4)
    assert len(b["files"]) == 6 * len(LEVELS)
    assert "30 file(s) used" in out_b.stdout
    for other in (b, c):
        assert other["levels"] == a["levels"] == list(LEVELS)
        assert other["n"] == a["n"] == [6] * len(LEVELS)
        for metric in METRICS:
            x, y = a["metrics"][metric], other["metrics"][metric]
            for key in ("mean", "se", "ci_low", "ci_high", "slope_ci"):
                assert np.allclose(x[key], y[key], rtol=1e-12, atol=0)
            assert x["slope"] == pytest.approx(y["slope"], rel=1e-12)
    assert a["bootstrap"]["paired_groups"] == [list(LEVELS)]


def test_identical_duplicates_are_fine(tmp_path):
    """The same pairs in a sweep directory and a multi-level file are merged once."""
    errors = synthetic_errors(replicas=5, seed=2)
    single = write_single(tmp_path / "single.h5", errors)
    write_split(tmp_path / "sweep", errors)
    a, _ = run_ok(single, "-o", tmp_path / "a")
    b, _ = run_ok(tmp_path / "sweep", single, single, "-o", tmp_path / "b")
    assert b["n"] == a["n"] == [5] * len(LEVELS)
    assert b["metrics"]["mse_grid"]["mean"] == a["metrics"]["mse_grid"]["mean"]
    assert b["slope_ci"] == a["slope_ci"]


def test_conflicting_duplicate_is_an_error(tmp_path):
    """The same (level, replica) with different values is an error naming both."""
    errors = synthetic_errors(replicas=4, seed=2)
    write_split(tmp_path / "sweep", errors)
    other = {m: errors[m][2:3, 1:2] * 1.01 for m in METRICS}
    bad = write_result(tmp_path / "bad.h5", [LEVELS[1]], [2], other)
    result = run_script(tmp_path / "sweep", bad, "-o", tmp_path / "fit")
    assert_error(result, "duplicate", f"level {LEVELS[1]}", "replica 2", "bad.h5")
    assert not (tmp_path / "fit.json").exists()


def test_incomplete_files_are_skipped(tmp_path):
    """Files whose status is not 'complete' are skipped with a warning."""
    errors = synthetic_errors(replicas=5, seed=8)
    write_split(tmp_path / "sweep", errors)
    ref, _ = run_ok(tmp_path / "sweep", "-o", tmp_path / "ref")
    # a running task (values would conflict, and a new level) and a failed one
    junk = {m: np.full((1, 1), 99.0) for m in METRICS}
    write_result(tmp_path / "sweep" / "running.h5", [LEVELS[0]], [0], junk, status="running")
    write_result(tmp_path / "sweep" / "failed.h5", [128], [0], junk, status="failed",
                 bytes_attrs=True)
    summary, result = run_ok(tmp_path / "sweep", "-o", tmp_path / "fit")
    warnings = [x for x in result.stderr.splitlines() if "warning" in x]
    assert len(warnings) == 2
    assert any("running.h5" in x and "'running'" in x for x in warnings)
    assert any("failed.h5" in x and "'failed'" in x for x in warnings)
    assert all(x.startswith("convergence.py: warning: skipping") for x in warnings)
    assert summary["levels"] == ref["levels"]
    assert summary["metrics"] == ref["metrics"]
    assert len(summary["skipped_files"]) == 2
    assert "2 skipped" in result.stdout


def test_all_files_skipped_is_an_error(tmp_path):
    """No complete file among the inputs is an error."""
    errors = synthetic_errors(replicas=2, seed=8)
    path = write_single(tmp_path / "run.h5", errors, status="checkpointed")
    result = run_script(path, "-o", tmp_path / "fit")
    assert_error(result, "no complete")
    assert "warning: skipping" in result.stderr


def test_wrong_command_is_an_error(tmp_path):
    """A file written by another command ends with exit status 2."""
    errors = synthetic_errors(replicas=3, seed=1)
    write_split(tmp_path / "sweep", errors)
    write_result(tmp_path / "sweep" / "zz_transformer.h5", [LEVELS[0]], [0],
                 {m: errors[m][:1, :1] for m in METRICS}, command="transformer")
    result = run_script(tmp_path / "sweep", "-o", tmp_path / "fit")
    assert_error(result, "zz_transformer.h5", "'transformer'", "converge")
    for ext in (".json", ".csv", ".png"):
        assert not (tmp_path / ("fit" + ext)).exists()


def test_mixed_studies_is_an_error(tmp_path):
    """Depth and width files cannot be merged."""
    errors = synthetic_errors(replicas=3, seed=1)
    a = write_single(tmp_path / "depth.h5", errors, study="depth")
    b = write_single(tmp_path / "width.h5", errors, study="width")
    assert_error(run_script(a, b, "-o", tmp_path / "fit"), "mixed studies")


def test_one_level_is_an_error(tmp_path):
    """At least two levels are needed for a slope."""
    errors = synthetic_errors(levels=(8,), replicas=4, seed=1)
    path = write_single(tmp_path / "one.h5", errors, levels=(8,))
    assert_error(run_script(path, "-o", tmp_path / "fit"), "two levels")


def test_input_errors(tmp_path):
    """Missing files, empty directories, non-HDF5 files and bad schemas."""
    assert_error(run_script(tmp_path / "nope.h5"), "no such file")
    (tmp_path / "empty").mkdir()
    assert_error(run_script(tmp_path / "empty"), "no *.h5 files")
    bogus = tmp_path / "bogus.h5"
    bogus.write_text("not HDF5\n")
    assert_error(run_script(bogus), "cannot open")
    errors = synthetic_errors(replicas=3, seed=1)
    path = write_single(tmp_path / "bad.h5", errors)
    with h5py.File(path, "a") as h5:
        del h5["converge/mse_sup"]
        h5["converge/mse_sup"] = np.zeros((len(LEVELS), 3))  # transposed
    assert_error(run_script(path), "mse_sup", "shape")
    with h5py.File(path, "a") as h5:
        del h5["converge"]
    assert_error(run_script(path), "/converge")
    result = run_script(path, "--bootstrap", 0)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_json_csv_png_contents(tmp_path):
    """The JSON and CSV hold the per-level statistics; the PNG is valid."""
    errors = synthetic_errors(replicas=7, seed=9)
    path = write_single(tmp_path / "all.h5", errors, bytes_attrs=True)
    summary, result = run_ok(path, "-o", tmp_path / "out", "--metric", "mse_sup",
                             "--bootstrap", 500, "--seed", 12)
    for key in ("study", "metric", "levels", "n", "slope", "slope_ci", "expected_slope",
                "metrics", "bootstrap", "files"):
        assert key in summary
    assert summary["metric"] == "mse_sup"
    assert summary["files"] == [str(path)]
    assert summary["bootstrap"]["resamples"] == 500
    assert summary["bootstrap"]["seed"] == 12
    assert summary["slope"] == summary["metrics"]["mse_sup"]["slope"]
    assert summary["slope_ci"] == summary["metrics"]["mse_sup"]["slope_ci"]
    assert summary["n"] == [7] * len(LEVELS)
    for metric in METRICS:
        values = errors[metric]
        fit = summary["metrics"][metric]
        mean = values.mean(axis=0)
        se = values.std(axis=0, ddof=1) / np.sqrt(7)
        assert np.allclose(fit["mean"], mean, rtol=1e-12)
        assert np.allclose(fit["se"], se, rtol=1e-12)
        assert np.allclose(fit["ci_low"], mean - 1.96 * se, rtol=1e-12)
        assert np.allclose(fit["ci_high"], mean + 1.96 * se, rtol=1e-12)
        assert isinstance(fit["slope"], float) and len(fit["slope_ci"]) == 2

    with open(tmp_path / "out.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(LEVELS)
    assert list(rows[0].keys()) == ["level", "n"] + [
        f"{m}_{s}" for m in METRICS for s in ("mean", "se")] + ["status"]
    assert {row["status"] for row in rows} == {"complete"}
    for j, row in enumerate(rows):
        assert int(row["level"]) == LEVELS[j]
        assert int(row["n"]) == 7
        for metric in METRICS:
            assert float(row[f"{metric}_mean"]) == pytest.approx(
                errors[metric][:, j].mean(), rel=1e-12)
            assert float(row[f"{metric}_se"]) == pytest.approx(
                summary["metrics"][metric]["se"][j], rel=1e-12)

    check_png(tmp_path / "out.png")
    lines = result.stdout.splitlines()
    assert "mse_sup mean" in lines[1]
    slope_lines = [x for x in lines if x.startswith("slope of log")]
    assert [x.split()[3] for x in slope_lines] == ["mse_sup", "mse_grid", "mse_final"]
    assert [x for x in lines if x.startswith("wrote ")] == [
        f"wrote {tmp_path / 'out'}{ext}" for ext in (".json", ".csv", ".png")]


def test_default_prefix(tmp_path):
    """Without -o the outputs are ./convergence-<study>.{json,csv,png}."""
    errors = synthetic_errors(replicas=4, seed=6)
    write_split(tmp_path / "sweep", errors, study="width")
    work = tmp_path / "work"
    work.mkdir()
    summary, _ = run_ok(tmp_path / "sweep", "--bootstrap", 100, cwd=work)
    assert summary["study"] == "width"
    for ext in (".json", ".csv", ".png"):
        assert (work / f"convergence-width{ext}").is_file()
    check_png(work / "convergence-width.png")


def test_bootstrap_is_seeded(tmp_path):
    """The same --seed gives the same interval; another seed another one."""
    errors = synthetic_errors(replicas=8, seed=4)
    path = write_single(tmp_path / "all.h5", errors)
    a, _ = run_ok(path, "-o", tmp_path / "a", "--seed", 3, "--bootstrap", 300)
    b, _ = run_ok(path, "-o", tmp_path / "b", "--seed", 3, "--bootstrap", 300)
    c, _ = run_ok(path, "-o", tmp_path / "c", "--seed", 4, "--bootstrap", 300)
    assert a["slope_ci"] == b["slope_ci"]
    assert a["slope_ci"] != c["slope_ci"]
    assert a["slope"] == c["slope"]


def test_unequal_replica_sets(tmp_path):
    """Levels with different replica sets are resampled per level and still fitted."""
    errors = synthetic_errors(replicas=12, seed=7)
    full = {m: errors[m][:, :3] for m in METRICS}
    part = {m: errors[m][:8, 3:] for m in METRICS}
    write_result(tmp_path / "coarse.h5", LEVELS[:3], range(12), full)
    write_result(tmp_path / "fine.h5", LEVELS[3:], range(8), part)
    summary, _ = run_ok(tmp_path / "coarse.h5", tmp_path / "fine.h5", "-o", tmp_path / "fit")
    assert summary["n"] == [12, 12, 12, 8, 8]
    assert summary["bootstrap"]["paired_groups"] == [list(LEVELS[:3]), list(LEVELS[3:])]
    low, high = summary["slope_ci"]
    assert low < summary["slope"] < high
    assert low < -1.0 < high


def test_pairing_narrows_interval():
    """Paired resampling of correlated replicas gives a narrower slope interval."""
    module = load_module()
    rng = np.random.default_rng(0)
    levels = np.array(LEVELS, dtype=float)
    R = 20
    common = np.exp(0.8 * rng.standard_normal((R, 1)))
    values = common / levels[None, :] * np.exp(0.05 * rng.standard_normal((R, levels.size)))
    stacked = np.repeat(values[:, :, None], 3, axis=2)
    paired = [(tuple(range(R)), stacked[:, j, :]) for j in range(levels.size)]
    # the same data with distinct replica ids per level: no pairing possible
    unpaired = [(tuple(range(100 * j, 100 * j + R)), stacked[:, j, :])
                for j in range(levels.size)]
    n, stats = module.level_statistics(paired)
    fp = module.fit_slopes(levels, paired, stats, 1000, 1)["mse_grid"]
    fu = module.fit_slopes(levels, unpaired, stats, 1000, 1)["mse_grid"]
    assert fp["slope"] == pytest.approx(fu["slope"])
    assert (fp["ci_high"] - fp["ci_low"]) < 0.5 * (fu["ci_high"] - fu["ci_low"])
    assert fp["ci_low"] < -1.0 < fp["ci_high"]


def test_helpers():
    """Least-squares slope and number formatting."""
    module = load_module()
    x = np.log(np.array([2.0, 4.0, 8.0, 16.0]))
    y = np.array([[1.0, 0.5, 0.2, 0.1], [3.0, 3.0, 3.0, 3.0]])
    expected = [np.polyfit(x, row, 1)[0] for row in y]
    assert np.allclose(module.ls_slope(x, y), expected)
    assert module.number(8.0) == 8 and isinstance(module.number(8.0), int)
    assert module.number(2.5) == 2.5
    assert np.isnan(module.log_slope(np.array([1.0, 2.0]), np.array([1.0, 0.0])))


# --- propagation of chaos: study "tokens" (levels N = N0 2^j, distances to the mean field) ---

def write_tokens_result(path, levels, replicas, values, distance="circular", d=2,
                        bound_slope=-0.5, sharp_slope=-1.0, times=(0.0, 0.5, 1.0), **kw):
    """Write one tokens-study result file following the `tokdyn converge` schema.

    values maps each tokens metric to an array [len(replicas), len(levels)]; the time
    series [R, J, S] are filled so that their sup over times is the summary.
    """
    R, J, S = len(replicas), len(levels), len(times)
    with h5py.File(path, "w") as h5:
        h5.attrs["tokdyn_version"] = "0.1.0"
        h5.attrs["command"] = kw.get("command", "converge")
        h5.attrs["deck"] = "[converge]\nstudy = tokens\n"
        h5.attrs["seed"] = np.int64(kw.get("seed", 1))
        h5.attrs["status"] = kw.get("status", "complete")
        g = h5.create_group("converge")
        g.attrs["study"] = "tokens"
        g.attrs["distance"] = distance
        g.attrs["d"] = np.int64(d)
        g.attrs["bound_slope"] = np.float64(bound_slope)
        g.attrs["sharp_slope"] = np.float64(sharp_slope)
        g.attrs["reference_solver"] = "quadrature"
        g.attrs["reference_size"] = np.int64(256)
        g["levels"] = np.asarray(levels, dtype=np.float64)
        g["replicas"] = np.asarray(replicas, dtype=np.float64)
        g["times"] = np.asarray(times, dtype=np.float64)
        ramp = np.linspace(0.5, 1.0, S)
        for metric in TOKEN_METRICS:
            v = np.asarray(values[metric], dtype=np.float64).reshape(R, J)
            g[metric] = v
            if metric.endswith("_sup"):
                g[metric[:-len("_sup")]] = v[:, :, None] * ramp
    return path


def write_tokens_split(directory, values, levels=TOKEN_LEVELS, **kw):
    """One tokens file per (level, replica), named as jobscripts/sweep-tokens.sbatch names them."""
    return write_split(directory, values, levels, writer=write_tokens_result,
                       name="tokens-{task}.h5", **kw)


def synthetic_tokens(slope, replicas=16, seed=9):  # seed 9: a well-behaved one
    """Distances c N^slope with lognormal replica noise, for every tokens metric."""
    return synthetic_errors(levels=TOKEN_LEVELS, replicas=replicas, slope=slope, seed=seed,
                            metrics=TOKEN_METRICS)


@pytest.mark.parametrize("true_slope,faster", [(-1.0, True), (-0.3, False)])
def test_tokens_slope_and_bound(tmp_path, true_slope, faster):
    """A known power law is recovered in its interval; the comparison with the bound is right."""
    values = synthetic_tokens(true_slope)
    write_tokens_split(tmp_path / "sweep", values)
    summary, result = run_ok(tmp_path / "sweep", "-o", tmp_path / "fit", "--bootstrap", 1000)
    assert summary["study"] == "tokens"
    assert summary["metric"] == "w2_sup"  # the default of the tokens study
    assert summary["level_name"] == "tokens N"
    assert summary["levels"] == list(TOKEN_LEVELS)
    assert summary["n"] == [16] * len(TOKEN_LEVELS)
    assert list(summary["metrics"]) == list(TOKEN_METRICS)
    for metric in TOKEN_METRICS:
        fit = summary["metrics"][metric]
        low, high = fit["slope_ci"]
        assert low < fit["slope"] < high
        assert low < true_slope < high, (metric, fit)
        assert abs(fit["slope"] - true_slope) < 0.15
    assert summary["reference_slopes"] == {"bound": -0.5, "sharp": -1.0}
    assert summary["expected_slope"] == -0.5
    bound = summary["bound"]
    assert bound["metric"] == "w2_sup" and bound["slope"] == -0.5
    assert bound["observed_slope"] == summary["slope"]
    assert bound["observed_ci"] == summary["slope_ci"]
    assert bound["at_least_as_fast"] is faster
    assert bound["ci_at_least_as_fast"] is faster  # well away from the bound either way
    verdict = "at least as fast as" if faster else "slower than"
    assert f"is {verdict} the bound slope -0.5" in result.stdout
    assert "slope of log w2_sup against log N" in result.stdout
    assert "(bound -0.5, sharp -1)" in result.stdout
    # Slower than the bound (the interval above it) is flagged; faster is not.
    flagged = [x for x in result.stdout.splitlines() if x.startswith("slope of log") and "<- DISAGREES: " in x]
    assert len(flagged) == (0 if faster else len(TOKEN_METRICS)), result.stdout


def test_tokens_outputs(tmp_path):
    """JSON, CSV and PNG of a tokens study; --metric picks another distance."""
    values = synthetic_tokens(-1.0, replicas=6, seed=9)
    path = write_tokens_result(tmp_path / "all.h5", TOKEN_LEVELS, range(6), values,
                               distance="sliced", d=5, bound_slope=-0.4, sharp_slope=-0.4)
    summary, result = run_ok(path, "-o", tmp_path / "out", "--metric", "mmd2_sup",
                             "--bootstrap", 300)
    assert summary["metric"] == "mmd2_sup"
    assert summary["slope"] == summary["metrics"]["mmd2_sup"]["slope"]
    assert summary["bound"]["metric"] == "mmd2_sup"
    assert summary["study_attributes"] == {
        "distance": "sliced", "d": 5, "bound_slope": -0.4, "sharp_slope": -0.4,
        "reference_solver": "quadrature", "reference_size": 256}
    for metric in TOKEN_METRICS:
        assert np.allclose(summary["metrics"][metric]["mean"], values[metric].mean(axis=0),
                           rtol=1e-12)
    with open(tmp_path / "out.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0].keys()) == ["level", "n"] + [
        f"{m}_{s}" for m in TOKEN_METRICS for s in ("mean", "se")] + ["status"]
    assert [int(r["level"]) for r in rows] == list(TOKEN_LEVELS)
    assert float(rows[2]["w2_sup_mean"]) == pytest.approx(values["w2_sup"][:, 2].mean(),
                                                          rel=1e-12)
    check_png(tmp_path / "out.png")
    slope_lines = [x for x in result.stdout.splitlines() if x.startswith("slope of log")]
    assert [x.split()[3] for x in slope_lines] == [
        "mmd2_sup", "w2_sup", "w2_final", "energy_error_sup", "mean_error_sup"]
    assert [x for x in result.stdout.splitlines() if x.startswith("wrote ")] == [
        f"wrote {tmp_path / 'out'}{ext}" for ext in (".json", ".csv", ".png")]


def test_tokens_default_prefix(tmp_path):
    """Without -o a tokens sweep writes ./convergence-tokens.{json,csv,png}."""
    write_tokens_split(tmp_path / "sweep", synthetic_tokens(-1.0, replicas=3))
    work = tmp_path / "work"
    work.mkdir()
    run_ok(tmp_path / "sweep", "--bootstrap", 100, cwd=work)
    for ext in (".json", ".csv", ".png"):
        assert (work / f"convergence-tokens{ext}").is_file()


@pytest.mark.parametrize("attribute,value,shown", [
    ("distance", "sliced", "'circular'"), ("d", 3, "= 2"), ("bound_slope", -0.25, "-0.5")])
def test_tokens_mixed_attributes_refused(tmp_path, attribute, value, shown):
    """Files of one tokens study must agree on the distance, d and the bound slope."""
    values = synthetic_tokens(-1.0, replicas=3)
    write_tokens_split(tmp_path / "sweep", values)
    odd = {m: values[m][:1, :1] * 0 + 1e-3 for m in TOKEN_METRICS}
    bad = write_tokens_result(tmp_path / "odd.h5", [512], [0], odd, **{attribute: value})
    result = run_script(tmp_path / "sweep", bad, "-o", tmp_path / "fit")
    assert_error(result, f"mixed {attribute}", "odd.h5", shown, "must agree")
    for ext in (".json", ".csv", ".png"):
        assert not (tmp_path / ("fit" + ext)).exists()


def test_tokens_schema_errors(tmp_path):
    """A missing tokens attribute or dataset, a metric of another study, tokens mixed with depth."""
    values = synthetic_tokens(-1.0, replicas=3)
    path = write_tokens_result(tmp_path / "t.h5", TOKEN_LEVELS, range(3), values)
    assert_error(run_script(path, "--metric", "mse_grid", "-o", tmp_path / "fit"),
                 "mse_grid", "not a metric of the tokens study")
    depth = write_single(tmp_path / "depth.h5", synthetic_errors(replicas=3))
    assert_error(run_script(path, depth, "-o", tmp_path / "fit"), "mixed studies")
    assert_error(run_script(depth, "--metric", "w2_sup", "-o", tmp_path / "fit"),
                 "not a metric of the depth study")
    with h5py.File(path, "a") as h5:
        del h5["converge/mean_error_sup"]
    assert_error(run_script(path, "-o", tmp_path / "fit"), "/converge/mean_error_sup")
    with h5py.File(path, "a") as h5:
        del h5["converge"].attrs["bound_slope"]
    assert_error(run_script(path, "-o", tmp_path / "fit"), "/converge/bound_slope",
                 "tokens study")


CONVERGE_DIR = os.environ.get("TOKDYN_CONVERGE_DIR", "")


@pytest.mark.skipif(not os.path.isdir(CONVERGE_DIR),
                    reason="TOKDYN_CONVERGE_DIR does not name a directory")
def test_real_converge_dir(tmp_path):
    """Fit the result files of a real `tokdyn converge` sweep (TOKDYN_CONVERGE_DIR)."""
    summary, result = run_ok(CONVERGE_DIR, "-o", tmp_path / "real")
    assert summary["study"] in ("depth", "width", "tokens")
    assert len(summary["levels"]) >= 2
    assert summary["levels"] == sorted(summary["levels"])
    assert all(k >= 1 for k in summary["n"])
    expected = TOKEN_METRICS if summary["study"] == "tokens" else METRICS
    assert list(summary["metrics"]) == list(expected)
    for metric in expected:
        assert all(v is None or v >= 0 for v in summary["metrics"][metric]["mean"])
    assert np.isfinite(summary["slope"])
    with open(tmp_path / "real.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == len(summary["levels"])
    check_png(tmp_path / "real.png")


def test_figure_metrics_apart_and_intervals_on_the_log_axis():
    """Every metric visible (its own marker and line style, the others drawn over the chosen one, none faded)
    even where two coincide; an interval reaching below zero is drawn down to mean / 20, never off the log
    axis, and marked; the title names the shared parameters."""
    import matplotlib.pyplot as plt

    module = load_module()
    levels = np.array([4.0, 8.0, 16.0])
    grid = np.array([1e-2, 5e-3, 2.5e-3])
    means = {"mse_grid": grid, "mse_sup": grid * 1.01, "mse_final": grid / 3}
    se = {"mse_grid": np.array([1e-3, 1e-3, 2e-3]), "mse_sup": grid / 100, "mse_final": grid / 100}
    stats = {m: {"mean": means[m], "se": se[m], "ci_low": means[m] - 1.96 * se[m], "ci_high": means[m] + 1.96 * se[m]}
             for m in METRICS}
    assert stats["mse_grid"]["ci_low"][2] < 0
    fits = {m: {"slope": -1.0, "ci_low": -1.1, "ci_high": -0.9} for m in METRICS}
    fig = module.make_figure("depth", "mse_grid", levels, stats, fits, module.reference_slopes("depth", {}), {},
                             {"converge.study": "depth", "model.N": 8}, 2)
    ax = fig.axes[0]
    bars = {c.get_label().split(" ")[0]: c for c in ax.containers}
    assert sorted(bars) == sorted(METRICS)
    data = {m: bars[m].lines[0] for m in METRICS}
    assert len({data[m].get_marker() for m in METRICS}) == 3
    assert len({str(data[m].get_linestyle()) for m in METRICS}) == 3
    assert all(data[m].get_alpha() in (None, 1.0) for m in METRICS)
    assert data["mse_sup"].get_zorder() > data["mse_grid"].get_zorder()
    for m in METRICS:
        for segment in bars[m].lines[2][0].get_segments():
            j = int(np.argmin(abs(levels - segment[0, 0])))
            assert segment[:, 1].min() >= means[m][j] / 20 * (1 - 1e-12) > 0
    clipped = [ln for ln in ax.lines if ln.get_marker() == "v"]
    assert len(clipped) == 1 and np.allclose(clipped[0].get_xdata(), [16.0])
    assert np.allclose(clipped[0].get_ydata(), [grid[2] / 20])
    fig.canvas.draw()
    assert ax.get_ylim()[0] > 0
    title = fig._suptitle.get_text()
    assert title.startswith("tokdyn converge\n") and "N = 8" in title
    assert any(t.get_text() == "depth study, 2 files" for t in fig.texts)  # the footer
    plt.close(fig)
