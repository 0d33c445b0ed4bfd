"""Public API: ``compile``, ``explain``, ``stats``, ``reset``.

    >>> import magpy, torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    >>> fast = magpy.compile(model, backend="eager")
    >>> fast(torch.randn(2, 4)).shape
    torch.Size([2, 4])

On a call, the records' guards are tried most recent first; a passing guard hands
its fetched objects to the record's mock (compiled graph + replayed side effects).
When every guard fails, a monitor run executes the program for real under
monitoring, and a new record is built from it. A program MagPy cannot compile runs
eagerly, with its break reasons in :func:`explain` and :func:`stats`.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from . import _logging, capture
from .backends import BackendError, resolve
from .cache import Record, RecordCache
from .codegen import generate
from .graph import Unsupported
from .monitor import SUPPORTED_BYTECODE, BreakCompile, Monitor, _module_has_hooks, bind_parameters
from .source import ConstSource

log = logging.getLogger("magpy")
_guards_log = _logging.channel("guards")
_graph_log = _logging.channel("graph")
_recompiles_log = _logging.channel("recompiles")
_breaks_log = _logging.channel("breaks")

_ALL: weakref.WeakSet = weakref.WeakSet()
_monitoring = threading.local()   # .active: a monitor run is in progress on this thread
_monitoring.active = False


@dataclass
class Stats:
    """Counters of one compiled callable (see :func:`stats`)."""

    monitor_runs: int = 0
    guard_hits: int = 0
    guard_misses: int = 0
    fallbacks: int = 0
    records: int = 0
    graph_count: int = 0
    analysis_time_s: float = 0.0
    backend_compile_time_s: float = 0.0
    matched_calls: int = 0
    guard_time_s: float = 0.0
    mock_time_s: float = 0.0
    break_reasons: list = field(default_factory=list)


def _check_python() -> None:
    import sys

    if sys.version_info[:2] not in SUPPORTED_BYTECODE:
        raise capture.UnsupportedPython(
            f"MagPy's monitor decodes CPython {', '.join(f'{a}.{b}' for a, b in SUPPORTED_BYTECODE)} bytecode; "
            f"this is Python {sys.version.split()[0]}")
    capture.check_supported()


def _top_function(target: Any) -> tuple[Any, Any]:
    """(function whose frame is monitored, bound self or None)."""
    if isinstance(target, torch.nn.Module):
        fwd = target.forward
        if isinstance(fwd, types.MethodType) and isinstance(fwd.__func__, types.FunctionType):
            return fwd.__func__, target
        raise TypeError(f"magpy.compile: {type(target).__name__}.forward is not a Python function")
    if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
        return target.__func__, target.__self__
    if isinstance(target, types.FunctionType):
        return target, None
    if isinstance(target, functools.partial):
        raise TypeError("magpy.compile: wrap functools.partial objects in a def")
    if callable(target) and isinstance(type(target).__dict__.get("__call__"), types.FunctionType):
        return type(target).__call__, target
    raise TypeError(f"magpy.compile expects a function or torch.nn.Module, got {type(target).__name__}")


class _Runner:
    """Monitor run + record building, shared by compile and explain."""

    def __init__(self, target: Any):
        self.target = target
        self.fn, self.self_obj = _top_function(target)

    def monitor(self, args: tuple, kwargs: dict) -> tuple[Monitor | None, Any, str | None, tuple]:
        """Run the program once under monitoring. Returns (monitor, result, break reason, call shape)."""
        if isinstance(self.target, torch.nn.Module) and _module_has_hooks(self.target):
            return None, self.target(*args, **kwargs), "the compiled module has hooks", (0, ())
        try:
            sources, values, shape = bind_parameters(self.fn, self.self_obj, args, kwargs)
        except BreakCompile as e:
            return None, self._eager(args, kwargs), e.reason, (0, ())
        mon = Monitor(self.fn.__code__, sources, values, self.fn.__closure__)
        if isinstance(self.target, torch.nn.Module):
            mon._guard(ConstSource(self.target, "self"), "nohooks")
            mon.uses_modules = True
        import torch.compiler as tc

        flag, tc._is_compiling_flag = tc._is_compiling_flag, True
        capture.start(mon)
        _monitoring.active = True
        try:
            if self.self_obj is not None:
                result = self.fn(self.self_obj, *args, **kwargs)
            else:
                result = self.fn(*args, **kwargs)
        finally:
            capture.stop()
            _monitoring.active = False
            tc._is_compiling_flag = flag
        if mon.broken is None and not mon.finished:
            mon.broken = "the monitor run did not observe the function's return"
        return mon, result, mon.broken, shape

    def _eager(self, args, kwargs):
        return self.target(*args, **kwargs)


class CompiledFunction:
    """The callable :func:`compile` returns for a function (see :class:`CompiledModule` for modules)."""

    def __init__(self, target: Any, backend: Any = "inductor", profile: bool = False, cache_limit: int = 64,
                 recompile_limit: int = 16):
        _check_python()
        self._target = target
        self._runner = _Runner(target)
        self._backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", "callable")
        self._compile_graph = resolve(backend)
        self._cache = RecordCache(limit=cache_limit)
        self._stats = Stats()
        self._profile = profile
        self._eager_reason: str | None = None
        self._recompile_limit = recompile_limit
        functools.update_wrapper(self, self._runner.fn, updated=())
        _ALL.add(self)

    # -- the hot path ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if getattr(_monitoring, "active", False):
            # Called from a program that is being monitored: run as plain code, so the outer
            # monitor run sees (and compiles) what this function does.
            return self._target(*args, **kwargs)
        if self._eager_reason is None:
            records = self._cache.records
            if self._profile:
                return self._call_profiled(args, kwargs)
            for i, rec in enumerate(records):
                fetched = rec.guard(args, kwargs)
                if fetched is not None:
                    if i:
                        self._cache.promote(i)
                    self._stats.guard_hits += 1
                    return self._run_mock(rec, fetched, args, kwargs)
            self._stats.guard_misses += 1
            return self._miss(args, kwargs)
        self._stats.fallbacks += 1
        return self._target(*args, **kwargs)

    def _run_mock(self, rec: Record, fetched, args, kwargs):
        try:
            return rec.mock(fetched)
        except Exception as e:  # the compiled graph failed: report once, run eagerly
            log.warning("magpy: compiled record failed (%s: %s); running eagerly", type(e).__name__, e)
            self._cache.records.remove(rec)
            self._stats.fallbacks += 1
            return self._target(*args, **kwargs)

    def _call_profiled(self, args, kwargs):
        records = self._cache.records
        t0 = time.perf_counter()
        for i, rec in enumerate(records):
            fetched = rec.guard(args, kwargs)
            if fetched is not None:
                t1 = time.perf_counter()
                out = self._run_mock(rec, fetched, args, kwargs)
                _sync()
                t2 = time.perf_counter()
                st = self._stats
                st.guard_hits += 1
                st.matched_calls += 1
                st.guard_time_s += t1 - t0
                st.mock_time_s += t2 - t1
                if i:
                    self._cache.promote(i)
                return out
        self._stats.guard_misses += 1
        return self._miss(args, kwargs)

    # -- a miss: monitor run, then a new record -----------------------------------------------------------
    def _miss(self, args, kwargs):
        st = self._stats
        if st.monitor_runs >= self._recompile_limit:
            self._give_up(f"recompile limit ({self._recompile_limit}) reached: guards keep failing, e.g. on a "
                          "value that changes every call", internal=True)
            return self._target(*args, **kwargs)
        st.monitor_runs += 1
        if st.monitor_runs > 1:
            _recompiles_log.info("recompiling %s: no record's guard passed (%d records)",
                                 self.__qualname__, len(self._cache))
        t0 = time.perf_counter()
        mon, result, reason, shape = self._runner.monitor(args, kwargs)
        if reason is None:
            try:
                gen = generate(mon, shape, None)
            except Unsupported as e:
                reason = str(e)
            except Exception as e:
                reason = f"internal MagPy error: {type(e).__name__}: {e}"
                mon.internal_error = True
        t1 = time.perf_counter()
        st.analysis_time_s += t1 - t0
        if reason is not None:
            self._give_up(reason, internal=getattr(mon, "internal_error", False))
            return result
        try:
            record = self._build_record(mon, gen)
        except Exception as e:
            self._give_up(f"backend {self._backend_name!r} failed to compile the graph: {type(e).__name__}: {e}",
                          internal=True)
            return result
        st.backend_compile_time_s += time.perf_counter() - t1
        self._cache.add(record)
        st.records = len(self._cache)
        st.graph_count = sum(1 for r in self._cache.records if r.op_count)
        _guards_log.info("guards of record %d of %s:\n%s", st.records, self.__qualname__, record.guards_text)
        _graph_log.info("graph of record %d of %s:\n%s", st.records, self.__qualname__, record.graph_module.code
                        if record.graph_module is not None else "(no tensor operations)")
        return result

    def _build_record(self, mon: Monitor, gen) -> Record:
        outputs = gen.graph_output_nodes
        gm = None
        compiled = None
        if outputs or mon.graph.op_count:
            gm = mon.graph.finish(outputs)
            example = [t for _, t in mon.graph.inputs]
            compiled = self._compile_graph(gm, example)
        mock = gen.mock_factory(compiled)
        return Record(guard=gen.guard, mock=mock, graph_module=gm, compiled_graph=compiled,
                      guards_text=gen.guards_text, guard_source=gen.guard_source, mock_source=gen.mock_source,
                      op_count=mon.graph.op_count)

    def _give_up(self, reason: str, internal: bool = False) -> None:
        self._eager_reason = reason
        self._stats.break_reasons.append(reason)
        self._stats.fallbacks += 1
        if internal:
            log.warning("magpy: %s; %s runs eagerly", reason, self.__qualname__)
        else:
            _breaks_log.info("graph break in %s: %s", self.__qualname__, reason)

    # -- introspection ------------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._cache.clear()
        self._eager_reason = None
        self._stats = Stats()


class CompiledModule(CompiledFunction):
    """A compiled ``nn.Module``: calls go through MagPy, everything else reaches the module."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._target, name)

    def eval(self):
        self._target.eval()
        return self

    def train(self, mode: bool = True):
        self._target.train(mode)
        return self

    def __repr__(self) -> str:
        return f"magpy.compile({self._target!r})"


def compile(target: Any, backend: Any = "inductor", **options: Any) -> CompiledFunction:  # noqa: A001
    """Compile ``target`` (function or ``nn.Module``) with MagPy.

    ``backend``: ``"eager"``, ``"inductor"``, ``"torchscript"``, ``"xla"``, any torch.compile
    backend name, or a callable ``(gm, example_inputs) -> callable``.
    Options: ``profile=True`` times guard and mock of matched calls (see :func:`stats`);
    ``cache_limit`` bounds the records kept per function; after ``recompile_limit`` monitor
    runs the function runs eagerly, with a warning (values that change every call need lifting).
    """
    known = {"profile", "cache_limit", "recompile_limit"}
    bad = set(options) - known
    if bad:
        raise TypeError(f"magpy.compile: unknown options {sorted(bad)}; known: {sorted(known)}")
    if not callable(target):
        raise TypeError(f"magpy.compile expects a function or torch.nn.Module, got {type(target).__name__}")
    try:
        resolve(backend)
    except BackendError:
        raise
    cls = CompiledModule if isinstance(target, torch.nn.Module) else CompiledFunction
    return cls(target, backend=backend, **options)


@dataclass
class Explanation:
    """What one monitor run found (see :func:`explain`)."""

    graph_count: int
    break_reasons: list
    guards: str
    op_count: int
    dynamic: bool
    graph: Any = None

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Operator count: {self.op_count}",
                 f"Dynamic behaviour detected: {self.dynamic}",
                 f"Break reasons ({len(self.break_reasons)}):"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)]
        lines.append("Guards:")
        lines += ["  " + g for g in self.guards.splitlines()]
        return "\n".join(lines)


def explain(target: Any) -> Callable[..., Explanation]:
    """``explain(f)(*args, **kwargs)`` runs ``f`` once under monitoring and reports what MagPy saw."""
    _check_python()
    runner = _Runner(target)

    def run(*args, **kwargs) -> Explanation:
        mon, _result, reason, shape = runner.monitor(args, kwargs)
        guards_text = ""
        gm = None
        if reason is None:
            try:
                gen = generate(mon, shape, None)
                guards_text = gen.guards_text
                gm = mon.graph.finish(gen.graph_output_nodes)
            except Unsupported as e:
                reason = str(e)
            except Exception as e:  # an internal error is a break reason, never a crash of explain
                reason = f"internal MagPy error: {type(e).__name__}: {e}"
        reasons = [reason] if reason else []
        op_count = mon.graph.op_count if mon is not None else 0
        return Explanation(graph_count=0 if reason else (1 if op_count else 0), break_reasons=reasons,
                           guards=guards_text, op_count=op_count, dynamic=bool(mon is not None and mon.dynamic),
                           graph=gm)

    return run


def stats(compiled: CompiledFunction) -> Stats:
    """A snapshot of a compiled callable's counters: monitor runs, guard hits/misses, fallbacks, times."""
    if not isinstance(compiled, CompiledFunction):
        raise TypeError("magpy.stats expects what magpy.compile returned")
    st = compiled._stats
    return dataclasses.replace(st, break_reasons=list(st.break_reasons))   # a snapshot, not live counters


def reset() -> None:
    """Drop every record of every compiled callable in this process."""
    for c in list(_ALL):
        c._reset()


def _sync() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()

