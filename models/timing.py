"""Eager forward time of the benchmark programs, and what TorchDynamo makes of them.

    python -m models.timing                       # every model, smoke size, batch 1
    python -m models.timing --size paper --repeat 3 resnet bert
    python -m models.timing --explain             # + torch._dynamo.explain at the chosen size
    python -m models.timing --magpy               # + magpy.explain and a magpy.compile(backend="eager") check
    python -m models.timing --json out.json

Times are the median of ``--repeat`` forward calls under ``torch.no_grad()`` after ``--warmup``
calls; the load average is printed with them because the machine may be shared. ``--explain``
runs ``torch._dynamo.explain(model)(*args, **kwargs)`` once per model (also under no_grad) and
reports graph count (as the experiments count Dynamo's graphs), graph-break count and the first break reasons. ``--magpy`` runs
``magpy.explain`` once and compares ``magpy.compile(model, backend="eager")`` with eager on two calls.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field

import torch

import models
from experiments.measure import call_times


@dataclass
class Timing:
    """One model's measurement at one size."""

    model: str
    size: str
    batch_size: int
    build_s: float
    forward_ms: float
    forward_min_ms: float
    forward_ms_all: list[float]
    explain: dict | None = field(default=None)
    magpy: dict | None = field(default=None)


def time_model(name: str, size: str, batch_size: int, repeat: int, warmup: int) -> tuple[Timing, tuple]:
    """Build ``name`` at ``size`` and time its eager forward; returns the timing and (model, args, kwargs)."""
    start = time.perf_counter()
    model, get_input = models.build(name, size=size)
    build_s = time.perf_counter() - start
    args, kwargs = get_input(batch_size)
    with torch.no_grad():
        times = [s * 1e3 for s in call_times(model, [(args, kwargs)], warmup=warmup, repeat=repeat)]
    timing = Timing(name, size, batch_size, build_s, statistics.median(times), min(times), times)
    return timing, (model, args, kwargs)


def dynamo_explain(model: torch.nn.Module, args: list, kwargs: dict, max_reasons: int = 3) -> dict:
    """What TorchDynamo makes of one call: graph count (counted as the experiments count it,
    :func:`experiments.compilers.dynamo_graph_counter`), and from ``torch._dynamo.explain`` the
    break count, op count and the first break reasons."""
    import torch._dynamo

    from experiments.compilers import dynamo_graph_counter

    torch._dynamo.reset()
    counter = dynamo_graph_counter("eager")
    with torch.no_grad():
        torch.compile(model, backend=counter)(*args, **kwargs)
    torch._dynamo.reset()
    with torch.no_grad():
        ex = torch._dynamo.explain(model)(*args, **kwargs)
    reasons = []
    for br in ex.break_reasons[:max_reasons]:
        where = ""
        if br.user_stack:
            frame = br.user_stack[-1]
            where = f" at {os.path.relpath(frame.filename)}:{frame.lineno}"
        reasons.append(" ".join(str(br.reason).split())[:200] + where)
    return {"graph_count": int(counter.frame_count), "graph_break_count": ex.graph_break_count,
            "op_count": ex.op_count, "first_break_reasons": reasons}


def magpy_check(model: torch.nn.Module, args: list, kwargs: dict) -> dict:
    """``magpy.explain`` of one call, and ``magpy.compile(backend="eager")`` against eager on two calls."""
    import magpy
    from experiments.compare import compare

    magpy.reset()
    report: dict = {}
    start = time.perf_counter()
    with torch.no_grad():
        try:
            ex = magpy.explain(model)(*args, **kwargs)
            report.update(graph_count=ex.graph_count, op_count=ex.op_count, dynamic=ex.dynamic,
                          break_reasons=[" ".join(str(r).split())[:240] for r in ex.break_reasons[:3]])
        except Exception as e:  # noqa: BLE001 -- reported, this is a measurement tool
            report["explain_error"] = f"{type(e).__name__}: {e}"[:300]
        report["explain_s"] = time.perf_counter() - start
        try:
            compiled = magpy.compile(model, backend="eager")
            expected = model(*args, **kwargs)
            diffs = [compare(expected, compiled(*args, **kwargs)).max_abs_err for _ in range(2)]
            report["compile_max_abs_diff"] = max(diffs)
            st = magpy.stats(compiled)
            report["stats"] = {"monitor_runs": st.monitor_runs, "guard_hits": st.guard_hits,
                               "fallbacks": st.fallbacks, "graph_count": st.graph_count}
        except Exception as e:  # noqa: BLE001
            report["compile_error"] = f"{type(e).__name__}: {e}"[:300]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=list(models.MODELS), help="models to time (default: all)")
    parser.add_argument("--size", choices=[*models.SIZES, "both"], default="smoke")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=None, help="timed calls (default 20 smoke, 5 paper)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's); 1 is steadier on a loaded machine")
    parser.add_argument("--explain", action="store_true", help="also run torch._dynamo.explain")
    parser.add_argument("--magpy", action="store_true", help="also run magpy.explain and a compile check")
    parser.add_argument("--json", help="write the measurements to this file")
    opts = parser.parse_args(argv)
    for name in opts.models:
        if name not in models.MODELS:
            parser.error(f"unknown model {name!r}; valid models: {', '.join(models.MODELS)}")
    sizes = list(models.SIZES) if opts.size == "both" else [opts.size]
    if opts.threads is not None:
        torch.set_num_threads(opts.threads)

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = []
    for size in sizes:
        repeat = opts.repeat or (20 if size == "smoke" else 5)
        for name in opts.models:
            timing, (model, args, kwargs) = time_model(name, size, opts.batch_size, repeat, opts.warmup)
            line = (f"{name:11s} {size:6s} bs={opts.batch_size}  forward {timing.forward_ms:9.2f} ms "
                    f"(median of {repeat}, min {timing.forward_min_ms:.2f})  build {timing.build_s:6.2f} s")
            if opts.explain:
                timing.explain = dynamo_explain(model, args, kwargs)
                ex = timing.explain
                line += f"  dynamo: {ex['graph_count']} graphs, {ex['graph_break_count']} breaks"
            print(line, flush=True)
            if opts.explain:
                for reason in timing.explain["first_break_reasons"]:
                    print(f"    break: {reason}")
            if opts.magpy:
                timing.magpy = magpy_check(model, args, kwargs)
                print(f"    magpy: {timing.magpy}", flush=True)
            results.append(timing)
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump([asdict(r) for r in results], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
