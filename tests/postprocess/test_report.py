"""Tests for postprocess/report.py: the page of a directory of run files, its numbers (the scripts' own), the
flags on intervals that exclude their prediction, the files it cannot use, and its errors. (That a browser
renders the page: tests/cli/postprocess_report.sh, the CTest test postprocess_report.)

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess
TOKDYN_MARKOVDIR and TOKDYN_TRAINDIR name real markov and train runs (CTest: tests/cli/produce_study_runs.sh
writes them); the test of the groups is skipped without them.
"""

import base64
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "postprocess" / "report.py"
TIMEOUT = 300  # conftest.py's run_script
LYAPUNOV_DECK = "[model]\nd = 5\nL = 100\nT = 20\n\n[mlp]\nactivation = relu\n\n[lyapunov]\nreplicas = 200\n"


class Page(HTMLParser):
    """The sections (h2 titles), the table rows ([cells], flagged) and the images (alt, src) of a report."""

    def __init__(self, text):
        super().__init__()
        self.titles, self.rows, self.images = [], [], []
        self._cell, self._title, self._row = None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self._title = ""
        elif tag == "tr":
            self._row = ([], attrs.get("class") == "disagrees")
        elif tag == "td" and self._row is not None:
            self._cell = ""
        elif tag == "img":
            self.images.append((attrs.get("alt", ""), attrs.get("src", "")))

    def handle_endtag(self, tag):
        if tag == "h2":
            self.titles.append(self._title.strip())
            self._title = None
        elif tag == "td" and self._cell is not None:
            self._row[0].append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row[0]:
                self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._title is not None:
            self._title += data
        if self._cell is not None:
            self._cell += data


def write_lyapunov(path, slopes, status="complete"):
    """A lyapunov run file: the predictions lambda1 = -0.1, var_rate = 0.2, lambdabar = 0.2 and the measured
    slopes [value, low, high] given."""
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = "lyapunov"
        h5.attrs["status"] = status
        h5.attrs["deck"] = LYAPUNOV_DECK
        g = h5.create_group("lyapunov")
        for name, value in (("lambda1", -0.1), ("var_rate", 0.2), ("lambdabar", 0.2)):
            g.attrs[name] = value
        for name, value in zip(("slope_mean_log", "slope_var_log", "slope_log_mean_square"), slopes):
            g[name] = np.asarray(value, dtype=float)


def write_converge(path, seed=4):
    """A depth study: errors 0.05 / L with lognormal noise over 12 replicas at L = 8 .. 64."""
    rng = np.random.default_rng(seed)
    levels = np.array([8.0, 16.0, 32.0, 64.0])
    with h5py.File(path, "w") as h5:
        h5.attrs["command"] = "converge"
        h5.attrs["status"] = "complete"
        h5.attrs["deck"] = "[model]\nN = 8\nd = 5\n\n[converge]\nstudy = depth\nL0 = 8\nlevels = 4\n"
        h5.attrs["seed"] = 1
        g = h5.create_group("converge")
        g.attrs["study"] = "depth"
        g.attrs["reference_layers"] = 512
        g["levels"] = levels
        g["replicas"] = np.arange(12.0)
        for k, metric in enumerate(("mse_grid", "mse_sup", "mse_final")):
            g[metric] = (0.05 + 0.01 * k) / levels[None, :] * np.exp(0.2 * rng.standard_normal((12, 4)))


def decoded_png(src):
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    data = base64.b64decode(src[len(prefix):], validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    return data


def test_numbers_flags_and_unused_files(tmp_path, run_script):
    """The lyapunov slope whose interval excludes its prediction is the one flagged; the converge slopes are
    convergence.py's (same files, same bootstrap); a checkpointed run and a file that is not HDF5 are listed
    with their reasons."""
    runs = tmp_path / "runs"
    runs.mkdir()
    write_lyapunov(runs / "lyapunov.h5", [[-0.092, -0.105, -0.076], [0.219, 0.179, 0.268], [0.083, 0.033, 0.125]])
    write_lyapunov(runs / "unfinished.h5", [[0, 0, 0]] * 3, status="checkpointed")
    write_converge(runs / "converge.h5")
    (runs / "notes.h5").write_text("not HDF5")
    out = tmp_path / "page.html"
    result = run_script(runs, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(out)]
    page = Page(out.read_text())
    assert page.titles == ["lyapunov.h5", "converge depth study (1 file)", "files not used"]
    flagged = [cells for cells, disagrees in page.rows if disagrees]
    assert flagged == [["slope of log E|X-Y|^2 (95% bootstrap)", "0.083 [0.033, 0.125]", "lambdabar = 0.2000",
                        "DISAGREES: the interval excludes the prediction 0.2"]]
    rows = {cells[0]: cells for cells, _ in page.rows}
    assert rows["slope of E log|X-Y| (95% bootstrap)"][3] == "the interval holds the prediction"
    # convergence.py on the same file: the same slopes and intervals.
    fit = subprocess.run(["/usr/bin/python3", str(REPO / "postprocess" / "convergence.py"), str(runs / "converge.h5"),
                          "-o", str(tmp_path / "c")], capture_output=True, text=True, timeout=TIMEOUT)
    assert fit.returncode == 0, fit.stderr
    summary = json.loads((tmp_path / "c.json").read_text())
    for metric, m in summary["metrics"].items():
        low, high = m["slope_ci"]
        cells = rows[f"slope of log {metric} against log L (95% bootstrap)"]
        assert cells[1] == f"{m['slope']:.4g} [{low:.4g}, {high:.4g}]" and cells[2] == "-1"
    assert rows["unfinished.h5"][1] == "status is 'checkpointed', not complete (--allow-partial includes it)"
    assert rows["notes.h5"][1].startswith(f"cannot open {runs / 'notes.h5'} as HDF5")
    [(alt, src)] = page.images
    assert alt.startswith("convergence.py")
    decoded_png(src)


def test_allow_partial(tmp_path, run_script):
    """With --allow-partial an unfinished run gets its section, marked partial."""
    write_lyapunov(tmp_path / "unfinished.h5", [[-0.1, -0.2, 0.0]] * 3, status="running")
    result = run_script(tmp_path, "--allow-partial")
    assert result.returncode == 0, result.stderr
    page = Page((tmp_path / "report.html").read_text())
    assert page.titles == ["unfinished.h5 partial (status: running)"]


def test_errors(tmp_path, run_script):
    """No directory, no *.h5 in it, or no file it can use: one line, exit status 2, no page."""
    empty = tmp_path / "empty"
    empty.mkdir()
    unusable = tmp_path / "unusable"
    unusable.mkdir()
    (unusable / "a.h5").write_text("junk")
    with h5py.File(unusable / "w.h5", "w") as h5:
        h5.attrs["command"] = "weights"
    for directory, message in ((tmp_path / "absent", "no such directory"), (empty, "holds no run files"),
                               (unusable, "no run file the report can use (a.h5: cannot open")):
        result = run_script(directory)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("report.py: error:") and message in lines[0], lines
        assert "w.h5: a tokdyn weights file: no post-processing script reads it" in lines[0] or directory != unusable
        assert not (directory / "report.html").exists()


def test_groups_of_real_runs(tmp_path, run_script):
    """Real markov runs swept over eps and train runs: a section per markov run, the sweep's fit (its stage-I
    verdict is focus_dilution.py's) and one section of the train runs with training.py's three figures."""
    markov, train = os.environ.get("TOKDYN_MARKOVDIR", ""), os.environ.get("TOKDYN_TRAINDIR", "")
    if not (os.path.isdir(markov) and os.path.isdir(train)):
        pytest.skip("TOKDYN_MARKOVDIR or TOKDYN_TRAINDIR names no directory")
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in sorted(Path(markov).glob("*.h5")) + sorted(Path(train).glob("*.h5"))[:2]:
        shutil.copy(path, runs)
    result = run_script(runs)
    assert result.returncode == 0, result.stderr
    page = Page((runs / "report.html").read_text())
    markov_files = sorted(p.name for p in Path(markov).glob("*.h5"))
    assert page.titles == markov_files + [f"markov eps sweep ({len(markov_files)} runs over model.eps)",
                                          "train runs (2 runs)"]
    fit = subprocess.run(["/usr/bin/python3", str(REPO / "postprocess" / "focus_dilution.py"), "sweep", str(runs),
                          "-o", str(tmp_path / "sweep")], capture_output=True, text=True, timeout=TIMEOUT)
    assert fit.returncode == 0, fit.stderr
    t1 = json.loads((tmp_path / "sweep.json").read_text())["fits"]["t_I"]
    [(cells, disagrees)] = [r for r in page.rows if r[0][0].startswith("stage I onset: slope")]
    assert cells[1] == f"{t1['slope']:.4g} [{t1['low']:.4g}, {t1['high']:.4g}]"
    assert disagrees == (not t1["prediction_inside"])
    alts = [alt.split(":")[0] for alt, _ in page.images]
    assert alts.count("focus_dilution.py run") == 2 * len(markov_files)
    assert alts.count("focus_dilution.py sweep") == 1 and alts.count("training.py") == 3
    for _, src in page.images:
        decoded_png(src)
