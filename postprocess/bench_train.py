#!/usr/bin/env python3
"""Training throughput of `tokdyn train` against PyTorch (CPU) on the same GPT, the same machine, one run.

Usage:
    bench_train.py [--deck DECK] [--steps S] [--ranks 1,2] [--threads 1,2] [--processes 2]
                   [--precision float[,double]] [--repeats R] [--optimizer adamw] [--tokdyn PATH]
                   [--mpiexec PATH] [--json OUT] [--section.key=value ...]

Fair by construction: every configuration (tokdyn on P ranks, PyTorch with P threads, PyTorch as P processes,
each precision) runs once per round, the rounds interleaved (--repeats, default 3), and each keeps its best
round, so a busy moment of a shared machine hits every configuration alike; the 1-minute load average is
recorded before each run and printed beside each best. The table sets each tokdyn row against PyTorch on the
same number of cores per core: P ranks against P threads, and against P processes.

tokdyn: `mpiexec -n P tokdyn train DECK --train.steps=S --train.eval_every=S` for each P of --ranks; its
throughput is the run file's train/tokens_per_second: tokens (S x batch x context) over the seconds of the
training steps (forward, backward, the gradient's all-reduce and the optimizer's step; the two validation
passes are outside). Extra --section.key=value arguments go to tokdyn and size both models.

PyTorch: the same model written in torch.nn, in the precision of the tokdyn row (float32 or float64): token and position embeddings,
pre-LN blocks with causal multi-head attention (W_Q, W_K, W_V with their biases c_q, c_k, c_v, W_O with its
bias), an MLP C -> 4C -> C with GELU (tanh form), a final LayerNorm and the output tied to the token
embedding; its parameter count must equal tokdyn's (the script stops otherwise). Batches of random windows
of the same text; loss.backward() and the optimizer's step (torch.optim.AdamW, SGD with Nesterov momentum
for sgdm; ECD has no PyTorch counterpart here and is timed as AdamW). Timed over S steps after 3 untimed
ones, for each thread count of --threads (torch.set_num_threads). And data-parallel as tokdyn is, for each P of
--processes (empty: none): P processes of one thread each (torch.multiprocessing, torch.distributed with the gloo
backend), each its own batch / P windows, the model wrapped in DistributedDataParallel (its gradient all-reduce in
buckets, overlapped with the backward pass); tokens/s over the global batch, timed between barriers. Without
PyTorch the rows are skipped; without torch.distributed or gloo the process rows are, with a line saying so.

Output: the model (parameters, L, H, C, context, batch), the machine, the versions, and a table: per
configuration its best tokens/s, per core, the load before that round, and for tokdyn its per-core rate over
PyTorch's on as many cores in the same precision. --json OUT writes it (every round's rate and load too). Exit status 0; 2 on
an error (a missing or failing tokdyn, a parameter count that differs) with one line "bench_train.py: error:".
"""

import argparse
import configparser
import os
import platform
import sys
import tempfile
import time

from tokdyn_h5 import require_modules

require_modules("bench_train.py", ("numpy", "h5py"))  # one line naming what is missing, before numpy loads

import numpy as np  # noqa: E402

from bench_common import (BenchError, check_tools, exit_status, import_torch, machine,  # noqa: E402
                          parse_list, run_tokdyn,
                          write_json)

PROG = "bench_train.py"
HERE = os.path.dirname(os.path.abspath(__file__))


def deck_values(deck, overrides):
    """[train] and [model] of the deck with --section.key=value overrides applied."""
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#",))
    parser.optionxform = str
    parser.read(deck)
    for item in overrides:
        key, _, value = item[2:].partition("=")
        section, _, name = key.partition(".")
        if not parser.has_section(section):
            parser.add_section(section)
        parser.set(section, name, value)

    def get(section, key, default):
        return parser.get(section, key, fallback=default)

    return {"text_file": get("train", "text_file", ""), "batch": int(get("train", "batch", "8")),
            "context": int(get("train", "context", "64")), "layers": int(get("model", "layers", "2")),
            "heads": int(get("model", "heads", "4")), "channels": int(get("model", "channels", "64")),
            "mlp": get("model", "mlp", "gelu"), "optimizer": get("train", "optimizer", "ecd"),
            "adamw_lr": float(get("adamw", "lr", "1e-4"))}


def run_tokdyn_train(args, ranks, precision, overrides, workdir):
    import h5py

    out = os.path.join(workdir, f"bench-{ranks}-{precision}.h5")
    run_tokdyn(args, ranks, "train", [
        "train", args.deck, f"--train.steps={args.steps}", f"--train.eval_every={args.steps}",
        f"--train.optimizer={args.optimizer}", f"--train.precision={precision}", "--train.alignment_null=10",
        "--run.progress_interval=0", "--force", f"--run.output={out}", *overrides], timeout=3600)
    with h5py.File(out, "r") as h5:
        g = h5["train"]
        return float(g.attrs["tokens_per_second"]), int(g.attrs["parameters"]), int(g.attrs["train_tokens"])


def torch_model(torch, vocab, m):
    nn = torch.nn
    C, H, n = m["channels"], m["heads"], m["context"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.fc, self.out = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
            # a plain attribute, not a buffer: DistributedDataParallel's gloo broadcast refuses bool buffers
            self.mask = torch.tril(torch.ones(n, n, dtype=torch.bool))

        def forward(self, x):  # x [B, T, C]
            B, T, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))  # [B, H, T, d_h]
            att = (q @ k.transpose(-2, -1)) / (C // H) ** 0.5
            att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, C), nn.Embedding(n, C)
            self.blocks = nn.ModuleList(Block() for _ in range(m["layers"]))
            self.lnf = nn.LayerNorm(C)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            logits = self.lnf(x) @ self.wte.weight.t()  # tied output
            return nn.functional.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    return Gpt()


def time_torch_steps(torch, model, precision, tokens, m, steps, optimizer, lr, batch, seed, barrier=None):
    """Seconds of `steps` training steps of `model` (a module, or its DistributedDataParallel wrapper) on `batch`
    random windows each, after 3 untimed ones: the same step in one process and in each of several (barrier:
    called before and after the timed steps)."""
    model.to(torch.float64 if precision == "double" else torch.float32)
    if optimizer == "sgdm":
        opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.95, nesterov=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
    data = torch.from_numpy(np.asarray(tokens, dtype=np.int64))
    rng = np.random.default_rng(seed)
    n = m["context"]

    def step():
        o = torch.from_numpy(rng.integers(0, data.numel() - n - 1, size=batch))
        idx = torch.stack([data[i:i + n] for i in o])
        tgt = torch.stack([data[i + 1:i + n + 1] for i in o])
        opt.zero_grad(set_to_none=True)
        model(idx, tgt).backward()
        opt.step()

    for _ in range(3):
        step()
    if barrier:
        barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if barrier:
        barrier()
    return time.perf_counter() - start


def run_torch(torch, threads, precision, tokens, vocab, m, steps, optimizer, lr):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = torch_model(torch, vocab, m)
    seconds = time_torch_steps(torch, model, precision, tokens, m, steps, optimizer, lr, m["batch"], 1)
    return steps * m["batch"] * m["context"] / seconds, sum(p.numel() for p in model.parameters())


def _ddp_worker(rank, processes, port, precision, tokens, vocab, m, steps, optimizer, lr, out):
    """One of `processes` data-parallel PyTorch processes (torch.multiprocessing.spawn): rank 0 writes the
    tokens/s of the global batch to `out`."""
    import torch
    import torch.distributed as dist
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=processes)
    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = torch_model(torch, vocab, m).to(torch.float64 if precision == "double" else torch.float32)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    batch = m["batch"] // processes
    seconds = time_torch_steps(torch, ddp, precision, tokens, m, steps, optimizer, lr, batch, 1 + rank, dist.barrier)
    if rank == 0:
        with open(out, "w") as f:
            f.write(repr(steps * batch * processes * m["context"] / seconds))
    dist.destroy_process_group()


def run_torch_processes(torch, processes, precision, tokens, vocab, m, steps, optimizer, lr, workdir):
    """tokens/s of `processes` data-parallel PyTorch processes (DistributedDataParallel over gloo)."""
    import socket
    if m["batch"] % processes:
        raise BenchError(f"--processes {processes}: the batch of {m['batch']} sequences does not split evenly")
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = os.path.join(workdir, f"ddp-{processes}-{precision}.txt")
    try:
        torch.multiprocessing.spawn(_ddp_worker, nprocs=processes, join=True,
                                    args=(processes, port, precision, tokens, vocab, m, steps, optimizer, lr, out))
    except Exception as e:  # a process's traceback: its last line
        lines = [x for x in str(e).splitlines() if x.strip()]
        raise BenchError(f"PyTorch on {processes} processes failed: {lines[-1] if lines else type(e).__name__}")
    with open(out) as f:
        return float(f.read())


def distributed_missing(torch):
    """Why PyTorch cannot run as several processes here, or None where it can."""
    try:
        import torch.distributed as dist
    except Exception as e:  # a build without it
        return f"torch.distributed does not import ({e})"
    if not dist.is_available():
        return "this PyTorch is built without torch.distributed"
    if not dist.is_gloo_available():
        return "this PyTorch has no gloo backend"
    return None


def text_tokens(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    return [index[c] for c in text], len(vocab)


def bench(args):
    check_tools(args)
    m = deck_values(args.deck, args.overrides)
    m["optimizer"] = args.optimizer
    host = machine()
    precisions = [v.strip() for v in args.precision.split(",") if v.strip()]
    if not precisions or any(v not in ("float", "double") for v in precisions):
        raise BenchError(f"--precision '{args.precision}': expected float, double or float,double")
    if args.repeats < 1:
        raise BenchError(f"--repeats {args.repeats}: at least 1")
    result = {"model": m, "steps": args.steps, "repeats": args.repeats,
              "machine": f"{host['processor']}, {host['cpus']} cores", "python": platform.python_version(),
              "results": []}
    torch = import_torch()
    result["torch"] = torch.__version__ if torch is not None else None
    rows = [{"implementation": "tokdyn", "ranks": r, "threads": None, "precision": p}
            for p in precisions for r in parse_list(args.ranks, "--ranks")]
    if torch is not None:
        tokens, vocab = text_tokens(m["text_file"])
        rows += [{"implementation": "pytorch", "ranks": None, "threads": t, "precision": p}
                 for p in precisions for t in parse_list(args.threads, "--threads")]
        processes = parse_list(args.processes, "--processes") if args.processes.strip() else []
        missing = distributed_missing(torch) if processes else None
        if missing:
            print(f"PyTorch as several processes: not measured, {missing}")
            result["pytorch_processes"] = missing
        else:
            rows += [{"implementation": "pytorch-ddp", "ranks": None, "threads": None, "processes": q, "precision": p}
                     for p in precisions for q in processes]
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.repeats):  # rounds, each configuration once in each
            for row in rows:
                load = os.getloadavg()[0]
                if row["implementation"] == "tokdyn":
                    rate, params, _ = run_tokdyn_train(args, row["ranks"], row["precision"], args.overrides, work)
                    result["parameters"] = params
                elif row["implementation"] == "pytorch":
                    rate, params = run_torch(torch, row["threads"], row["precision"], tokens, vocab, m, args.steps,
                                             args.optimizer, m["adamw_lr"])
                    if params != result["parameters"]:
                        raise BenchError(f"the PyTorch model has {params} parameters, tokdyn's {result['parameters']}")
                else:
                    rate = run_torch_processes(torch, row["processes"], row["precision"], tokens, vocab, m,
                                               args.steps, args.optimizer, m["adamw_lr"], work)
                row.setdefault("rounds", []).append({"tokens_per_second": rate, "load": load})
    for row in rows:
        top = max(row["rounds"], key=lambda x: x["tokens_per_second"])
        row["tokens_per_second"], row["load"] = top["tokens_per_second"], top["load"]
        row["cores"] = row["ranks"] or row["threads"] or row.get("processes")
        row["per_core"] = row["tokens_per_second"] / row["cores"]
    result["results"] = rows
    print(f"GPT L = {m['layers']}, H = {m['heads']}, C = {m['channels']}, context {m['context']}, batch {m['batch']}: "
          f"{result['parameters']} parameters, {args.optimizer}, {args.steps} steps, best of {args.repeats} interleaved "
          f"rounds; {result['machine']}; PyTorch {result['torch'] or 'not installed'}")
    print(f"{'implementation':<11} {'precision':<9} {'cores':>5} {'tokens/s':>10} {'per core':>10} {'load':>5} "
          f"{'tokdyn / PyTorch threads':>24} {'/ PyTorch processes':>19} (per core)")

    def twin(r, implementation):
        return next((x for x in rows if x["implementation"] == implementation and x["precision"] == r["precision"]
                     and x["cores"] == r["cores"]), None)

    for r in rows:
        ratios = []
        for implementation in ("pytorch", "pytorch-ddp"):
            t = twin(r, implementation)
            ratios.append(r["per_core"] / t["per_core"] if r["implementation"] == "tokdyn" and t else None)
        r["per_core_against_pytorch"], r["per_core_against_pytorch_processes"] = ratios
        cells = [f"{x:.2f}" if x else "-" for x in ratios]
        print(f"{r['implementation']:<11} {r['precision']:<9} {r['cores']:>5} {r['tokens_per_second']:>10.4g} "
              f"{r['per_core']:>10.4g} {r['load']:>5.2f} {cells[0]:>24} {cells[1]:>19}")
    if args.json:
        write_json(args.json, result)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--deck", default=os.path.join(os.path.dirname(HERE), "input", "train.ini"))
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--processes", default="2", help="PyTorch data-parallel process counts (empty: none)")
    p.add_argument("--precision", default="float", help="float, double or float,double (both sides alike)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved rounds; each configuration keeps its best")
    # Those PyTorch has too (torch.optim.SGD with Nesterov momentum, torch.optim.AdamW): the same step on both sides.
    p.add_argument("--optimizer", default="adamw", choices=("sgdm", "adamw"))
    p.add_argument("--tokdyn", default=os.environ.get("TOKDYN", "tokdyn"))
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--json")
    args, overrides = p.parse_known_args(argv)
    args.overrides = overrides
    bad = [o for o in overrides if not (o.startswith("--") and "=" in o and "." in o.partition("=")[0])]
    if bad:
        p.error(f"unrecognised arguments: {' '.join(bad)} (deck overrides are --section.key=value)")
    return exit_status(PROG, bench, args, errors=(OSError, KeyError))


if __name__ == "__main__":
    sys.exit(main())
