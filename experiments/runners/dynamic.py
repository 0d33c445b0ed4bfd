"""Inference over a stream of changing inputs (Figures 17 and 18): one cell per model x kind x compiler.

The stream is ``n_inputs`` inputs from the model's ``dynamic_builder`` (``kind`` ``bs``: batch size
uniform in [2, 16]; ``seqlen``: batch 8, length in [32, 256]; ``policy``/loop kinds: inputs that
change the executed path). A cell computes eager's output for each input, compiles, runs one pass
over the stream (timed as ``first_pass_s``: it includes every (re)compilation) and checks it,
times ``repeat`` calls cycling through the stream after ``warmup`` more, then checks a second full
pass (the matched path). A MagPy cell also reports its backend compiles, splits, rolled loops and
conditionals, and the monitor runs and eagerly served calls after the first pass
(``monitor_runs_after_warmup``, ``eager_after_warmup``: 0 where the records cover the stream). ``experiment.dynamic`` lists the frontends compiled with
``dynamic=True`` (a frontend without that option fails its cells rather than run without it); ``experiment.region`` makes Dynamo compile only the model config's ``region`` class.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from experiments.plan import Plan, SettingsError
from experiments.runners._common import (
    build_program,
    compile_counts,
    dynamic_inputs,
    magpy_stats,
    make_spec,
    speedup_table,
)

KEY = ["model", "kind", "compiler"]


def cells(plan: Plan) -> list[dict[str, Any]]:
    """Every model x dynamic kind (the model config's ``kinds``) x compiler of the plan."""
    dynamic = plan.options.get("dynamic") or []
    if not isinstance(dynamic, list):
        raise SettingsError(f"experiment.dynamic lists the frontends compiled with dynamic=True "
                            f"(e.g. [dynamo]), got {dynamic!r}")
    specs = []
    for model in plan.models:
        if not model.get("kinds"):
            raise SettingsError(f"{plan.experiment} needs dynamic inputs; model {model['name']!r} has none "
                                f"(`kinds` is empty in experiments/conf/model/{model['name']}.yaml)")
        for kind in model["kinds"]:
            for compiler in plan.compilers:
                region = None
                if plan.options.get("region") and compiler["frontend"] == "dynamo":
                    region = model.get("region")
                stream = plan.options.get("stream") or None   # (the input ranges: models.dynamic_inputs)
                specs.append(make_spec(plan, model, compiler,
                                       {"model": model["name"], "kind": kind, "compiler": compiler["name"]},
                                       kind=kind, dynamic=compiler["frontend"] in dynamic, region=region,
                                       **({"stream": stream} if stream else {})))
    return specs


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Time one compiled model over the spec's input stream; see the module docstring."""
    from experiments.compare import Tolerance, compare
    from experiments.compilers import prepare, to_device
    from experiments.measure import time_calls

    model, _ = build_program(spec)
    inputs = [to_device(pair, spec["device"]) for pair in dynamic_inputs(spec)]
    expected = [model(*args, **kwargs) for args, kwargs in inputs]
    compiled = prepare(spec["compiler"], model, spec["device"], inputs[0], dynamic=spec["dynamic"],
                       region=spec.get("region"))
    inputs = [to_device(pair, compiled.device) for pair in inputs]

    tolerance = Tolerance.from_config(spec["tolerance"])

    def check_pass() -> tuple[bool, float, str]:
        worst, reasons = 0.0, []
        for i, ((args, kwargs), ref) in enumerate(zip(inputs, expected)):
            found = compare(ref, compiled.fn(*args, **kwargs), tolerance, where=f"input {i} output")
            worst = max(worst, found.max_abs_err)
            if not found:
                reasons.append(found.mismatch)
        return not reasons, worst, "; ".join(reasons)[:500]

    compiled.sync()
    start = time.perf_counter()
    first_ok, first_err, first_why = check_pass()
    compiled.sync()
    first_pass_s = time.perf_counter() - start
    warm = magpy_stats(spec, compiled)   # (after the first pass: what the timed calls needed on top)
    stats = time_calls(compiled.fn, inputs, warmup=spec["warmup"], repeat=spec["repeat"], sync=compiled.sync)
    last_ok, last_err, last_why = check_pass()
    return {
        **stats,
        "first_pass_s": first_pass_s,
        "n_inputs": len(inputs),
        "shapes": _describe_shapes(inputs),
        "correct": first_ok and last_ok,
        "max_abs_err": max(first_err, last_err),
        "mismatch": "; ".join(w for w in (first_why, last_why) if w),
        "dynamic": bool(spec["dynamic"]),
        "region": spec.get("region") or "",
        "notes": "; ".join(compiled.notes),
        **compile_counts(spec, compiled, warm=warm),
    }


def _describe_shapes(inputs: list[Any]) -> str:
    """The distinct shapes of each input's first tensor, e.g. ``[2x3x32x32, 7x3x32x32]``."""
    import torch
    import torch.utils._pytree as pytree

    shapes = []
    for pair in inputs:
        first = next((x for x in pytree.tree_leaves(pair) if isinstance(x, torch.Tensor)), None)
        text = "x".join(map(str, first.shape)) if first is not None else "-"
        if text not in shapes:
            shapes.append(text)
    return "[" + ", ".join(shapes) + "]"


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean latency per call and speedup over eager per model-kind x compiler."""
    df = speedup_table(raw, ["model", "kind"])
    df["workload"] = df["model"] + "-" + df["kind"]
    columns = ["workload", "model", "kind", "compiler", "status", "correct", "mean_ms", "median_ms", "statistic",
               "speedup", "first_pass_s", "graph_count", "monitor_runs", "other_side_runs", "fallbacks", "limit_hits",
               "backend_compiles", "splits", "loop_regions", "conditionals", "monitor_runs_after_warmup", "eager_after_warmup",
               "break_reasons", "mismatch", "error"]
    return df[[c for c in columns if c in df.columns]]
