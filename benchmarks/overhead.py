"""Matched-path overhead: MagPy call vs calling the compiled fx graph directly, side by side.

    python benchmarks/overhead.py [--backend eager] [--iters 300]

For a small, a medium and a large model (ResNet-101's module tree: 104 convolutions, 105 batch
norms, 626 parameters and buffers, at 1/16 of its widths so the compute is small and the
per-call costs show) it times, in one process and interleaved:
  eager         the module itself
  graph         the record's compiled graph called directly with its input tensors (the floor)
  magpy         the compiled callable (guard + mock + graph)
  dynamo        torch.compile with the same backend
and prints medians, the ratios magpy/graph and dynamo/graph, and each guard alone: MagPy's
record guard and TorchDynamo's guard manager on the same arguments (``dynamo_guard``). A third model writes a value it
reads from a tensor to a log in the middle of its blocks (``StringIO.write``: not a record's
operation): MagPy splits the call there (magpy.splits: guard + mock + first graph, the write, the
continuation's guard + mock + graph), TorchDynamo breaks the graph; it prints magpy/eager,
dynamo/eager and magpy/dynamo (two graphs: no single floor).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import magpy  # noqa: E402
from experiments.measure import call_times  # noqa: E402
from magpy.adaptive import TRIALS  # noqa: E402
from magpy.demo import DemoNet  # noqa: E402
from models.resnet import resnet101  # noqa: E402


class MLPStack(nn.Module):
    """Medium: 24 residual MLP blocks (about 150 parameters) on a small input, so overhead shows."""

    def __init__(self, d=64, depth=24):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
                                    for _ in range(depth))

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return x


class LoggedStack(MLPStack):
    """The medium model with a log line written halfway (a dynamic operation: the call splits)."""

    def __init__(self, d=64, depth=24):
        super().__init__(d, depth)
        import io

        self.log = io.StringIO()

    def forward(self, x):
        half = len(self.blocks) // 2
        for blk in self.blocks[:half]:
            x = x + blk(x)
        self.log.write(f"{x.abs().max().item():.4f}\n")
        for blk in self.blocks[half:]:
            x = x + blk(x)
        return x


def bench_split(model: nn.Module, x: torch.Tensor, backend: str, iters: int) -> dict:
    model.eval()
    cm = magpy.compile(model, backend=backend)
    dyn = torch.compile(model, backend=backend)
    with torch.no_grad():
        variants = {"magpy": lambda: cm(x), "dynamo": lambda: dyn(x), "eager": lambda: model(x)}
        for f in variants.values():
            f()
        st = magpy.stats(cm)
        assert st.splits == 1 and st.fallbacks == 0 and st.resumed_fallbacks == 0, st
        out = _interleaved(variants, iters)
    print(f"split    params={sum(1 for _ in model.parameters()):4d} "
          + " ".join(f"{k}={v:8.1f}us" for k, v in out.items())
          + f"  graphs={st.graph_count}  magpy/eager={out['magpy'] / out['eager']:.3f}"
          + f"  dynamo/eager={out['dynamo'] / out['eager']:.3f}  magpy/dynamo={out['magpy'] / out['dynamo']:.3f}")
    return out


def _median_us(fn, iters: int) -> float:
    return statistics.median(call_times(fn, [((), {})], warmup=0, repeat=iters)) * 1e6


def _interleaved(variants: dict, iters: int) -> dict:
    """Best of 5 interleaved rounds (drift hits every variant alike) of each variant's median
    call time in microseconds, after 20 warm-up calls each."""
    for f in variants.values():
        for _ in range(20):
            f()
    res = {k: [] for k in variants}
    for _ in range(5):
        for k, f in variants.items():
            res[k].append(_median_us(f, iters))
    return {k: min(v) for k, v in res.items()}


def bench(name: str, model: nn.Module, x: torch.Tensor, backend: str, iters: int) -> dict:
    model.eval()
    cm = magpy.compile(model, backend=backend)
    dyn = torch.compile(model, backend=backend)
    with torch.no_grad():
        for _ in range(1 + 2 + 2 * TRIALS):   # the monitor run, then the calls that choose the graph served
            cm(x)
        dyn(x)
        rec = magpy.records(cm)[0]
        args = rec.graph_inputs((x,), {})   # what the matched path hands the graph
        graph = rec.served_graph   # (the compiled graph, or the eager one where that measured faster)
        out = _interleaved({"eager": lambda: model(x), "graph": lambda: graph(*args), "magpy": lambda: cm(x),
                            "dynamo": lambda: dyn(x)}, iters)
        assert rec.guard((x,), {}) is not None
        guard_us = min(_median_us(lambda: rec.guard((x,), {}), iters) for _ in range(5))
        dynamo_guard = _dynamo_guard(model, x)
        dynamo_guard_us = min(_median_us(dynamo_guard, iters) for _ in range(5)) if dynamo_guard else None
    tensors = sum(1 for _ in model.parameters()) + sum(1 for _ in model.buffers())
    print(f"{name:8s} params+buffers={tensors:4d} "
          + " ".join(f"{k}={v:8.1f}us" for k, v in out.items())
          + f"  guard={guard_us:.1f}us"
          + (f" dynamo_guard={dynamo_guard_us:.1f}us" if dynamo_guard_us is not None
             else " dynamo_guard=n/a (no cache entry found for forward)")
          + f"  magpy/graph={out['magpy'] / out['graph']:.3f}"
          + f"  dynamo/graph={out['dynamo'] / out['graph']:.3f}  magpy/eager={out['magpy'] / out['eager']:.3f}"
          + (f"  graph served: {rec.choice.describe()}" if rec.choice is not None else ""))
    return out


def _dynamo_guard(model: nn.Module, x: torch.Tensor):
    """TorchDynamo's guard for ``model(x)`` alone: the guard manager of the cache entry on
    ``forward``'s code, called on the frame's locals as the evaluation hook calls it; None where
    this torch does not expose it."""
    try:
        from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

        entries = _debug_get_cache_entry_list(type(model).forward.__code__)
        manager = entries[0].guard_manager
        f_locals = {"self": model, "x": x}
        if not manager.check(f_locals):
            return None
    except (ImportError, AttributeError, IndexError):
        return None
    return lambda: manager.check(f_locals)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="eager")
    p.add_argument("--iters", type=int, default=300)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    print(f"backend={a.backend}, median of {a.iters} calls, best of 5 interleaved rounds, 1 thread")
    bench("small", DemoNet(), torch.randn(1, 3, 16, 16), a.backend, a.iters)
    bench("medium", MLPStack(), torch.randn(1, 64), a.backend, a.iters)
    bench("large", resnet101(base_planes=4, num_classes=10), torch.randn(1, 3, 32, 32),
          a.backend, a.iters)
    bench_split(LoggedStack(), torch.randn(1, 64), a.backend, a.iters)


if __name__ == "__main__":
    main()
