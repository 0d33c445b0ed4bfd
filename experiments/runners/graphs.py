"""Number of operator graphs per approach (Table 2): one cell per model x approach at batch size 1.

How each approach's graphs are counted (paper §8.2):

* ``dynamo``: the distinct graphs TorchDynamo handed its backend that one call of the model runs
  (a graph run twice counts once), after a warm-up call (:func:`experiments.compilers.dynamo_graph_counter`, which the timing experiments'
  ``graph_count`` also uses). Without recompilations that is the paper's count (backend
  invocations during one call); a frame Dynamo recompiles past its recompile limit runs eagerly
  from then on and is a fallback (``limit_hits``), so the count is the same however many calls
  came before. ``compiled_graphs`` keeps the backend invocations.
* ``torchscript-regions`` / ``torchscript``: the number of entries into scripted regions during one
  call; the regions are the largest submodules ``torch.jit.script`` accepts, found automatically
  (the paper annotated them by hand, so its counts are smaller), 1 when the whole model scripts.
* ``lazytensor``: the graphs LazyTensor cuts one steady-state call into, counted as XLA's metrics
  report them (``torch_xla.debug.metrics``: each graph LazyTensor hands XLA goes through its compile
  step, a ``CachedCompile`` on a cache hit, else an ``UncachedCompile``; the paper counted
  ``CachedCompile``). The call ends at one ``mark_step`` (the step boundary a training loop puts
  after each iteration), whose graph is the rest of the trace; every graph before it is a
  ``sync``: the program needed a value (``.item()``, ``float(t)``, a branch on a tensor) and
  LazyTensor had to run what it traced so far. ``compiled_graphs``: the ``UncachedCompile`` of the
  first call. The cells run in ``.venv-xla`` (torch 2.9.0, torch_xla 2.9.0; ``experiments.cells``).
* ``magpy``: ``magpy.stats(compiled).graph_count`` after one call; the break reasons MagPy gives
  (``magpy.explain``) go to the row too.

Every cell also runs the instantiated program once and checks its output against eager.
"""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd

from experiments.outcomes import table2_cell
from experiments.plan import Plan
from experiments.runners._common import build_program, make_spec

KEY = ["model", "compiler", "bs"]


def cells(plan: Plan) -> list[dict[str, Any]]:
    """Every model x approach of the plan at the plan's batch sizes (Table 2 uses 1)."""
    return [make_spec(plan, model, compiler, {"model": model["name"], "compiler": compiler["name"], "bs": bs})
            for model in plan.models for bs in plan.bs for compiler in plan.compilers]


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Count the graphs one call of the model produces under the spec's approach."""
    from experiments.compare import Tolerance, compare
    from experiments.compilers import Unavailable, missing_requirements, to_device

    missing = missing_requirements(spec["compiler"])
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed")
    model, get_input = build_program(spec)
    args, kwargs = to_device(get_input(spec["key"]["bs"]), spec["device"])
    expected = model(*args, **kwargs)
    frontend = spec["compiler"]["frontend"]
    counter = _COUNTERS.get(frontend)
    if counter is None:
        raise ValueError(f"table2 cannot count graphs of frontend {frontend!r}; valid: {sorted(_COUNTERS)}")
    out, row = counter(spec, model, args, kwargs)
    found = compare(expected, out, Tolerance.from_config(spec["tolerance"]))
    return {"correct": bool(found), "max_abs_err": found.max_abs_err, "mismatch": found.mismatch or "", **row}


def _count_dynamo(spec, model, args, kwargs) -> tuple[Any, dict[str, Any]]:
    import torch

    from experiments.compilers import dynamo_graph_counter

    torch._dynamo.reset()
    counter = dynamo_graph_counter(spec["compiler"].get("backend"))
    compiled = torch.compile(model, backend=counter)
    compiled(*args, **kwargs)  # warm-up: compiles (and recompiles, up to the limit)
    counter.ran.clear()
    out = compiled(*args, **kwargs)
    row = {"graph_count": len(counter.ran), "compiled_graphs": int(counter.frame_count),
           "limit_hits": len(counter.limit_hits)}
    if counter.limit_hits:
        row["break_reasons"] = " | ".join(counter.limit_hits)[:1000]
    return out, row


def _count_torchscript(spec, model, args, kwargs) -> tuple[Any, dict[str, Any]]:
    import torch

    from experiments.compilers import script_largest_regions

    if spec["compiler"]["frontend"] == "torchscript":
        return torch.jit.script(model)(*args, **kwargs), {"graph_count": 1, "regions": 1}
    scripted = copy.deepcopy(model)
    regions, first_failure = script_largest_regions(scripted, (args, kwargs))
    if not regions:
        raise RuntimeError(f"torch.jit.script accepts no submodule: {first_failure}")
    if regions == [""]:
        return torch.jit.script(model)(*args, **kwargs), {"graph_count": 1, "regions": 1}
    # Count entries on the eager twin: the scripted program makes the same calls in the same order.
    entries = [0]
    modules = dict(model.named_modules())
    handles = [modules[path].register_forward_pre_hook(lambda *_: entries.__setitem__(0, entries[0] + 1))
               for path in regions]
    try:
        model(*args, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return scripted(*args, **kwargs), {"graph_count": entries[0], "regions": len(regions),
                                       "notes": f"whole model not scriptable: {first_failure}"[:300]}


def _count_lazytensor(spec, model, args, kwargs) -> tuple[Any, dict[str, Any]]:
    import torch
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    from experiments.compilers import to_device, xla_device

    def graphs() -> int:  # graphs handed to XLA since the last clear_all (every one is compiled or a cache hit)
        return sum(int(met.counter_value(name) or 0) for name in ("CachedCompile", "UncachedCompile"))

    device = xla_device(torch.device(spec["device"]))
    model = model.to(device)
    args, kwargs = to_device((args, kwargs), device)
    xm.mark_step()  # the weights and inputs are on the device before the first call
    xm.wait_device_ops()
    met.clear_all()
    first = model(*args, **kwargs)  # (held: a step computes only the tensors still alive)
    xm.mark_step()  # first call: compiles; the count is taken on the next, steady-state call
    xm.wait_device_ops()
    compiled = int(met.counter_value("UncachedCompile") or 0)
    del first
    met.clear_all()
    out = model(*args, **kwargs)
    syncs = graphs()  # cut before the step's end: the program read a value
    xm.mark_step()
    xm.wait_device_ops()
    count = graphs()
    return out, {"graph_count": count, "syncs": syncs, "mark_steps": 1, "compiled_graphs": compiled,
                 "notes": f"{syncs} graph(s) cut where the program read a value, {count - syncs} at the mark_step"}


def _count_magpy(spec, model, args, kwargs) -> tuple[Any, dict[str, Any]]:
    import magpy

    magpy.reset()
    backend = spec["compiler"].get("backend") or "eager"
    compiled = magpy.compile(model, backend=backend)
    out = compiled(*args, **kwargs)
    stats = magpy.stats(compiled)
    explanation = magpy.explain(model)(*args, **kwargs)
    reasons = list(explanation.break_reasons)
    return out, {"graph_count": stats.graph_count, "explain_graph_count": explanation.graph_count,
                 "fallbacks": stats.fallbacks, "op_count": explanation.op_count,
                 "break_reasons": " | ".join(str(r) for r in reasons)[:1000]}


_COUNTERS = {
    "dynamo": _count_dynamo,
    "torchscript": _count_torchscript,
    "torchscript-regions": _count_torchscript,
    "lazytensor": _count_lazytensor,
    "magpy": _count_magpy,
}


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Table 2 in long form: graph count (or the outcome's word) per approach x model."""
    df = raw.copy()
    if "graph_count" not in df.columns:
        df["graph_count"] = pd.NA
    df["value"] = df.apply(table2_cell, axis=1)
    columns = ["compiler", "frontend", "model", "bs", "graph_count", "value", "status", "correct", "limit_hits", "break_reasons",
               "error"]
    return df[[c for c in columns if c in df.columns]]
