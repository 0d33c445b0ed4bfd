"""First-call and capture time, MagPy vs TorchDynamo, per model and backend, each in a fresh process.

    python benchmarks/first_call.py [--models bert resnet densenet monodepth] [--size smoke]
                                    [--backends eager inductor] [--rounds 1]

Each cell (model, frontend, backend) runs in a process of its own, with an empty Inductor cache
(``TORCHINDUCTOR_CACHE_DIR`` set to a new directory), one intra-op thread and autograd off: it
builds the model and its input, calls the model eagerly once (lazy imports and allocator warm-up
out of the way), times a median of 3 eager calls, imports the frontend (``magpy`` or
``torch._dynamo``: not counted, its time is in the JSON lines), then compiles the model
(``magpy.compile`` or ``torch.compile`` with the backend) and times the first call; what either
imports on the way (Inductor) is counted. ``capture`` is first call - eager:
for backend eager, what it costs to obtain the graph (MagPy's monitor run and record, Dynamo's
bytecode analysis); for inductor, plus compiling it. The table puts MagPy's and Dynamo's times
side by side with their ratios (MagPy / Dynamo: below 1, MagPy is faster); with ``--rounds N``
each cell runs N times (rounds alternate the frontends) and the medians are shown, with each
side's lowest and highest capture.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRONTENDS = ("magpy", "dynamo")


def cell(model_name: str, frontend: str, backend: str, size: str) -> dict:
    """One measurement, in this (fresh) process."""
    sys.path.insert(0, str(ROOT))
    import torch

    from experiments.measure import timed_call

    torch.set_num_threads(1)
    mod = importlib.import_module(f"models.{model_name}")
    model = mod.get_model(size=size).eval()
    args, kwargs = mod.get_input(size=size)
    with torch.no_grad():
        model(*args, **kwargs)
        eager_s = statistics.median(timed_call(model, args, kwargs)[1] for _ in range(3))
        t0 = time.perf_counter()
        frontend_module = importlib.import_module("magpy" if frontend == "magpy" else "torch._dynamo")
        import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        if frontend == "magpy":
            compiled = frontend_module.compile(model, backend=backend)
        else:
            compiled = torch.compile(model, backend=backend)
        compile_s = time.perf_counter() - t0   # (both compile lazily: nearly nothing here)
        first_s = timed_call(compiled, args, kwargs)[1] + compile_s
    return {"model": model_name, "frontend": frontend, "backend": backend, "size": size, "eager_s": eager_s,
            "first_s": first_s, "capture_s": first_s - eager_s, "import_s": import_s}


def run_cell(model_name: str, frontend: str, backend: str, size: str) -> dict:
    """:func:`cell` in a fresh interpreter with an empty Inductor cache."""
    with tempfile.TemporaryDirectory(prefix="first_call_inductor_") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, __file__, "--cell", model_name, frontend, backend, "--size", size],
                             capture_output=True, text=True, env=env)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"model": model_name, "frontend": frontend, "backend": backend, "error": tail[:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    """Markdown: per model and backend, MagPy's and Dynamo's first call and capture, and the ratios."""
    by: dict = {}
    for r in rows:
        by.setdefault((r["model"], r["backend"]), {}).setdefault(r["frontend"], []).append(r)
    lines = ["| model | backend | eager | first call MagPy | first call Dynamo | first ratio | capture MagPy | "
             "capture Dynamo | capture ratio | MagPy's rounds | Dynamo's rounds |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (model, backend), cells in by.items():
        errors = [c["error"] for f in FRONTENDS for c in cells.get(f, []) if "error" in c]
        if errors or any(f not in cells for f in FRONTENDS):
            lines.append(f"| {model} | {backend} | error: {errors[0] if errors else 'missing'} |")
            continue
        med = {f: {k: statistics.median(c[k] for c in cells[f]) for k in ("eager_s", "first_s", "capture_s")}
               for f in FRONTENDS}
        m, d = med["magpy"], med["dynamo"]
        eager = statistics.median([m["eager_s"], d["eager_s"]])
        spread = {f: _spread([c["capture_s"] for c in cells[f]]) for f in FRONTENDS}
        lines.append(f"| {model} | {backend} | {eager * 1e3:.1f} ms | {m['first_s']:.2f} s | {d['first_s']:.2f} s | "
                     f"{m['first_s'] / d['first_s']:.2f} | {m['capture_s']:.3f} s | {d['capture_s']:.3f} s | "
                     f"{m['capture_s'] / d['capture_s']:.3f} | {spread['magpy']} | {spread['dynamo']} |")
    return "\n".join(lines)


def _spread(captures: list[float]) -> str:
    """The lowest and highest capture of a cell's rounds: the median moves within them from run
    to run (eager's own time varies with the allocator's page faults, and capture is measured
    against it)."""
    return f"{min(captures):.3f}-{max(captures):.3f} s" if len(captures) > 1 else "-"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["bert", "resnet", "densenet", "monodepth"])
    p.add_argument("--backends", nargs="+", default=["eager", "inductor"])
    p.add_argument("--size", default="smoke", choices=["paper", "smoke"])
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--json", type=Path, help="also write every cell's measurement here")
    p.add_argument("--cell", nargs=3, metavar=("MODEL", "FRONTEND", "BACKEND"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.cell:
        print(json.dumps(cell(*a.cell, a.size)), flush=True)
        return
    rows = []
    for model in a.models:
        for backend in a.backends:
            for k in range(a.rounds):
                for frontend in FRONTENDS if k % 2 == 0 else FRONTENDS[::-1]:
                    row = run_cell(model, frontend, backend, a.size)
                    print(json.dumps(row), file=sys.stderr, flush=True)
                    rows.append(row)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    print(f"size={a.size}, fresh process and empty Inductor cache per cell, 1 thread, no_grad; "
          f"medians of {a.rounds} round(s)")
    print(table(rows))


if __name__ == "__main__":
    main()
