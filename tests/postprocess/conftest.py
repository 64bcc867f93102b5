"""Fixtures shared by the postprocess tests of the figure scripts (test_paper_figures.py,
test_synchronization.py, test_spectrum.py): running the module's script and checking a PNG it wrote.

A test module using them sets SCRIPT (the path of its postprocess/ script), TIMEOUT (seconds a run
may take), PNG_MIN_SHAPE (the least (height, width) in pixels of its figures) and, for real_input,
INPUT_ENV (the environment variable naming the input made by the real code) and INPUT_KIND ("file"
or "directory").
"""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys

import pytest

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


@pytest.fixture
def real_input(request):
    """The path the module's INPUT_ENV names (output of the real code, CTest: a fixture test writes
    it); the test is skipped when the variable names no file (no directory) of INPUT_KIND."""
    variable, kind = request.module.INPUT_ENV, request.module.INPUT_KIND
    path = os.environ.get(variable, "")
    if not (os.path.isfile(path) if kind == "file" else os.path.isdir(path)):
        pytest.skip(f"{variable} names no {kind}")
    return path


_SCRIPTS = {}


def _script_module(path):
    """The module of a postprocess script, loaded once per session (its imports are the expensive part)."""
    path = str(path)
    if path not in _SCRIPTS:
        spec = importlib.util.spec_from_file_location("script_" + os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _SCRIPTS[path] = module
    return _SCRIPTS[path]


@pytest.fixture
def run_script(request):
    """run_script(*args): run the module's SCRIPT with args; return a CompletedProcess (text) with its exit
    status, stdout and stderr. In this process: main(args) with stdout and stderr captured (a script's
    start-up, numpy, h5py, matplotlib and scipy, cost more than most of its runs here). Every script's main
    returns its status (run_cli) or exits through argparse; the tests of a script as a program (its
    interpreter check, its help) run it in a subprocess (test_scripts.py)."""
    script = request.module.SCRIPT
    return lambda *args: run_in_process(script, *args)


def run_in_process(script, *args):
    """A postprocess script run as main(args) in this process (run_script): a CompletedProcess (text)."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = _script_module(script).main(argv)
        except SystemExit as exc:  # argparse: 2 on a usage error, 0 for --help
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess([PYTHON, str(script), *argv], status or 0, out.getvalue(), err.getvalue())


@pytest.fixture
def check_png(request):
    """check_png(path): a PNG of at least the module's PNG_MIN_SHAPE, not blank."""
    min_height, min_width = request.module.PNG_MIN_SHAPE

    def check(path):
        import matplotlib.image as mpimg

        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        img = mpimg.imread(path)
        assert img.shape[0] > min_height and img.shape[1] > min_width
        assert float(img[..., :3].std()) > 0.01

    return check
