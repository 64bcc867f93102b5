"""What the benchmark scripts bench_compare.py, bench_markov.py and bench_train.py share.

They are run as `python3 postprocess/bench_X.py`, so this directory is on sys.path and `import bench_common`
finds this file (no package, nothing to install). Here: the machine's description, option checks, best-of
timing, running tokdyn under mpiexec with its own error line on failure, the JSON file, and the one-line
error with exit status 2. Each script keeps its own science (reference implementations, tables, output).
"""

import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Taken at import, before bench_compare.py sets NumPy's BLAS thread counts in os.environ: tokdyn runs with
# the environment the script was started with.
ORIGINAL_ENV = dict(os.environ)
# Open MPI refuses to run as root, or more ranks than cores, unless told; other launchers ignore these.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


class BenchError(Exception):
    """An error that ends the script with one line "PROG: error: ..." on stderr and exit status 2."""


def exit_status(prog, bench, args, errors=()):
    """bench(args)'s exit status; a BenchError (or one of `errors`) is one stderr line and status 2."""
    try:
        return bench(args)
    except (BenchError, *errors) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


# ---------------------------------------------------------------------------------------------- options

def add_tool_options(ap):
    """--tokdyn, --mpiexec and --json, with the defaults the environment gives (as CTest sets them)."""
    ap.add_argument("--tokdyn", default=os.environ.get("TOKDYN") or os.path.join(ROOT, "build", "tokdyn"),
                    help="the tokdyn binary (default: $TOKDYN, else build/tokdyn of the repository)")
    ap.add_argument("--mpiexec", default=os.environ.get("MPIEXEC") or "mpiexec",
                    help="the MPI launcher (default: $MPIEXEC, else mpiexec)")
    ap.add_argument("--json", help="write the results as JSON to this file")


def parse_list(value, option):
    """A comma list of positive integers, sorted, each once (the scripts take the first as the smallest)."""
    try:
        values = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise BenchError(f"{option} '{value}': expected a comma list of positive integers")
    return sorted(set(values))


def check_minimums(args, minimums):
    """Each (option, lowest value) of `minimums`: args.option must not be below it."""
    for name, low in minimums:
        if getattr(args, name) < low:
            raise BenchError(f"--{name} must be >= {low}")


def check_tools(args):
    """--tokdyn must be an executable (a bare name: on PATH); sets args.tokdyn_path to its absolute path and
    makes a relative --mpiexec absolute, since a run may start in a temporary directory."""
    found = shutil.which(args.tokdyn)
    if found is None:
        raise BenchError(f"no executable tokdyn at '{args.tokdyn}' (--tokdyn PATH or TOKDYN)")
    args.tokdyn_path = os.path.abspath(found)
    if os.sep in args.mpiexec:
        args.mpiexec = os.path.abspath(args.mpiexec)


# ----------------------------------------------------------------------------------- machine, versions

def machine():
    """The CPU model (/proc/cpuinfo's where it names one), the CPU counts and the system, for the record."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), model)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))  # what this process may use (taskset, a batch job's cores)
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {"processor": model or "unknown", "cpus": os.cpu_count(), "usable_cpus": usable,
            "system": platform.platform()}


def tokdyn_version(tokdyn):
    """`tokdyn --version` on one line ("; " between its lines, without the leading "tokdyn "); None if it
    gives none (an older binary)."""
    try:
        done = subprocess.run([tokdyn, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", env=ORIGINAL_ENV, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [x.strip() for x in done.stdout.splitlines() if x.strip()]
    if done.returncode != 0 or not lines:
        return None
    if lines[0].startswith("tokdyn "):
        lines[0] = lines[0][len("tokdyn "):]
    return "; ".join(lines)


def import_torch():
    """PyTorch, or None where `import torch` fails: not installed (Debian package python3-torch), or a broken
    installation (an OSError from a shared library), which must not stop the tokdyn and NumPy rows."""
    try:
        import torch
    except Exception:
        return None
    return torch


# ----------------------------------------------------------------------------------- timing, running

def best_of(fn, repeats, warmup=1):
    """(the fewest seconds of `repeats` timed calls of fn after `warmup` untimed ones, the last call's value).
    The best, not the mean: other load on the machine only ever adds time."""
    value = None
    for _ in range(warmup):
        value = fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def tokdyn_error(output):
    """tokdyn's own error line if it printed one; else the last line of the program's output, skipping the
    launcher's boxed notices (Open MPI frames them in lines of dashes) when anything else is left."""
    for line in output.splitlines():
        if "tokdyn: error" in line:
            return line[line.index("tokdyn: error"):].strip()
    own, boxed = [], False
    for line in output.splitlines():
        line = line.strip()
        if len(line) >= 20 and set(line) == {"-"}:
            boxed = not boxed
        elif line and not boxed:
            own.append(line)
    lines = own or [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def run_tokdyn(args, ranks, what, tokdyn_args, workdir=None, timeout=None):
    """Run `args.mpiexec -n RANKS args.tokdyn_path TOKDYN_ARGS...` (in workdir); return (its stdout and stderr
    together, wall seconds). A failure is a BenchError naming the run and giving tokdyn's own error line."""
    command = [args.mpiexec, "-n", str(ranks)]
    if ranks > (os.cpu_count() or 1):
        command.append("--oversubscribe")  # Open MPI refuses more ranks than cores without it (or MPI_ENV's)
    name = f"tokdyn {what} on {ranks} rank{'s' if ranks > 1 else ''}"
    start = time.perf_counter()
    try:
        done = subprocess.run(command + [args.tokdyn_path, *tokdyn_args], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace",
                              env=dict(ORIGINAL_ENV, **MPI_ENV), cwd=workdir, timeout=timeout)
    except OSError as exc:
        raise BenchError(f"cannot run {args.mpiexec}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"{name} ({args.tokdyn}) did not finish in {timeout} s") from None
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"{name} ({args.tokdyn}) exited with status {done.returncode}: {tokdyn_error(done.stdout)}")
    return done.stdout, seconds


def write_json(path, data):
    """Write data to path as indented JSON; a failure to write is a BenchError."""
    try:
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
    except OSError as exc:
        raise BenchError(f"cannot write {path}: {exc.strerror}") from None
