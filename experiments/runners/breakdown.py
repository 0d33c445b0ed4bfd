"""MagPy's time breakdown at batch size 1 (Figure 16).

(a) Monitor run, the first call: ``stats.analysis_time_s`` (MagPy analysing the execution state)
and ``stats.backend_compile_time_s`` (the graph compiler), the rest of the call being "other".
(b) Matched run, later calls with ``magpy.compile(..., profile=True)``: the call's time (``matched_ms``,
the run's ``statistic`` of the timed calls, as the other figures use) and per matched call, the
guard (``stats.guard_time_s``) and the mock including the compiled graph (``stats.mock_time_s``),
from the counters' growth over the timed calls divided by the growth of ``stats.matched_calls``.
A program MagPy falls back on (a break) has no matched run: its row keeps the monitor run, its
``fallbacks`` and ``break_reasons``, and Figure 16 says "fell back to eager" for (b).
"""

from __future__ import annotations

import copy
import math
import statistics
from typing import Any

import pandas as pd

from experiments.plan import Plan, SettingsError
from experiments.runners._common import build_program, make_spec

KEY = ["model", "compiler", "bs"]


def cells(plan: Plan) -> list[dict[str, Any]]:
    """Every model x MagPy compiler of the plan at the plan's batch sizes (Figure 16 uses 1)."""
    for compiler in plan.compilers:
        if compiler["frontend"] != "magpy":
            raise SettingsError(f"fig16 breaks down MagPy's time; compiler {compiler['name']!r} is not a MagPy one")
    return [make_spec(plan, model, compiler, {"model": model["name"], "compiler": compiler["name"], "bs": bs})
            for model in plan.models for bs in plan.bs for compiler in plan.compilers]


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the monitor run, then timed matched runs, and read MagPy's profile counters."""
    import magpy
    from experiments.compare import Tolerance, compare
    from experiments.compilers import prepare, to_device
    from experiments.measure import summarize_times, time_calls, timed_call

    model, get_input = build_program(spec)
    args, kwargs = to_device(get_input(spec["key"]["bs"]), spec["device"])
    expected = model(*args, **kwargs)
    compiled = prepare(spec["compiler"], model, spec["device"], (args, kwargs), profile=True)
    out, monitor_s = timed_call(compiled.fn, args, kwargs, compiled.sync)
    tolerance = Tolerance.from_config(spec["tolerance"])
    first = compare(expected, out, tolerance)
    after_monitor = copy.copy(magpy.stats(compiled.handle))  # stats() may be the live counters
    time_calls(compiled.fn, [(args, kwargs)], warmup=0, repeat=max(1, spec["warmup"]), sync=compiled.sync)
    before_timed = copy.copy(magpy.stats(compiled.handle))  # the counters cover exactly the timed calls
    # one timed call at a time, the profile counters read between them: guard and mock time per
    # call, so each is summarised by the statistic the call time is (a median bar with median parts)
    times, guards, mocks, prev = [], [], [], before_timed
    for _ in range(spec["repeat"]):
        _, seconds = timed_call(compiled.fn, args, kwargs, compiled.sync)
        now = copy.copy(magpy.stats(compiled.handle))
        times.append(seconds)
        if now.matched_calls is not None and now.matched_calls > prev.matched_calls:
            guards.append(now.guard_time_s - prev.guard_time_s)
            mocks.append(now.mock_time_s - prev.mock_time_s)
        prev = now
    stats = summarize_times(times)
    after_timed = prev
    last = compare(expected, compiled.fn(*args, **kwargs), tolerance)
    correct, mismatch = bool(first and last), "; ".join(c.mismatch for c in (first, last) if c.mismatch)
    matched = after_timed.matched_calls - before_timed.matched_calls
    analysis, compile_s = after_monitor.analysis_time_s, after_monitor.backend_compile_time_s
    reasons = " | ".join(str(r) for r in getattr(after_timed, "break_reasons", []) or [])
    if matched <= 0:  # MagPy gave up (a break): the calls ran eagerly, there is no matched run to split
        return {**stats, "correct": correct, "mismatch": mismatch,
                "monitor_s": monitor_s, "analysis_s": analysis, "backend_compile_s": compile_s,
                "monitor_other_s": max(0.0, monitor_s - analysis - compile_s), "matched_calls": 0,
                "graph_count": after_timed.graph_count, "monitor_runs": after_timed.monitor_runs,
                "fallbacks": after_timed.fallbacks,
                "break_reasons": (reasons or "no break reason given")[:1000]}
    return {
        **stats,
        "correct": correct,
        "mismatch": mismatch,
        "monitor_s": monitor_s,
        "analysis_s": analysis,
        "backend_compile_s": compile_s,
        "monitor_other_s": max(0.0, monitor_s - analysis - compile_s),
        "matched_calls": matched,
        "guard_s": (after_timed.guard_time_s - before_timed.guard_time_s) / matched,
        "mock_s": (after_timed.mock_time_s - before_timed.mock_time_s) / matched,
        "guard_median_s": statistics.median(guards) if guards else math.nan,
        "mock_median_s": statistics.median(mocks) if mocks else math.nan,
        "graph_count": after_timed.graph_count,
        "monitor_runs": after_timed.monitor_runs,
        "fallbacks": after_timed.fallbacks,
        "break_reasons": reasons[:1000],
    }


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Per model: the two breakdowns in seconds and as fractions of their totals."""
    rows = []
    for _, r in raw.iterrows():
        statistic = r.get("statistic") if isinstance(r.get("statistic"), str) else "mean"
        row = {"model": r["model"], "compiler": r["compiler"], "bs": r["bs"], "status": r["status"],
               "statistic": statistic,
               "correct": r.get("correct"), "fallbacks": r.get("fallbacks"), "break_reasons": r.get("break_reasons"),
               "mismatch": r.get("mismatch"), "error": r.get("error", "")}
        if r["status"] == "ok":
            monitor = r["analysis_s"] + r["backend_compile_s"] + r["monitor_other_s"]
            row.update({
                "monitor_s": monitor, "analysis_s": r["analysis_s"], "backend_compile_s": r["backend_compile_s"],
                "monitor_other_s": r["monitor_other_s"],
                "analysis_frac": r["analysis_s"] / monitor if monitor else math.nan,
                "backend_compile_frac": r["backend_compile_s"] / monitor if monitor else math.nan,
                "monitor_other_frac": r["monitor_other_s"] / monitor if monitor else math.nan,
            })
        if r["status"] == "ok" and r.get("matched_calls", 1) and not pd.isna(r.get("guard_s")):
            # guard and mock by the statistic the call time is (the mean: totals per call)
            guard, mock = r["guard_s"], r["mock_s"]
            if statistic == "median" and not pd.isna(r.get("guard_median_s", math.nan)):
                guard, mock = r["guard_median_s"], r["mock_median_s"]
            matched = guard + mock
            row.update({
                "matched_ms": r[f"{statistic}_s"] * 1e3, "guard_ms": guard * 1e3, "mock_ms": mock * 1e3,
                "guard_frac": guard / matched if matched else math.nan,
                "mock_frac": mock / matched if matched else math.nan,
            })
        rows.append(row)
    return pd.DataFrame(rows)
