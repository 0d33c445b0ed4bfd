"""Helpers shared by the runners: building a program from a cell spec, cell keys, speedup tables."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from experiments.plan import Plan
from experiments.results import cell_id


def import_object(path: str) -> Any:
    """The object named by ``"package.module:attribute"``."""
    module, sep, attribute = path.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"expected 'module:attribute', got {path!r}")
    return getattr(importlib.import_module(module), attribute)


def make_spec(plan: Plan, model: dict[str, Any], compiler: dict[str, Any] | None, key: dict[str, Any],
              **extra: Any) -> dict[str, Any]:
    """A cell spec: the plan's shared fields, the model and compiler configs, the key and its id."""
    key = {"experiment": plan.experiment, **key}
    return {**plan.base_spec(), "model": model, "compiler": compiler, "key": key, "cell_id": cell_id(key), **extra}


def build_program(spec: dict[str, Any]) -> tuple[Any, Callable[..., Any]]:
    """Build the spec's model on the spec's device: ``(model, get_input)``."""
    model_cfg = spec["model"]
    builder = import_object(model_cfg.get("builder") or "models:build")
    model, get_input = builder(model_cfg["name"], size=spec["size"], seed=spec["seed"])
    return model.to(spec["device"]), get_input


def dynamic_inputs(spec: dict[str, Any]) -> list[tuple[Sequence[Any], dict[str, Any]]]:
    """The spec's stream of dynamic inputs (``model.dynamic_builder``), ``spec["n_inputs"]`` long."""
    model_cfg = spec["model"]
    if not model_cfg.get("dynamic_builder"):
        raise ValueError(f"model {model_cfg['name']!r} has no dynamic_builder in its config")
    builder = import_object(model_cfg["dynamic_builder"])
    extra = {"stream": dict(spec["stream"])} if spec.get("stream") else {}   # (Figure 17's ranges)
    return builder(model_cfg["name"], spec["n_inputs"], size=spec["size"], kind=spec["kind"], seed=spec["seed"], **extra)


def magpy_stats(spec: dict[str, Any], compiled: Any) -> Any:
    """MagPy's ``stats`` of the cell's compiled model now (None for other frontends): taken after
    the warm-up pass, :func:`compile_counts` says what happened after it."""
    if (spec.get("compiler") or {}).get("frontend") != "magpy":
        return None
    import magpy

    return magpy.stats(compiled.handle)


def compile_counts(spec: dict[str, Any], compiled: Any, probe: tuple[Sequence[Any], dict[str, Any]] | None = None,
                   warm: Any = None) -> dict[str, Any]:
    """What the frontend did over the cell: graphs, (re)compilations, fallbacks and why.

    MagPy: its ``stats`` counters and break reasons. Dynamo: with ``probe`` (one input, the cell
    warm), the distinct graphs one more call of it runs, counted by
    :func:`experiments.compilers.dynamo_graph_counter` as Table 2 counts them (per call after
    warm-up: the same number however many calls came before); without, the graphs compiled over
    the cell. A frame past Dynamo's recompile limit is a fallback (``limit_hits``, reasons in
    ``break_reasons``), as a MagPy break is, so that both show up as "fell back to eager" instead
    of as a bogus speedup.

    MagPy also: other-side runs (magpy.dynamic.other_side), backend compiles, splits, rolled loops
    and conditionals in its records; with
    ``warm`` (its stats after a warm-up pass, :func:`magpy_stats`), the monitor runs and the calls
    served eagerly (fallbacks, the continuations' included) after it, which a stream the records
    cover keeps at 0.
    """
    frontend = (spec.get("compiler") or {}).get("frontend")
    if frontend == "magpy":
        import magpy

        stats = magpy.stats(compiled.handle)
        reasons = " | ".join(str(r) for r in getattr(stats, "break_reasons", []) or [])
        row = {"graph_count": stats.graph_count, "monitor_runs": stats.monitor_runs,
               "other_side_runs": stats.other_side_runs, "fallbacks": stats.fallbacks,
               "backend_compiles": stats.backend_compiles, "splits": stats.splits,
               "loop_regions": stats.loop_regions, "conditionals": stats.conditionals,
               "resumed_monitor_runs": stats.resumed_monitor_runs, "resumed_fallbacks": stats.resumed_fallbacks,
               "break_reasons": reasons[:1000]}
        if warm is not None:
            # (an other-side run after warm-up is one more run of the program under monitoring)
            row["monitor_runs_after_warmup"] = (stats.monitor_runs + stats.resumed_monitor_runs + stats.other_side_runs
                                                - warm.monitor_runs - warm.resumed_monitor_runs - warm.other_side_runs)
            row["eager_after_warmup"] = (stats.fallbacks + stats.resumed_fallbacks
                                         - warm.fallbacks - warm.resumed_fallbacks)
        return row
    if frontend == "dynamo":
        graphs = compiled.dynamo_graphs
        count = int(graphs.frame_count)
        if probe is not None:
            graphs.ran.clear()
            compiled.fn(*probe[0], **probe[1])
            compiled.sync()
            count = len(graphs.ran)
        hits = list(getattr(graphs, "limit_hits", []))
        return {"graph_count": count, "limit_hits": len(hits), "break_reasons": " | ".join(hits)[:1000]}
    return {}


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values (NaN for none)."""
    values = [v for v in values if v and v > 0 and not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def usable(raw: pd.DataFrame) -> pd.Series:
    """Rows whose timing may be shown: measured and correct."""
    correct = raw["correct"] if "correct" in raw.columns else pd.Series(True, index=raw.index)
    return (raw["status"] == "ok") & (correct.astype(object) == True)  # noqa: E712 (NaN-safe)


def speedup_table(raw: pd.DataFrame, group: list[str], baseline: str = "eager") -> pd.DataFrame:
    """Per row of ``raw``: latency in ms and speedup over ``baseline`` within ``group``.

    The speedup uses each row's ``statistic`` column (``mean`` or ``median`` of the timed calls).

    A speedup is reported only where both the row and its baseline were measured and correct;
    elsewhere it is NaN and ``status``/``error`` say why.
    """
    df = raw.copy()
    df["usable"] = usable(df)
    for column in ("mean_s", "median_s"):
        if column not in df.columns:
            df[column] = math.nan
    # The statistic the run asked for (size config: mean on paper, median on smoke), row by row.
    statistic = df["statistic"] if "statistic" in df.columns else pd.Series("mean", index=df.index)
    df["time_s"] = [row["median_s"] if stat == "median" else row["mean_s"] for stat, (_, row) in
                    zip(statistic, df.iterrows())]
    df["mean_ms"] = df["mean_s"] * 1e3
    df["median_ms"] = df["median_s"] * 1e3
    base = df[(df["compiler"] == baseline) & df["usable"]].set_index(group)["time_s"]
    speedups = []
    for _, row in df.iterrows():
        key = tuple(row[g] for g in group) if len(group) > 1 else row[group[0]]
        ok = row["usable"] and key in base.index
        speedups.append(base.loc[key] / row["time_s"] if ok else math.nan)
    df["speedup"] = speedups
    return df
