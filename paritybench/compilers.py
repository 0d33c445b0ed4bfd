"""The three graph-capture systems Table 3 compares, each run on one test case.

Every compiler gets a fresh module (same seed, the eager reference's initial state copied in:
:func:`paritybench.evaluate.build_like`), makes the same calls and must reproduce the
reference. What counts as a failure:

* **MagPy** (``magpy.compile(module, backend=...)``): an exception, a wrong result, a
  fallback to eager (an internal error MagPy caught), or more than one graph on a static
  case. ``magpy.explain`` on another fresh module says whether MagPy saw dynamic behaviour
  (``explain(...).dynamic``); a case is also dynamic when the last call still needed a new
  monitor run (its record keeps changing although the inputs have the same shapes). Dynamic
  cases are set apart, as in the paper; they are not failures.
* **TorchDynamo** (``torch.compile(module, fullgraph=True, backend=...)``): an exception (a
  graph break is one under ``fullgraph``) or a wrong result.
* **TorchScript** (``torch.jit.script(module)``): an exception or a wrong result.

Each ``run_*`` returns a JSON-ready stage result (see :mod:`paritybench.evaluate`). The compiling
itself goes through :func:`experiments.compilers.prepare`, the adapter the experiments use (with
Dynamo's ``fullgraph=True`` here), so that Table 3 and the figures compile a model the same way.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from experiments.compilers import prepare

from .evaluate import (
    EagerTrace,
    RunConfig,
    build_like,
    build_module,
    call_sequence,
    error_fields,
    grad_mode,
    make_inputs,
    seed_all,
)
from .loader import TestCase

__all__ = ["COMPILERS", "run_dynamo", "run_magpy", "run_torchscript", "stage_builds"]

_MAX_REASONS = 5


def _judge(reference: EagerTrace, got: EagerTrace, cfg: RunConfig) -> dict[str, str] | None:
    gap = reference.difference(got, cfg.rtol, cfg.atol)
    if gap is None:
        return None
    return {"status": "wrong", "error_class": "WrongResult", "error": gap}


# -- MagPy ---------------------------------------------------------------------------------
def adapter(frontend: str, backend: str | None) -> dict[str, Any]:
    """The compiler config (as ``experiments/conf/compiler/*.yaml`` holds them) that
    :func:`experiments.compilers.prepare`, the artifact's one compiler adapter, takes for a stage."""
    return {"name": frontend, "frontend": frontend, "backend": backend, "requires": []}


def _import_magpy() -> Any:
    """``magpy`` with its public API, or ImportError saying what is missing."""
    import magpy

    missing = [name for name in ("compile", "explain", "stats", "reset") if not hasattr(magpy, name)]
    if missing:
        raise ImportError(f"magpy has no {', '.join(missing)} (the package does not provide its public API yet)")
    return magpy


def run_magpy(case: TestCase, cfg: RunConfig, reference: EagerTrace) -> dict[str, Any]:
    """Compile with MagPy, call ``cfg.calls`` times, compare; ask ``explain`` about dynamics."""
    start = time.perf_counter()
    result: dict[str, Any] = {"status": "ok", "graphs": None}
    try:
        magpy = _import_magpy()
    except Exception as exc:  # noqa: BLE001 - an unusable magpy is every case's result, never a crash
        return {"status": "error", "graphs": None, "time_s": time.perf_counter() - start, **error_fields(exc)}

    explained = _explain(magpy, case, cfg)
    result.update(explained)

    magpy.reset()
    module = build_like(case, cfg, reference)
    monitor_runs: list[int | None] = []
    try:
        with warnings.catch_warnings(record=True) as caught, _MagPyLog() as logged:
            warnings.simplefilter("always")
            cm = prepare(adapter("magpy", cfg.backend), module, "cpu").handle

            def note_runs(_k: int) -> None:
                monitor_runs.append(_stat(magpy, cm, "monitor_runs"))

            got = call_sequence(cm, case, cfg, state_owner=lambda: module, before_call=note_runs)
            monitor_runs.append(_stat(magpy, cm, "monitor_runs"))
        stats = magpy.stats(cm)
    except Exception as exc:  # noqa: BLE001 - MagPy failing on a user program is the measurement
        result.update(status="error", **error_fields(exc))
        result["time_s"] = time.perf_counter() - start
        return result

    for name in ("graph_count", "records", "monitor_runs", "guard_hits", "guard_misses", "fallbacks", "splits",
                 "resumed_fallbacks"):
        result[f"stats_{name}"] = getattr(stats, name, None)
    magpy_warnings = logged.messages + [str(w.message) for w in caught if _from_magpy(w)]
    if magpy_warnings:
        result["warnings"] = magpy_warnings[:_MAX_REASONS]

    # A record that keeps changing is dynamic behaviour; a record dropped after a fallback is not evidence.
    # The evidence is the last call whose input shapes an earlier call had (every call's, on ParityBench;
    # a case whose shapes change between calls, the zoo's, needs a new record per new shape).
    repeat = _last_repeated_shape_call(case, cfg)
    before_last, after_last = (monitor_runs[repeat], monitor_runs[repeat + 1]) if repeat is not None else (None, None)
    # MagPy gave up on the program: calls after the one that broke count as fallbacks, and a
    # break on the last call shows only in the break reasons.
    # A split (magpy.splits) is not giving up: the code on both sides of it runs compiled, as
    # regions (a graph break, not a fallback), unless a continuation itself ran eagerly.
    gave_up = [r for r in (getattr(stats, "break_reasons", None) or []) if not str(r).startswith("split at ")]
    fell_back = (result["stats_fallbacks"] or 0) > 0 or (result.get("stats_resumed_fallbacks") or 0) > 0 \
        or bool(gave_up)
    if before_last is not None and after_last is not None and after_last > before_last and not fell_back:
        result["dynamic"] = True
        result["dynamic_reason"] = (
            f"call {repeat + 1} of {cfg.calls} (input shapes seen before) still needed a new monitor run "
            f"(records: {result['stats_records']})"
        )
    result["graphs"] = result.get("explain_graphs", result["stats_graph_count"])
    if result.get("stats_splits"):
        result["graphs"] = result["stats_graph_count"]   # (explain sees the code before the first split only)

    wrong = _judge(reference, got, cfg)
    if wrong:
        result.update(wrong)
    elif fell_back:
        reasons = [str(r) for r in (getattr(stats, "break_reasons", None) or [])] + magpy_warnings
        result.update(
            status="fallback",
            error_class="Fallback",
            error=(reasons[0] if reasons else "MagPy ran the program eagerly")[:400],
        )
    elif not result.get("dynamic") and (result["graphs"] or 0) > 1:
        reasons = result.get("break_reasons") or [str(r) for r in getattr(stats, "break_reasons", None) or []]
        result.update(
            status="graph_break",
            error_class="GraphBreak",
            error=(reasons[0] if reasons else f"{result['graphs']} graphs")[:400],
        )
    result["time_s"] = time.perf_counter() - start
    return result


def _last_repeated_shape_call(case: TestCase, cfg: RunConfig) -> int | None:
    """The last call (0-based) whose inputs have the shapes and dtypes of an earlier call's."""
    seen: set[str] = set()
    last = None
    for k in range(cfg.calls):
        args, kwargs = make_inputs(case, cfg, k)
        key = repr(_shapes((args, kwargs)))
        if key in seen:
            last = k
        seen.add(key)
    return last


def _shapes(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), str(value.dtype))
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    return type(value).__name__


def _explain(magpy: Any, case: TestCase, cfg: RunConfig) -> dict[str, Any]:
    """``magpy.explain`` on a fresh module with call 1's inputs: dynamic flag, graphs, reasons."""
    magpy.reset()
    try:
        module = build_module(case, cfg)
        args, kwargs = make_inputs(case, cfg, 0)
        seed_all(cfg.seed + 100_003)
        with grad_mode(cfg), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = magpy.explain(module)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - recorded; the compiled run decides the status
        fields = error_fields(exc)
        return {"explain_error": f"{fields['error_class']}: {fields['error']}", "dynamic": False}
    reasons = [str(r) for r in (getattr(ex, "break_reasons", None) or [])]
    out: dict[str, Any] = {
        "dynamic": bool(getattr(ex, "dynamic", False)),
        "explain_graphs": getattr(ex, "graph_count", None),
        "break_reasons": reasons[:_MAX_REASONS],
    }
    if out["dynamic"]:
        out["dynamic_reason"] = reasons[0] if reasons else "explain: dynamic behaviour detected"
    return out


def _stat(magpy: Any, cm: Any, name: str) -> int | None:
    try:
        return getattr(magpy.stats(cm), name)
    except Exception:  # noqa: BLE001 - stats are optional evidence
        return None


class _MagPyLog(logging.Handler):
    """Collects what the ``magpy`` logger reports at WARNING or above during a stage."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a malformed log record must not fail the stage
            self.messages.append(str(record.msg))

    def __enter__(self) -> _MagPyLog:
        logging.getLogger("magpy").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("magpy").removeHandler(self)


def _from_magpy(w: warnings.WarningMessage) -> bool:
    return "/magpy/" in (w.filename or "").replace("\\", "/") or "magpy" in str(w.message).lower()


# -- TorchDynamo ---------------------------------------------------------------------------
def run_dynamo(case: TestCase, cfg: RunConfig, reference: EagerTrace) -> dict[str, Any]:
    """``torch.compile(fullgraph=True)``: success or the error that stopped it."""
    import torch._dynamo

    start = time.perf_counter()
    module = build_like(case, cfg, reference)
    compiled = prepare(adapter("dynamo", cfg.backend), module, "cpu", fullgraph=True)  # (lazy: compiles on call)
    counter = compiled.dynamo_graphs
    try:
        got = call_sequence(compiled.fn, case, cfg, state_owner=lambda: module)
    except Exception as exc:  # noqa: BLE001 - the error is the measurement
        result = {"status": "error", "graphs": int(counter.frame_count) or None, **error_fields(exc)}
    else:
        result = {"status": "ok", "graphs": int(counter.frame_count)}
        wrong = _judge(reference, got, cfg)
        if wrong:
            result.update(wrong)
    finally:
        torch._dynamo.reset()
    result["time_s"] = time.perf_counter() - start
    return result


# -- TorchScript ---------------------------------------------------------------------------
def run_torchscript(case: TestCase, cfg: RunConfig, reference: EagerTrace) -> dict[str, Any]:
    """``torch.jit.script(module)`` then the same calls."""
    start = time.perf_counter()
    module = build_like(case, cfg, reference)
    try:
        scripted = prepare(adapter("torchscript", None), module, "cpu").fn   # torch.jit.script(module)
        got = call_sequence(scripted, case, cfg, state_owner=lambda: scripted)
    except Exception as exc:  # noqa: BLE001 - the error is the measurement
        result = {"status": "error", "graphs": None, **error_fields(exc)}
    else:
        result = {"status": "ok", "graphs": 1}
        wrong = _judge(reference, got, cfg)
        if wrong:
            result.update(wrong)
    result["time_s"] = time.perf_counter() - start
    return result


COMPILERS: dict[str, Callable[[TestCase, RunConfig, EagerTrace], dict[str, Any]]] = {
    "magpy": run_magpy,
    "dynamo": run_dynamo,
    "torchscript": run_torchscript,
}


def stage_builds(compilers: list[str]) -> dict[str, str]:
    """Which code makes each stage's results: torch and the measured sources (the compiler, the
    comparator, this runner, its stubs and loader: :func:`experiments.units.measured_digest`, the
    experiments' cells' identity too).

    A recorded stage whose build differs from the current one is run again on resume
    (:func:`paritybench.runner.stage_reuse`), so a run directory never mixes results of two MagPy
    versions under one table."""
    from experiments.units import measured_digest

    build = f"torch {torch.__version__}; sources {measured_digest()}"
    return {name: build for name in ("eager", *compilers)}
