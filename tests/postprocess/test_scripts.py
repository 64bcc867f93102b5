"""Every postprocess script with a main: executable with a `#!/usr/bin/env python3` line, runs as ./SCRIPT, and
on a Python that lacks a module it needs prints one line naming the module and how to get it, exit status 2
(tokdyn_h5.require_modules), or runs itself again under TOKDYN_PYTHON.

The Python lacking a module: /usr/bin/python3 behind a wrapper that puts a directory first on PYTHONPATH whose
sitecustomize.py installs an import hook refusing the module named by TOKDYN_TEST_BLOCK (it removes the
variable, so a Python started from there, TOKDYN_PYTHON, has every module again unless the wrapper starts it).

Run with:  /usr/bin/python3 -m pytest -q tests/postprocess/test_scripts.py
"""

import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
POSTPROCESS = REPO / "postprocess"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PLOTTING = ("numpy", "h5py", "matplotlib")
# What each script needs (the modules it names when missing, in this order).
NEEDS = {
    "plot_run.py": PLOTTING, "plot_meanfield.py": PLOTTING, "spectrum.py": PLOTTING, "power.py": PLOTTING, "lens.py": PLOTTING,
    "synchronization.py": PLOTTING, "phase.py": PLOTTING, "mlmc.py": PLOTTING, "convergence.py": PLOTTING, "paper_figures.py": PLOTTING,
    "focus_dilution.py": PLOTTING + ("scipy",), "training.py": PLOTTING + ("scipy",),
    "report.py": PLOTTING + ("scipy",), "bench_markov.py": ("numpy",), "bench_train.py": ("numpy", "h5py"),
    "bench_compare.py": ("numpy", "h5py"), "animate.py": ("numpy", "h5py"),  # animate.py: matplotlib for a movie only
}
DEBIAN = {"numpy": "python3-numpy", "h5py": "python3-h5py", "matplotlib": "python3-matplotlib",
          "scipy": "python3-scipy"}
HOOK = '''import os, sys

BLOCKED = os.environ.pop("TOKDYN_TEST_BLOCK", "")


class Refuse:
    """Refuses BLOCKED (and its submodules) as if it were not installed."""

    def find_spec(self, name, path=None, target=None):
        if BLOCKED and name.split(".")[0] == BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None


sys.meta_path.insert(0, Refuse())
'''


def scripts_with_main():
    return sorted(p.name for p in POSTPROCESS.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


@pytest.fixture(scope="module")
def blocking_python(tmp_path_factory):
    """(wrapper, make(module)): make(module) writes an interpreter wrapper refusing `module`; returns its path."""
    base = tmp_path_factory.mktemp("blocked")
    (base / "hook").mkdir()
    (base / "hook" / "sitecustomize.py").write_text(HOOK)

    def make(module):
        wrapper = base / f"python-without-{module}"
        wrapper.write_text(f'#!/bin/sh\nTOKDYN_TEST_BLOCK={module} PYTHONPATH="{base / "hook"}" exec {PYTHON} "$@"\n')
        wrapper.chmod(0o755)
        return wrapper

    return make


def run(argv, env=None, timeout=120):
    environment = dict(os.environ, MPLBACKEND="Agg")
    environment.pop("TOKDYN_PYTHON", None)
    environment.pop("TOKDYN_PYTHON_TRIED", None)
    environment.update(env or {})
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=environment, timeout=timeout)


def in_parallel(calls):
    """Run the calls (functions without arguments) two at a time; their results in order."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda call: call(), calls))


def test_every_script_is_listed():
    """NEEDS covers exactly the scripts with a main (a new script must say what it needs)."""
    assert scripts_with_main() == sorted(NEEDS)


def test_executable_with_env_shebang():
    for name in scripts_with_main():
        path = POSTPROCESS / name
        mode = path.stat().st_mode
        assert mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) == stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH, name
        assert path.read_text().splitlines()[0] == "#!/usr/bin/env python3", name


def test_run_directly():
    """./SCRIPT --help works through the #! line (a plotting script, a benchmark and the report: the others have
    the same line and mode, checked above); the python3 on PATH may lack the modules (then the script runs
    itself again under TOKDYN_PYTHON)."""
    names = ["plot_meanfield.py", "bench_markov.py", "report.py"]
    results = in_parallel([lambda n=n: run([POSTPROCESS / n, "--help"], {"TOKDYN_PYTHON": PYTHON}) for n in names])
    for name, result in zip(names, results):
        assert result.returncode == 0, (name, result.stderr)
        assert result.stdout.startswith(f"usage: {name}"), (name, result.stdout)


def test_the_hook_refuses_only_its_module(blocking_python):
    """The wrapper's Python lacks h5py and has numpy (else the tests below would prove nothing)."""
    wrapper = blocking_python("h5py")
    assert run([wrapper, "-c", "import numpy"]).returncode == 0
    result = run([wrapper, "-c", "import h5py"])
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr


@pytest.mark.parametrize("module", ("numpy", "h5py", "matplotlib", "scipy"))
def test_missing_module_is_one_line(blocking_python, module):
    """Each script that needs `module`, on a Python without it: one line naming it and its Debian package, exit 2."""
    wrapper = blocking_python(module)
    names = [n for n in sorted(NEEDS) if module in NEEDS[n]]
    results = in_parallel([lambda n=n: run([wrapper, POSTPROCESS / n, "--help"]) for n in names])
    for name, result in zip(names, results):
        expected = (f"{name}: needs {module} (Debian: apt-get install {DEBIAN[module]}; "
                    f"or set TOKDYN_PYTHON to a Python that has it)")
        assert (result.returncode, result.stderr.splitlines(), result.stdout) == (2, [expected], ""), name


def test_tokdyn_python_runs_the_script_again(blocking_python, tmp_path):
    """TOKDYN_PYTHON: the script runs again under it (once, and not when it is the Python running): a Python
    with the module runs it; one without it too gives the one line, saying so."""
    wrapper = blocking_python("h5py")
    plain = tmp_path / "plain-python"  # another program than the one running (which is not run again)
    plain.write_text(f'#!/bin/sh\nexec {PYTHON} "$@"\n')
    plain.chmod(0o755)
    result = run([wrapper, POSTPROCESS / "plot_meanfield.py", tmp_path / "absent.h5"], {"TOKDYN_PYTHON": str(plain)})
    # Under /usr/bin/python3 the script got as far as looking for the file.
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plot_meanfield.py: error: no such file: {tmp_path / 'absent.h5'}"]
    result = run([wrapper, POSTPROCESS / "plot_meanfield.py", "--help"], {"TOKDYN_PYTHON": str(wrapper)})
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"plot_meanfield.py: needs h5py (Debian: apt-get install python3-h5py; TOKDYN_PYTHON={wrapper} lacks it)"]
    # TOKDYN_PYTHON naming the Python running the script (as jobscripts/lib-job.sh does): said at once.
    result = run([PYTHON, "-S", POSTPROCESS / "power.py", "--help"], {"TOKDYN_PYTHON": PYTHON})
    assert (result.returncode, result.stderr.splitlines()) == (2, [
        "power.py: needs numpy, h5py, matplotlib (Debian: apt-get install python3-numpy python3-h5py "
        f"python3-matplotlib; TOKDYN_PYTHON={PYTHON} lacks them)"])
    result = run([wrapper, POSTPROCESS / "power.py", "--help"], {"TOKDYN_PYTHON": str(tmp_path / "nopython")})
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert "cannot be run" in result.stderr and "nopython" in result.stderr
