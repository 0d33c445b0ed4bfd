"""Static-shape inference latency (Figures 1 and 15): one cell per model x compiler x batch size.

A cell builds the model, computes eager's output on one seeded input, compiles, times the first
call (graph instantiation and compilation included), checks the output against eager, times
``repeat`` calls after ``warmup`` more, and checks the output of one last call again: for MagPy the
first call is the monitor run and only later calls take the matched path (guard + mock), so both
paths are checked.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from experiments.plan import Plan
from experiments.runners._common import build_program, compile_counts, geomean, make_spec, speedup_table

KEY = ["model", "compiler", "bs"]


def cells(plan: Plan) -> list[dict[str, Any]]:
    """Every model x batch size x compiler of the plan (compilers innermost, eager first)."""
    return [make_spec(plan, model, compiler, {"model": model["name"], "compiler": compiler["name"], "bs": bs})
            for model in plan.models for bs in plan.bs for compiler in plan.compilers]


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Time one compiled model on one static input; see the module docstring."""
    from experiments.compare import Tolerance, compare
    from experiments.compilers import prepare, to_device
    from experiments.measure import time_calls, timed_call

    model, get_input = build_program(spec)
    args, kwargs = to_device(get_input(spec["key"]["bs"]), spec["device"])
    expected = model(*args, **kwargs)
    start = time.perf_counter()
    compiled = prepare(spec["compiler"], model, spec["device"], (args, kwargs))
    prepare_s = time.perf_counter() - start
    args, kwargs = to_device((args, kwargs), compiled.device)
    out, first_call_s = timed_call(compiled.fn, args, kwargs, compiled.sync)
    tolerance = Tolerance.from_config(spec["tolerance"])
    first = compare(expected, out, tolerance)
    stats = time_calls(compiled.fn, [(args, kwargs)], warmup=spec["warmup"], repeat=spec["repeat"],
                       sync=compiled.sync)
    last = compare(expected, compiled.fn(*args, **kwargs), tolerance)
    return {
        **stats,
        "prepare_s": prepare_s,
        "first_call_s": first_call_s,
        "correct": bool(first and last),
        "max_abs_err": max(first.max_abs_err, last.max_abs_err),
        "mismatch": "; ".join(f"{when}: {c.mismatch}" for when, c in (("first call", first), ("steady", last))
                              if c.mismatch),
        "regions": len(compiled.regions) or None,
        "notes": "; ".join(compiled.notes),
        **compile_counts(spec, compiled, probe=(args, kwargs)),
    }


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean latency and speedup over eager per model x batch size x compiler, plus a GeoMean row
    per compiler x batch size over the models where that compiler was measured and correct."""
    df = speedup_table(raw, ["model", "bs"])
    columns = ["model", "bs", "compiler", "status", "correct", "mean_ms", "median_ms", "statistic", "speedup",
               "first_call_s", "graph_count", "fallbacks", "limit_hits", "break_reasons", "mismatch", "error"]
    df = df[[c for c in columns if c in df.columns]]
    geo = [{"model": "GeoMean", "bs": bs, "compiler": compiler, "status": "ok" if group["speedup"].notna().any()
            else "none", "speedup": geomean(group["speedup"].tolist()), "n_models": int(group["speedup"].notna().sum())}
           for (bs, compiler), group in df.groupby(["bs", "compiler"], sort=False)]
    return pd.concat([df, pd.DataFrame(geo)], ignore_index=True)
