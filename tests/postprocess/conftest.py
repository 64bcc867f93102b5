"""Fixtures shared by the postprocess tests of the figure scripts (test_paper_figures.py,
test_synchronization.py, test_spectrum.py): running the module's script and checking a PNG it wrote.

A test module using them sets SCRIPT (the path of its postprocess/ script), TIMEOUT (seconds a run
may take), PNG_MIN_SHAPE (the least (height, width) in pixels of its figures) and, for real_input,
INPUT_ENV (the environment variable naming the input made by the real code) and INPUT_KIND ("file"
or "directory").
"""

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


@pytest.fixture
def run_script(request):
    """run_script(*args): run the module's SCRIPT with args; return the CompletedProcess (text)."""
    script, timeout = request.module.SCRIPT, request.module.TIMEOUT

    def run(*args):
        return subprocess.run([PYTHON, str(script), *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)

    return run


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
