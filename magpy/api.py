"""Public API: ``compile``, ``explain``, ``stats``, ``reset``.

    >>> import magpy, torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    >>> fast = magpy.compile(model, backend="eager")
    >>> fast(torch.randn(2, 4)).shape
    torch.Size([2, 4])

On a call, the records' guards are tried most recent first; a passing guard hands its fetched
objects to the record's mock (compiled graph + replayed side effects). When every guard fails, a
monitor run executes the program for real under monitoring, and a new record is built from it.
A monitor run that meets a dynamic operation at a call splits the call there (:mod:`magpy.splits`):
the record covers the code before it, and the code after it is a continuation compiled like any
function, monitored in the same call. A program MagPy cannot compile runs eagerly, with its break
reasons in :func:`explain` and :func:`stats`.

Semantics kept equal to the eager call:

* Hooks. A call made while the compiled module has forward/backward hooks, or while global
  module hooks are registered (``torch.nn.modules.module.register_module_forward_hook`` and
  friends), runs eagerly through the real ``module(*args)``, so the hooks run exactly as they
  would; the records stay, their guards fail while hooks exist, and the first call after the
  hooks are removed hits (or monitors) again. For a compiled plain function, global module hooks
  make a miss run eagerly too (the program may call modules).
* Exceptions. An exception raised by the user's operators inside a record's mock reaches the
  caller as the eager call would raise it (the call is not re-run: its in-place updates must not
  happen twice); ``Stats.mock_errors`` counts them. An exception escaping a guard is a MagPy bug:
  the record is dropped, a warning names the exception once, and the call goes on as a miss.
* Compiler checks. ``torch.compiler.is_compiling()`` answers False in a monitor run, as in
  eager: the record holds eager's path, never a library's compile-only one (see docs/limits.md).
* Threads. Capture state (the tracer) is process-wide, so monitor runs are serialised by one
  process-wide re-entrant lock (like torch.compile's compile lock): a thread that misses while
  another thread is monitoring waits for it, then tries the guards of any record made meanwhile
  (the other thread may have built the one it needs) before monitoring. Guard hits never take
  the lock. A compiled callable called inside a monitored program, on the monitoring thread,
  runs as plain code (the outer monitor run sees what it does). The tracer is per thread
  (``sys.settrace`` on 3.10/3.11; the 3.12+ ``sys.monitoring`` backend filters events by
  thread), so other threads' eager code is never monitored. A monitored program that waits on
  another thread that itself needs a monitor run deadlocks, as under torch.compile.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import torch

from . import _logging
from .adaptive import served
from .backends import CompiledGraphs, resolve
from .breaks import BreakCompile, BreakKind, BreakReason, SplitHere, internal_error, split_reason
from .cache import MISS, UNHELD, Record, RecordCache
from .check import CheckError, changed_reads, compare, divergence_message, evaluate, roots_of
from .compiled_module import CompiledCallable, ModuleStandIn
from .config import (
    CACHE_LIMIT,
    MAX_SPLIT_DEPTH,
    MAX_UNHELD,
    RECOMPILE_LIMIT,
    backend_caps,
    check_dynamic,
    check_mode,
    check_options,
    check_python,
)
from .continuation import drive, make_continuation, plain_continuation, split_matched_path
from .dynamic.merging import ArmLibrary
from .dynamic.other_side import wanted
from .guard_text import LazyWords
from .pipeline import Lifting, MonitorRun, Runner, RunOutcome, RunPlan, record_counts, uncompiled
from .report import Explanation, Stats, limit_reason, python_operations, served_explanation

log = logging.getLogger("magpy")
_guards_log = _logging.channel("guards")
_graph_log = _logging.channel("graph")
_recompiles_log = _logging.channel("recompiles")
_breaks_log = _logging.channel("breaks")
_mock_log = _logging.channel("mock")

# Every compiled callable, for reset(): weak references without callbacks (a WeakSet's callback
# could run, and be monitored, inside another callable's monitor run).
_ALL: dict[int, weakref.ref] = {}
# The thread whose monitor run is in progress (runs are serialised by _MONITOR_LOCK), or None.
# A compiled callable called from inside that run runs as plain code, for the outer run to see.
_MONITORING_THREAD: int | None = None
_get_ident = threading.get_ident
_MONITOR_LOCK = threading.RLock()   # held for every monitor run, in any thread (see the module docstring)
_EAGER = object()                   # "run the call eagerly", from a miss that could not be monitored


def _mark_monitoring(thread: int | None) -> None:
    """The thread whose monitor run is in progress (the run's start and end, magpy.pipeline)."""
    global _MONITORING_THREAD
    _MONITORING_THREAD = thread


class _Compiled(CompiledCallable):
    """What :class:`CompiledFunction` and :class:`CompiledModule` share: records, calls, stats."""

    _target: Any

    def _setup(self, target: Any, backend: Any = "inductor", profile: bool = False, cache_limit: int = CACHE_LIMIT,
               recompile_limit: int = RECOMPILE_LIMIT, dynamic: bool | None = None, check: Any = None,
               adaptive: bool = True) -> None:
        check_python()
        check = check_mode(check)   # (MAGPY_CHECK is read here, when compiling)
        check_dynamic(dynamic, backend)
        self._target = target
        self._runner = Runner(target)
        self._options = dict(backend=backend, profile=profile, cache_limit=cache_limit,
                             recompile_limit=recompile_limit, dynamic=dynamic, check=check or False, adaptive=adaptive)
        self._check = check   # None, "warn" or "raise" (magpy.check)
        self._check_said: set = set()   # records whose divergence was warned about (once each)
        self._name = getattr(self._runner.fn, "__qualname__", None) or type(target).__qualname__
        self._caps = backend_caps(backend)   # (explain's callable replaces its compile functions)
        self._lifts = Lifting(dynamic, self._caps.lifting)   # lifted shapes (magpy.monitor.scalars)
        self._cache = RecordCache(limit=cache_limit)
        self._arms = ArmLibrary()   # clean arms of branches on tensor values, across runs (magpy.dynamic.merging)
        self._no_other_sides = False   # (an other-side run recorded nothing: no more, magpy.dynamic.other_side)
        self._graphs = CompiledGraphs()   # regions and bodies compiled, shared by records (backends)
        self._continuations: dict = {}    # split point -> (step, compiled continuations) (magpy.splits)
        self._loops: dict = {}            # ... of the levels this continuation is nested in
        self._changing_assumptions: set = set()   # file:line where numbers passed to natives changed between records
        self._profile = profile
        self._fast = not profile and not check   # __call__ may go straight to the first record (see _give_up)
        self._stats = self._new_stats()
        self._eager_reason: str | None = None
        self._recompile_limit = recompile_limit
        self._guard_bug_warned = self._limit_said = False
        self._stopped = False    # no more monitor runs (a later run broke), the records keep serving
        self._retried = False    # the first call broke and the next one was monitored again
        self._split_depth = 0    # continuations this one is nested in (magpy.splits)
        self._explain_runs: list | None = None   # explain's throwaway callable: each run's RunOutcome
        for key in [k for k, r in _ALL.items() if r() is None]:
            del _ALL[key]
        _ALL[id(self)] = weakref.ref(self)

    def _new_stats(self) -> Stats:
        return Stats(matched_calls=0, guard_time_s=0.0, mock_time_s=0.0) if self._profile else Stats()

    # -- the hot path ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # The matched path of the most recently hit record, with as little around it as possible.
        run = self._cache.first
        if run is not None and self._fast and _MONITORING_THREAD is None:
            try:
                out = run(args, kwargs)
            except Exception:
                # The user's operators raised (as the eager call would): propagate, never re-run the
                # call, whose in-place updates before the failure must not happen twice.
                self._stats.guard_hits += 1   # the guard passed: a matched call that raised
                self._stats.mock_errors += 1
                raise
            if out is not MISS and out is not UNHELD:
                self._stats.guard_hits += 1
                return out
            if out is UNHELD:
                self._stats.unheld += 1
                return self._call(args, kwargs, run, [run])
            return self._call(args, kwargs, run, [])
        return self._call(args, kwargs, None, [])

    def _call(self, args: tuple, kwargs: dict, tried: Callable | None, unheld: list) -> Any:
        """Everything but a hit of the first record (whose ``run`` is ``tried``, if it ran).
        ``unheld``: the ``run`` of each record whose guard passed but whose speculation did not
        hold for this call (its graph ran: it is not tried again)."""
        if _MONITORING_THREAD is not None and _MONITORING_THREAD == _get_ident():
            # Called from a program that is being monitored: run as plain code, so the outer
            # monitor run sees (and compiles) what this function does.
            return self._target(*args, **kwargs)
        if self._check is not None:
            return self._check_call(args, kwargs)
        if self._eager_reason is not None:
            self._stats.fallbacks += 1
            return self._target(*args, **kwargs)
        if self._profile:
            t0 = time.perf_counter()
            found = self._lookup(args, kwargs, unheld)
            if found is not None:
                out = self._hit_profiled(found, t0)
                if out is not UNHELD:
                    return out
                unheld.append(found[0].run)
            return self._miss(args, kwargs, unheld, None)   # (the lookup stopped at the first guard passing)
        # Each record's fused guard + mock, most recently hit first.
        for i, rec in enumerate(records := self._cache.records):   # (a snapshot: replaced, never changed)
            if len(unheld) >= MAX_UNHELD and (self._limit_said or self._stopped):
                break   # past the recompile limit, speculative records whose values did not hold are
                #         tried no further: each costs a graph run, and the call then runs eagerly
            if rec.run is not tried:
                try:
                    out = rec.run(args, kwargs)
                except Exception:
                    self._stats.guard_hits += 1
                    self._stats.mock_errors += 1
                    raise
                if out is UNHELD:
                    self._stats.unheld += 1
                    unheld.append(rec.run)
                elif out is not MISS:
                    self._stats.guard_hits += 1
                    self._use(i, rec)
                    return out
            if rec.guard_bugs:
                self._guard_raised(rec, rec.guard_bugs.pop())
        return self._miss(args, kwargs, unheld, records)

    def _passing(self, args: tuple, kwargs: dict, unheld: list = ()):
        """``(position, record, fetched)`` of each record but ``unheld`` whose guard alone passes, most
        recently hit first, for the profiled path and check mode (the plain path runs guard and mock
        fused, :meth:`_call`); the caller promotes the one it uses (:meth:`_use`)."""
        for i, rec in enumerate(self._cache.records):   # a snapshot: other threads replace it, never change it
            if rec.run in unheld:
                continue
            try:
                fetched = rec.guard(args, kwargs)
            except Exception as e:   # guards return None on a miss: an exception is a MagPy bug
                self._guard_raised(rec, e)
                continue
            if fetched is not None:
                yield i, rec, fetched

    def _use(self, position: int, rec: Record) -> None:
        """``rec`` answers this call: the most recently hit record is tried first."""
        if position:
            self._cache.promote(rec)

    def _lookup(self, args: tuple, kwargs: dict, unheld: list = ()) -> tuple[Record, Any] | None:
        """(record, fetched) of the first record whose guard passes, or None."""
        for i, rec, fetched in self._passing(args, kwargs, unheld):
            self._use(i, rec)
            return rec, fetched
        return None

    def _hit(self, rec: Record, fetched: Any) -> Any:
        try:
            out = rec.mock(fetched)
        except Exception:
            # The user's operators raised (as the eager call would): propagate, never re-run the
            # call, whose in-place updates before the failure must not happen twice.
            self._stats.guard_hits += 1
            self._stats.mock_errors += 1
            raise
        if out is not UNHELD:
            self._stats.guard_hits += 1
        else:
            self._stats.unheld += 1
        return out

    def _hit_profiled(self, found: tuple[Record, Any], t0: float) -> Any:
        st = self._stats
        t1 = time.perf_counter()
        out = UNHELD
        try:
            out = self._hit(*found)
            return out
        finally:
            _sync()
            if out is not UNHELD:
                st.matched_calls += 1
                st.guard_time_s += t1 - t0
                st.mock_time_s += time.perf_counter() - t1

    def _guard_raised(self, rec: Record, e: Exception) -> None:
        if self._cache.remove(rec):
            self._stats.guard_errors += 1
            self._record_stats()
        if not self._guard_bug_warned:
            self._guard_bug_warned = True
            log.warning("magpy: a guard of %s raised %s: %s. This is a MagPy bug (please report it); the record "
                        "is dropped and the call goes on as a miss", self._name, type(e).__name__, e)
        else:
            log.debug("magpy: a guard of %s raised %s: %s", self._name, type(e).__name__, e)

    # -- check mode (magpy.check): eager answers, the record is evaluated beside it ------------------------
    def _check_call(self, args: tuple, kwargs: dict) -> Any:
        """A call in check mode: the program runs once, for real (eagerly, or as the monitor run of
        a miss); the record whose guard passes is evaluated on a sandbox before, and compared after."""
        st = self._stats
        if self._eager_reason is not None or self._runner.hooks_reason() is not None:
            st.fallbacks += 1
            return self._target(*args, **kwargs)
        found = None
        for i, rec, fetched in self._passing(args, kwargs):
            ev = evaluate(rec, fetched)
            if ev.unheld:
                st.unheld += 1   # (a speculative record whose values did not hold: the next one is tried)
                continue
            found = ev
            self._use(i, rec)
            break
        if found is None:
            return self._check_miss(args, kwargs)
        st.guard_hits += 1
        st.check_notes[:] = dict.fromkeys([*st.check_notes, *found.notes, *([found.skipped] if found.skipped else [])])
        if found.skipped is not None:
            return self._target(*args, **kwargs)
        rec = found.record
        suspects = changed_reads(rec, args, kwargs) if rec.reads else []   # (before eager changes them)
        roots = roots_of(self._target, self._runner.fn, self._runner.self_obj, args, kwargs)
        st.checks += 1
        try:
            result = self._target(*args, **kwargs)
        except Exception as e:
            differs = compare(found, e, None, self._caps.name, roots)
            if differs:
                self._check_report(rec, differs, suspects)
            raise
        differs = compare(found, None, result, self._caps.name, roots)
        st.check_notes[:] = dict.fromkeys([*st.check_notes, *found.notes])   # (and what the comparison left out)
        if differs:
            self._check_report(rec, differs, suspects)
        return result

    def _check_miss(self, args: tuple, kwargs: dict) -> Any:
        """No record's guard passed: the monitor run is this call's one real execution (it builds
        the record later calls are checked against), or the call runs eagerly."""
        st = self._stats
        with _MONITOR_LOCK:
            if self._eager_reason is None and not self._stopped:
                if st.monitor_runs < self._recompile_limit:
                    return self._monitored_call(args, kwargs)
                self._limit_reached()
        st.fallbacks += 1
        return self._target(*args, **kwargs)

    def _check_report(self, rec: Record, differs: str, suspects: list[str]) -> None:
        st = self._stats
        st.check_divergences += 1
        msg = divergence_message(self._name, rec, self._cache.records, differs, suspects)
        if len(st.check_reports) < 20:
            st.check_reports.append(msg)
        if self._check == "raise":
            raise CheckError(msg)
        if id(rec) not in self._check_said:   # (the first divergence of each record is warned)
            self._check_said.add(id(rec))
            import warnings
            warnings.warn(msg, CheckError, stacklevel=5)   # (the user's call)

    # -- a miss: monitor run, then a new record -----------------------------------------------------------
    def _miss(self, args, kwargs, unheld: list, tried: tuple | None):
        """No record answers the call. ``tried``: the records whose guards all ran for it, not tried
        again (a guard's read may run a lookup hook of the program's, which eager runs once)."""
        st = self._stats
        if self._runner.hooks_reason() is not None:
            # Hooks run only in the real call. Not a give-up: the next call without hooks compiles.
            st.fallbacks += 1
            return self._target(*args, **kwargs)
        with _MONITOR_LOCK:
            # While this thread waited, another may have built the record this call needs, or given up.
            while self._eager_reason is None:
                t0 = time.perf_counter()
                found = self._lookup(args, kwargs, unheld) if self._cache.records is not tried \
                    and (len(unheld) < MAX_UNHELD or not (self._limit_said or self._stopped)) else None
                if found is not None:
                    # (a hit under the lock: rare, a record built while this thread waited)
                    out = self._hit_profiled(found, t0) if self._profile else self._hit(*found)
                    if out is not UNHELD:
                        return out
                    unheld.append(found[0].run)
                    continue
                if self._stopped:
                    break
                if st.monitor_runs < self._recompile_limit:
                    return self._monitored_call(args, kwargs, sides_differ=bool(unheld))
                self._limit_reached()
                break
        st.fallbacks += 1
        return self._target(*args, **kwargs)

    def _monitored_call(self, args: tuple, kwargs: dict, sides_differ: bool = False) -> Any:
        """A miss below the recompile limit (caller holds ``_MONITOR_LOCK``): the monitor run is the
        call, or the call runs eagerly where no run could start (``sides_differ``: see RunPlan)."""
        self._stats.guard_misses += 1
        result = self._monitor_and_record(args, kwargs, sides_differ)
        return self._target(*args, **kwargs) if result is _EAGER else result

    def _limit_reached(self) -> None:
        """No more monitor runs: calls no record matches run eagerly, the records keep serving
        the calls they match. Said once, naming the guards that differ between the records
        (what kept changing: a shape, a Python number, an object)."""
        if self._limit_said:
            return
        self._limit_said = True
        reason = limit_reason(self._recompile_limit, self._cache.records)
        self._said(BreakReason(BreakKind.LIMIT, reason))
        log.warning("magpy: %s: %s", self._name, reason)

    def _monitor_and_record(self, args, kwargs, sides_differ: bool = False):
        """The monitor run (caller holds ``_MONITOR_LOCK``); returns its result, or _EAGER if none ran."""
        t0 = time.perf_counter()
        plan = RunPlan(caps=self._caps, arms=self._arms, split_ok=self._split_depth < MAX_SPLIT_DEPTH,
                       split_escapes=self._changing_assumptions, read_log=self._check is not None,
                       adaptive=self._options["adaptive"], sides_differ=sides_differ)
        try:
            lift = functools.partial(self._lifts.plan, self._lifts.cache or self._cache) if self._lifts.on else None
            run = self._runner.start(args, kwargs, lift, plan)
        except BreakCompile as e:
            self._give_up(BreakReason(BreakKind.UNSUPPORTED, e.reason))
            return _EAGER
        except TypeError:
            # The arguments do not bind to the function MagPy would monitor: the real call
            # decides (it raises the user's TypeError, or takes a path MagPy did not foresee).
            return _EAGER
        except Exception as e:   # a MagPy bug before the program ran: the calls run eagerly
            self._give_up(internal_error(e, "starting the monitor run"), internal=True)
            return _EAGER
        result = None
        try:
            result = self._monitored(run, args, kwargs, t0)
        except Exception as e:   # a MagPy bug once the program returned: its result stands (eager runs later)
            if run.returned is None:
                raise   # the program raised (or its continuation did), as the eager call does
            self._give_up(internal_error(e, "recording the monitor run"), internal=True)
            result = run.returned[0]
        finally:
            result = run.close(result)
        return result

    def _monitored(self, run: MonitorRun, args: tuple, kwargs: dict, t0: float) -> Any:
        """Run the program under ``run``, then keep the record made of it (or give up)."""
        st = self._stats
        st.monitor_runs += 1
        if st.monitor_runs > 1:
            _recompiles_log.info("recompiling %s: no record's guard passed (%d records)", self._name, len(self._cache))
        stopped = False
        try:
            result = run.run(args, kwargs, _mark_monitoring)
        except SplitHere:
            stopped = True
        if stopped:
            # The program stopped at a dynamic operation (magpy.splits): record the code before it,
            # then go on with the operation and the continuation (monitored in turn) from the values
            # the frames held, so the call returns what eager returns (outside the ``except``: the
            # program must not run while SplitHere is handled, ``sys.exc_info()`` would show it).
            self._ran(run.finish())
            values = run.resume_values()
            go = self._record_split(run, t0) or plain_continuation(run.split)
            return go(values)
        out = run.finish()
        self._ran(out)
        for line in out.log:
            _recompiles_log.info("%s: %s", self._name, line)
        if out.split is not None:
            # (a split the run went on eagerly past: the record is the code before it)
            self._record_split(run, t0)
            return result
        reason, gen = out.reason, out.gen
        t1 = time.perf_counter()
        st.analysis_time_s += t1 - t0
        if reason is not None and run.lifting_failed():
            # What failed may be the lifting itself: the next miss monitors with every size guarded.
            self._lifts.give_up()
            _recompiles_log.info("%s: lifted sizes given up (%s); sizes are guarded from now on", self._name, reason)
            return result
        if reason is not None:
            self._give_up(reason, internal=out.internal)
            return result
        try:
            record = run.record(gen, self._graphs)
        except Exception as e:
            self._give_up(BreakReason(BreakKind.BACKEND, f"backend {self._caps.name!r} failed to compile the graph: "
                                      f"{type(e).__name__}: {e}"), internal=True)
            return result
        st.backend_compile_time_s += time.perf_counter() - t1
        st.backend_compiles += record.regions if record.op_count else 0
        if not run.keep_arms(record, args, kwargs):
            # (arms of earlier runs whose outside state changed since: dropped; the next miss records anew)
            _recompiles_log.info("%s: a branch's other side relies on state that changed; its record is "
                                 "dropped and the next call is monitored again", self._name)
            return result
        self._note_changing_assumptions(record)
        self._cache.add_merged(record)
        if not self._no_other_sides and wanted(run.mon, run.plan, self._arms, st.other_side_runs):
            self._other_side(run, args, kwargs)
        self._record_stats()
        _guards_log.info("guards of record %d of %s:\n%s", st.records, self._name, LazyWords(record))
        _graph_log.info("graph of record %d of %s:\n%s", st.records, self._name, record.graph_module.code
                        if record.graph_module is not None else "(no tensor operations)")
        _mock_log.info("matched path (guard + mock) of record %d of %s:\n%s", st.records, self._name,
                       record.run_source)
        return result

    def _other_side(self, first: MonitorRun, args: tuple, kwargs: dict) -> None:
        """The other-side run after ``first`` (magpy.dynamic.other_side): its record, merging both
        sides of the branches, serves first. One that records nothing ends them for this callable."""
        st, t0 = self._stats, time.perf_counter()
        st.other_side_runs += 1
        record, said = self._runner.other_side(first, args, kwargs, _mark_monitoring, self._graphs)
        st.analysis_time_s += time.perf_counter() - t0   # (its backend compile included)
        _recompiles_log.info("%s: other-side run: %s", self._name, said)
        self._no_other_sides = record is None
        if record is not None:
            st.backend_compiles += record.regions if record.op_count else 0
            self._cache.add_merged(record)

    def _record_split(self, monitored: MonitorRun, t0: float) -> Callable | None:
        """The run was split at a dynamic operation (magpy.splits): a record of the code before it,
        whose matched path goes on with the operation and the compiled continuation (one per split
        point of this function, shared by the records that end there)."""
        st = self._stats
        split = monitored.split
        t1 = time.perf_counter()
        st.analysis_time_s += t1 - t0
        try:
            record = monitored.record(split.gen, self._graphs)
        except Exception as e:
            self._give_up(BreakReason(BreakKind.BACKEND, f"backend {self._caps.name!r} failed to compile the graph: "
                                      f"{type(e).__name__}: {e}"), internal=True)
            return None
        st.backend_compile_time_s += time.perf_counter() - t1
        st.backend_compiles += record.regions if record.op_count else 0
        # (a split point an enclosing level made, met again: a loop stepping an outside iterator)
        again = split.key not in self._continuations and split.key in self._loops
        found = self._loops[split.key] if again else self._continuations.get(split.key)
        if found is None:
            found = self._continuations[split.key] = make_continuation(split, self._compile_continuation)
            for cont in found[1:]:
                cont._loops = {**self._loops, split.key: found}
        step = found[0]

        def hit():
            self._stats.split_hits += 1   # (the caller counts the hit in guard_hits)

        run, mock = split_matched_path(self, step, record.run, record.mock, hit)
        record = dataclasses.replace(record, run=run, mock=mock, split=split.describe())
        self._cache.add(record)
        self._record_stats()
        if not again:   # (said where the split point was made)
            self._said(split_reason(split))
        _breaks_log.info("%s: %s", self._name, split.describe())
        _guards_log.info("guards of record %d of %s:\n%s", st.records, self._name, LazyWords(record))
        return lambda image: drive(step, image)

    def _note_changing_assumptions(self, record: Record) -> None:
        """Places where a number read from a tensor was passed to a native and assumed, with
        another value than a record already holds: speculating there keeps failing, so the next
        monitor run splits the call at that native instead (magpy.splits)."""
        mine = dict(record.assumed_at)
        for other in self._cache.records:
            for where, what in other.assumed_at:
                if where in mine and mine[where] != what:
                    self._changing_assumptions.add(where)

    def _compile_continuation(self, fn: Callable) -> CompiledFunction:
        """The code after a split point, compiled like this function (same options), one level deeper."""
        cont = CompiledFunction(fn, **self._options)
        cont._split_depth = self._split_depth + 1
        if self._explain_runs is not None:   # (explain's callable: its continuations report to it too)
            cont._explain_runs = self._explain_runs
            cont._caps = self._caps
        return cont

    def _record_stats(self) -> None:
        st, records = self._stats, self._cache.records
        st.records, (st.graph_count, st.loop_regions, st.conditionals) = len(records), record_counts(records)

    def _said(self, reason: BreakReason) -> None:
        """A break reason for :func:`stats`: typed in ``breaks``, its text in ``break_reasons``."""
        self._stats.breaks.append(reason)
        self._stats.break_reasons.append(str(reason))

    def _ran(self, out: RunOutcome) -> None:
        """After the stages that follow a monitor run: what :func:`stats` and :func:`explain` say of it."""
        if out.dynamic:
            self._stats.dynamic = True
        if self._explain_runs is not None:
            self._explain_runs.append(out)

    def _give_up(self, reason: BreakReason, internal: bool = False) -> None:
        """From now on every call runs eagerly (counted as a fallback, see :class:`Stats`); if
        records exist (a later path of the program broke: a tensor operation that raised inside
        ``try``, a print to a file on the other side of a branch), they keep serving the calls
        they match and only the others run eagerly, without further monitor runs."""
        if not internal and not self._cache.records and self._stats.monitor_runs == 1 and not self._retried:
            # The first call may have been the special one (a data-aware initialisation, a cache filled
            # on first use, a warm-up branch): the next call is monitored once more; a second break gives up.
            self._retried = True
            self._said(reason)
            _breaks_log.info("graph break in %s: %s (the next call is monitored again)", self._name, reason)
            return
        if self._cache.records and not internal:
            self._stopped = True
            self._said(reason)
            _breaks_log.info("graph break in %s: %s (its %d records are still used)", self._name, reason,
                             len(self._cache.records))
            return
        self._eager_reason = reason
        self._fast = False
        self._said(reason)
        if internal:
            log.warning("magpy: %s; %s runs eagerly", reason, self._name)
        else:
            _breaks_log.info("graph break in %s: %s", self._name, reason)

    # -- introspection ------------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._cache.clear()
        self._arms.clear()
        self._graphs.clear()
        self._continuations, self._loops = {}, {}
        self._changing_assumptions = set()
        self._lifts.reset()
        self._eager_reason = None
        self._fast = not self._profile and not self._check
        self._limit_said = False
        self._stopped = False
        self._retried = False
        self._guard_bug_warned = False
        self._stats = self._new_stats()


class CompiledFunction(_Compiled):
    """The callable :func:`compile` returns for a function (see :class:`CompiledModule` for modules)."""

    def __init__(self, target: Any, backend: Any = "inductor", profile: bool = False, cache_limit: int = CACHE_LIMIT,
                 recompile_limit: int = RECOMPILE_LIMIT, dynamic: bool | None = None, check: Any = None,
                 adaptive: bool = True):
        self._setup(target, backend, profile, cache_limit, recompile_limit, dynamic, check, adaptive)
        functools.update_wrapper(self, self._runner.fn, updated=())


class CompiledModule(_Compiled, ModuleStandIn):
    """A compiled ``nn.Module``: calls go through MagPy, everything else reaches the original module.

    It is an ``nn.Module`` standing in for the original (``cm._orig_mod``) in a module tree
    (:class:`magpy.compiled_module.ModuleStandIn`: its parameters, buffers, submodules, hooks,
    attributes and methods are the original's; ``forward`` is the original's eager ``forward``;
    copying or pickling compiles a copy of the original afresh).
    """

    def __init__(self, target: torch.nn.Module, backend: Any = "inductor", profile: bool = False,
                 cache_limit: int = CACHE_LIMIT, recompile_limit: int = RECOMPILE_LIMIT, dynamic: bool | None = None,
                 check: Any = None, adaptive: bool = True):
        # nn.Module.__init__ is not called: it would give the wrapper tables of its own.
        object.__setattr__(self, "_orig_mod", target)
        self._setup(target, backend, profile, cache_limit, recompile_limit, dynamic, check, adaptive)

    __call__ = _Compiled.__call__


def compile(target: Any, backend: Any = "inductor", **options: Any) -> CompiledFunction | CompiledModule:  # noqa: A001
    """Compile ``target`` (function or ``nn.Module``) with MagPy.

    ``backend``: ``"eager"``, ``"inductor"``, ``"torchscript"``, ``"xla"``, any torch.compile
    backend name, or a callable ``(gm, example_inputs) -> callable``.
    Options: ``profile=True`` times guard and mock of matched calls (see :func:`stats`);
    ``cache_limit`` bounds the records kept per function; after ``recompile_limit`` monitor
    runs the function runs eagerly, with a warning (values that change every call need lifting).
    A module compiles to a :class:`CompiledModule`, an ``nn.Module`` that stands in for it.

    ``check=True`` (or ``MAGPY_CHECK=1`` in the environment when compiling; ``check=False``
    overrides it) is *check mode*, for trusting MagPy on your program before switching it on:
    every call runs the real program eagerly (what you see is exactly eager's, and it runs once
    per call: on a miss, the monitor run is that one run), and the record whose guard passes is
    evaluated beside it on a deep copy of the state it reads and writes (its graph on copied
    inputs, its return value, its planned writes; prints and logging silenced, random generators
    put back). Its return value and the copies' state are compared with what eager returned and
    the state eager left (tensors with a tolerance suited to the backend). A difference is
    warned (:class:`magpy.CheckError`, once per record) naming the record, the value read from
    outside whose guard should have failed (with the file:line that read it) and what differed;
    ``check="raise"`` (or ``MAGPY_CHECK=raise``) raises it instead, after the eager call ran.
    :func:`stats` counts ``checks`` and ``check_divergences`` and keeps ``check_reports`` and
    ``check_notes`` (parts not compared: what a record prints, a split record's continuation,
    state that could not be copied). Check mode is slow (a deep copy per call).

    ``adaptive=True`` (the default): a record times its compiled graph against the same graph run eagerly on
    its first matched calls and serves the faster (:mod:`magpy.adaptive`); ``False`` serves the compiled one.
    """
    check_options(options)
    if not callable(target):
        raise TypeError(f"magpy.compile expects a function or torch.nn.Module, got {type(target).__name__}")
    resolve(backend)   # raises BackendError for an unknown backend
    if isinstance(target, _Compiled):
        target = target._target   # compiling a compiled callable compiles what it compiles, afresh
    cls = CompiledModule if isinstance(target, torch.nn.Module) else CompiledFunction
    return cls(target, backend=backend, **options)


def explain(target: Any) -> Callable[..., Explanation]:
    """``explain(f)(*args, **kwargs)`` runs ``f`` once, as the first call of ``magpy.compile(f)``
    runs it, and reports what that call records: the same monitor run, splits and continuations
    (monitored in the same call), merged branches, rolled loops and generated code
    (:mod:`magpy.pipeline`), so ``graph_count``, ``splits`` and ``dynamic`` are what
    :func:`stats` says after that call. Graphs are not handed to the backend (the backend
    decides only how each graph runs, not what is recorded).

    A compiled callable's call that a record's guard alone decides is told from that record (what
    the call runs, counted as :func:`stats` counts it); any other call through what it compiles, with its
    options and the branch arms its earlier runs saw, as its next miss would record it; it is not changed.
    While hooks that make calls run eagerly are registered, nothing runs and that is the break reason.
    """
    check_python()
    if not callable(target):
        raise TypeError(f"magpy.explain expects a function or torch.nn.Module, got {type(target).__name__}")
    options: dict = {"backend": "eager"}
    arms = lifts = None
    compiled = target if isinstance(target, _Compiled) else None
    if compiled is not None:
        options = {k: v for k, v in target._options.items() if k not in ("profile", "check", "adaptive")}
        arms, lifts = target._arms, (target._lifts, target._cache)
        target = target._target
    runner = Runner(target)

    def run(*args, **kwargs) -> Explanation:
        reason = runner.hooks_reason()
        if reason is not None:
            return Explanation(graph_count=0, break_reasons=[str(BreakReason(BreakKind.HOOKS, reason))], guards="",
                               op_count=0, dynamic=False)
        if compiled is not None and (served := compiled._cache.deciding(args, kwargs)) is not None:
            return served_explanation(served, record_counts([served]), stats(compiled).graphs_served)
        cls = CompiledModule if isinstance(target, torch.nn.Module) else CompiledFunction
        probe = cls(target, **options, check=False, adaptive=False)
        probe._explain_runs = []
        probe._caps = dataclasses.replace(probe._caps, compile_graph=uncompiled, compile_lifted=uncompiled)
        if arms is not None:   # (the branch arms and lifted sizes the compiled callable would plan with)
            probe._arms, probe._lifts = arms.copy(), lifts[0].planning_copy(lifts[1])
        probe(*args, **kwargs)
        return _explanation(probe, compiled)

    return run


def _explanation(probe: _Compiled, compiled: _Compiled | None) -> Explanation:
    """What the one call of explain's callable recorded, from its stats, records and runs (and
    what ``compiled``'s records serve)."""
    st = stats(probe)
    levels = [probe]
    for c in levels:   # (the continuations, every level of nesting, in the order they were made)
        levels += [cont for _, *conts in c._continuations.values() for cont in conts]
    breaks = [b for c in levels for b in c._stats.breaks]
    said = {str(b) for b in breaks}
    breaks += [o.reason for o in probe._explain_runs if o.reason is not None and str(o.reason) not in said]
    recs = [r for c in levels for r in c._cache.records]
    top = probe._cache.records[0] if probe._cache.records else None
    guards = top.guards_text if top is not None else ""
    for c in levels[1:]:
        for r in c._cache.records:
            guards += f"\nafter the split, in {c._name}:\n" + "\n".join("  " + g for g in r.guards_text.splitlines())
    splits = [s for r in recs for s in python_operations(r.graph_module)]
    splits += [str(b) for b in breaks if b.kind is BreakKind.SPLIT]
    runs = probe._explain_runs
    return Explanation(graph_count=st.graph_count, break_reasons=[str(b) for b in breaks if b.kind is not BreakKind.SPLIT],
                       guards=guards, op_count=sum(o.op_count for o in runs), dynamic=st.dynamic,
                       graph=top.graph_module if top is not None else None,
                       assumptions=[a for o in runs for a in o.assumptions], splits=splits,
                       branches=[b for o in runs for b in o.branches], loops=[lp for o in runs for lp in o.loops],
                       breaks=breaks, split_count=st.splits, loop_regions=st.loop_regions, conditionals=st.conditionals,
                       graphs_served=stats(compiled).graphs_served if compiled is not None else [])


def stats(compiled: CompiledFunction | CompiledModule) -> Stats:
    """A snapshot of a compiled callable's counters: monitor runs, guard hits/misses, fallbacks, times."""
    if not isinstance(compiled, _Compiled):
        raise TypeError("magpy.stats expects what magpy.compile returned")
    st = compiled._stats
    snap = dataclasses.replace(st, break_reasons=list(st.break_reasons), check_reports=list(st.check_reports),
                               check_notes=list(st.check_notes), breaks=list(st.breaks),   # a snapshot, not live counters
                               graphs_served=served(compiled._cache.records))
    snap.splits += len(compiled._continuations)   # (split points; a loop's step has two continuations)
    for cont in [c for _, *conts in compiled._continuations.values() for c in conts]:
        sub = stats(cont)
        snap.splits += sub.splits
        snap.graph_count += sub.graph_count
        snap.loop_regions, snap.conditionals = snap.loop_regions + sub.loop_regions, snap.conditionals + sub.conditionals
        snap.backend_compiles += sub.backend_compiles
        snap.resumed_monitor_runs += sub.monitor_runs + sub.resumed_monitor_runs
        snap.resumed_guard_hits += sub.guard_hits + sub.resumed_guard_hits
        snap.resumed_fallbacks += sub.fallbacks + sub.resumed_fallbacks
        snap.dynamic = snap.dynamic or sub.dynamic
        snap.graphs_served += [f"after the split, in {cont._name}: {line}" for line in sub.graphs_served]
    return snap


def records(compiled: CompiledFunction | CompiledModule) -> tuple[Record, ...]:
    """The records of a compiled callable, most recently hit first: each with its guard, its
    matched path (``run``), its operator graph and ``graph_inputs`` (what the matched path hands
    the compiled graph, for timing the bare graph as benchmarks/overhead.py does)."""
    if not isinstance(compiled, _Compiled):
        raise TypeError("magpy.records expects what magpy.compile returned")
    return tuple(compiled._cache.records)


def reset() -> None:
    """Drop every record of every compiled callable in this process."""
    for r in list(_ALL.values()):
        c = r()
        if c is not None:
            c._reset()


def _sync() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
