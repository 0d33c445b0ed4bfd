"""The miss path: monitor run -> merge branches -> roll loops -> codegen -> backend -> Record,
shared by ``compile`` and ``explain`` (so they cannot disagree).

A compiled callable (:mod:`magpy.api`) misses; its :class:`Runner` starts a :class:`MonitorRun`
for the call (the program's function, its parameters' sources, the run's switches from a
:class:`RunPlan`), runs the program once under it, and turns what the run saw into a
:class:`magpy.cache.Record`. Apart from the passes it calls (branches, loops, codegen), this
module is the only reader of the Monitor's fields (the place a frozen trace of the run replaces
them); the compiled callable decides what to do with the outcome (give up, split, keep the record).

A monitor run (:mod:`magpy.monitor`) ends in one of three ways: it split the call at a dynamic
operation (:mod:`magpy.splits`: the record is the code before it), it broke (the call runs on
eagerly, with a reason), or it finished. A finished run goes through

    merge branches (magpy.dynamic.merging) -> roll loops (magpy.dynamic.rolling) -> generate (magpy.codegen)

each of which may still break; a MagPy bug in any of them is an internal error
(:func:`magpy.breaks.internal_error`), never a crash of the user's call. :func:`finish_run` does
all of that and returns a :class:`RunOutcome`; :meth:`MonitorRun.record` hands the generated
code's graph to the backend (:class:`magpy.config.BackendCaps`). The record cache stays with
the compiled callable.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import gc
import logging
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from . import capture
from .adaptive import GraphChoice, eager_twin
from .backends import compile_regions
from .breaks import BreakCompile, BreakKind, BreakReason, internal_error, split_reason
from .cache import Record
from .codegen import generate
from .config import BackendCaps
from .dynamic import WATCHERS
from .dynamic.cond import as_torch_cond
from .dynamic.merging import ArmLibrary, check_merged, describe_branches, keep_arms, merge_branches
from .dynamic.nodes import Conditional, RolledLoop
from .dynamic.other_side import OtherSides, OtherSideStop
from .dynamic.rolling import roll_loops
from .global_state import active_mode, global_hooks_present, saved_tensor_hooks_active
from .graph import Unsupported
from .guards import ValueGuard
from .lifted import delift
from .monitor import Monitor, RunSwitches, bind_parameters, call_with_hooks, guard_entry
from .objmodel import is_instance
from .source import ItemSource, peek_value
from .splits import take_split
from .trace import Trace, run_reason

_log = logging.getLogger("magpy")


@dataclass
class RunOutcome:
    """What the stages after one monitor run made of it.

    Exactly one of: ``split`` (the run split at a dynamic operation; ``gen`` is the code before
    it), ``reason`` (a break: no record), or ``gen`` alone (a record of the whole call).
    ``internal``: the callable gives up at once, with a warning (a MagPy bug the next run would
    meet again). ``log``: lines for the recompiles log (branches merged, loops rolled).
    ``dynamic``: the run saw behaviour that follows tensor values. ``op_count``, ``assumptions``
    and ``branches`` are read from the run before its monitor is released (for ``explain``).
    ``trace``: the run as the stages after it saw it (:class:`magpy.trace.Trace`), what the record
    is built from."""

    gen: Any = None
    split: Any = None
    reason: BreakReason | None = None
    internal: bool = False
    dynamic: bool = False
    op_count: int = 0
    assumptions: list = field(default_factory=list)
    branches: list = field(default_factory=list)
    loops: list = field(default_factory=list)
    log: list = field(default_factory=list)
    trace: Trace | None = field(default=None, repr=False)

    @property
    def split_reason(self) -> BreakReason | None:
        return split_reason(self.split) if self.split is not None else None


def finish_run(mon: Any, shape: Any, arms: ArmLibrary) -> RunOutcome:
    """The stages after a monitor run (see the module docstring), with their error handling."""
    out = RunOutcome(dynamic=bool(mon.dynamic))
    if mon.split is not None:
        # (the run stopped at the split, or went on eagerly past it: the record is the code before it)
        out.split, out.gen = mon.split, mon.split.gen
        return _described(mon, out)
    reason = run_reason(mon)
    internal = bool(reason is not None and mon.internal_break)
    if reason is not None and mon.split_note is not None:
        reason = dataclasses.replace(reason, note=mon.split_note)
    if reason is None and (mon.branch_watcher.branch_spans or mon.branch_watcher.branch_notes):
        # Branches whose other side an earlier run saw become conditional nodes (magpy.dynamic.merging).
        try:
            out.log += merge_branches(mon, arms)
        except Exception as e:
            reason = internal_error(e, "merging a branch")
            internal = mon.internal_break = True
    if reason is None and mon.loop_watcher.loops:
        # Counted loops whose iterations repeat become one loop node (magpy.dynamic.rolling). A failure past
        # its checks is not a give-up: lifting is given up (magpy.api), and the next miss records
        # the loop unrolled, with its sizes guarded.
        try:
            out.log += roll_loops(mon)
        except Exception as e:
            reason = internal_error(e, "rolling a loop")
    if reason is None:
        try:
            out.trace = Trace.of(mon)   # (after the passes above, which rewrite the run)
            out.gen = generate(out.trace, shape, None)
        except Unsupported as e:
            reason = BreakReason(BreakKind.UNSUPPORTED, str(e))
        except Exception as e:
            reason = internal_error(e)
            internal = mon.internal_break = True
    out.reason, out.internal = reason, internal
    if reason is not None:
        out.gen = None
    return _described(mon, out)


def record_counts(records: Any) -> tuple[int, int, int]:
    """(graphs, rolled loops, conditionals) of ``records``: the compiled graphs they run, and the
    :class:`RolledLoop` and :class:`Conditional` nodes in their graphs (what :func:`magpy.stats`
    and :func:`magpy.explain` both count)."""
    targets = [n.target for r in records if r.graph_module is not None for n in r.graph_module.graph.nodes
               if n.op == "call_function"]
    return (sum(r.regions for r in records if r.op_count), sum(isinstance(t, RolledLoop) for t in targets),
            sum(isinstance(t, Conditional) or t is torch.ops.higher_order.cond for t in targets))   # (torch.cond: magpy.dynamic.cond)


def uncompiled(gm: Any, example_inputs: list) -> Any:
    """explain's backend: the graph as it is (what is recorded does not depend on the backend)."""
    return gm.forward


def _described(mon: Any, out: RunOutcome) -> RunOutcome:
    if out.trace is None:
        out.trace = Trace.of(mon)
    trace = out.trace
    out.op_count = trace.graph.op_count
    out.assumptions = list(trace.assumption_lines)
    out.loops = list(trace.loop_report)   # (roll_loops said what became of each counted loop)
    if trace.branch_report is not None:   # (merge_branches said what became of each branch)
        out.branches = list(trace.branch_report)
    elif mon.branch_watcher.branch_spans or mon.branch_watcher.branch_notes:
        out.branches = describe_branches(mon)
    return out


def top_function(target: Any) -> tuple[Any, Any]:
    """(function whose frame is monitored, bound self or None).

    For a module whose class overrides ``__call__`` with a Python function (outside torch),
    that ``__call__`` is the program: ``module(x)`` runs it, not just ``forward``.
    """
    if isinstance(target, torch.nn.Module):
        call = type(target).__call__
        if call is not torch.nn.Module.__call__:
            # Any other __call__ is what `module(x)` runs (a user's, or a library base class's
            # such as torch.distributions.Transform.__call__ before Module in the MRO).
            if isinstance(call, types.FunctionType):
                return call, target
            raise TypeError(f"magpy.compile: {type(target).__name__}.__call__ is not a Python function")
        if target._forward_hooks or target._forward_pre_hooks or isinstance(target, torch.jit.ScriptModule):
            # (a scripted module's forward is compiled code: monitored from its Module.__call__)
            return call_with_hooks, target
        fwd = target.forward
        if isinstance(fwd, types.MethodType) and isinstance(fwd.__func__, types.FunctionType):
            return fwd.__func__, target
        if isinstance(fwd, types.FunctionType):   # an instance attribute: nn.Module calls it unbound
            return fwd, None
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


@dataclass
class RunPlan:
    """What the compiled callable decides for one monitor run: its backend's capabilities, the
    branch arms of its earlier runs, whether a dynamic operation may split the call (below the
    nesting limit of continuations), the places where numbers passed to natives kept changing
    (a split there instead of an assumption, magpy.splits) and whether the run logs where it
    read what (check mode)."""

    caps: BackendCaps
    arms: ArmLibrary
    split_ok: bool
    split_escapes: set
    read_log: bool
    adaptive: bool = False   # records time their compiled graph against the eager one (magpy.adaptive)
    sides_differ: bool = False   # the miss came after a record's branch side did not hold (magpy.dynamic.other_side)


class Runner:
    """What a compiled callable monitors: its target's function (looked up again on every miss
    of a module, whose class or forward may change) and the runs of it."""

    def __init__(self, target: Any):
        self.target = target
        self.is_module = isinstance(target, torch.nn.Module)
        try:
            self.fn, self.self_obj = top_function(target)
        except TypeError:
            if not self.is_module:
                raise
            # A module whose call is not Python (a TorchScript module): compiling it is allowed,
            # its calls run eagerly with the reason (start() asks again on every miss).
            self.fn, self.self_obj = None, None

    def hooks_reason(self) -> str | None:
        """Why a call now must run eagerly, through the real call, to run its hooks; None if it need not."""
        if self.is_module and (self.target._backward_hooks or self.target._backward_pre_hooks):
            return "the compiled module has backward hooks: calls run eagerly while it has them"
        if global_hooks_present():
            return "global module hooks are registered: calls run eagerly while they are"
        mode = active_mode()
        if mode is not None:
            return f"a torch function or dispatch mode ({mode}) is active: calls run eagerly inside it"
        if saved_tensor_hooks_active():
            # (a record made outside them still serves hits, unless it speculates: its mock
            # declines to run the graph under them, see codegen.speculation)
            return "saved-tensor hooks are active with grad mode on: calls run eagerly inside them"
        if torch.is_inference_mode_enabled():
            # (inference tensors keep no version counter: in-place changes could not be seen)
            return "torch.inference_mode is on: calls run eagerly inside it (records serve the calls outside it)"
        return None

    def start(self, args: tuple, kwargs: dict, lift: Callable | None, plan: RunPlan) -> MonitorRun:
        """A monitor run for this call. Raises BreakCompile (or the call's TypeError).
        ``lift(sources, values)``: what to lift (:meth:`Lifting.plan`), given the parameters."""
        if self.is_module:
            # What ``module(x)`` runs now: its class (or its forward) may have changed since compile.
            try:
                self.fn, self.self_obj = top_function(self.target)
            except TypeError as e:
                raise BreakCompile(str(e)) from None
        sources, values, shape = bind_parameters(self.fn, self.self_obj, args, kwargs)
        lifted, lifted_values = lift(sources, values) if lift is not None else (None, frozenset())
        switches = RunSwitches(
            uses_modules=self.is_module,
            # a dynamic operation at a call may split the call (magpy.splits), up to a nesting depth
            split_shape=shape if plan.split_ok else None, abort_at_split=True,
            split_escapes=frozenset(plan.split_escapes),
            redraw_ok=plan.caps.lifting,   # (draws are graph inputs that change)
            float_inputs_ok=plan.caps.eager, raising_ok=plan.caps.eager, eager_graph=plan.caps.eager,
            branch_library=plan.arms, read_log=plan.read_log, watchers=WATCHERS, take_split=take_split)
        mon = Monitor(self.fn.__code__, sources, values, self.fn.__closure__, lifted=lifted,
                      lifted_values=lifted_values, switches=switches)
        guard_entry(mon, self.target, self.fn, self.self_obj)
        return MonitorRun(mon, shape, plan, self.fn, self.self_obj)

    def other_side(self, first: MonitorRun, args: tuple, kwargs: dict, mark: Callable[[int | None], None],
                   graphs: Any) -> tuple[Record | None, str]:
        """The other-side run after ``first`` (:mod:`magpy.dynamic.other_side`): the program
        again on the same arguments, taking the sides of its branches the arm library lacks.
        Returns (its record, or None, and what happened in words). Its result is dropped, and
        what it raised; it leaves nothing behind (the module's docstring says how)."""
        plan = dataclasses.replace(first.plan, split_ok=False, read_log=False)
        try:
            run = self.start(args, kwargs, None, plan)
        except Exception as e:   # noqa: BLE001 - (as for a miss: no run could start)
            return None, f"not run ({type(e).__name__}: {e})"
        sides = run.mon.other_sides = OtherSides(first.mon.graph.op_count)
        try:
            try:
                run.run(args, kwargs, mark)
            except OtherSideStop:
                return None, f"stopped: {sides.stopped}"
            except Exception as e:   # noqa: BLE001 - the other side raised: nothing to record
                return None, f"the program raised {type(e).__name__} on the other sides"
            finally:
                sides.restore()
            if not sides.flipped:
                return None, "no branch took its other side"
            out = run.finish()
            if out.reason is not None or out.split is not None:
                return None, f"no record: {out.reason or 'split'}"
            if not any(key in sides.flipped_keys for key, _ in run.mon.branch_watcher.merged):
                return None, f"none of the {sides.flipped} branches that took their other side became a conditional"
            record = run.record(out.gen, graphs)
            if not run.keep_arms(record, args, kwargs):
                return None, "its record does not hold for the call"
            return record, f"{sides.flipped} branches took their other side"
        finally:
            run.close(None)


class MonitorRun:
    """One monitor run of a miss and the stages after it, up to the Record (what the compiled
    callable asks of the run, instead of reading the Monitor's fields). :meth:`close` ends it,
    also when the program raised."""

    def __init__(self, mon: Monitor, shape: Any, plan: RunPlan, fn: Any, self_obj: Any):
        self.mon, self.shape, self.plan, self.fn, self.self_obj = mon, shape, plan, fn, self_obj
        self.trace: Trace | None = None   # the run as the stages after it saw it (set by finish)
        self.returned: tuple | None = None   # (result,) once the program returned (not split, not raised)

    def run(self, args: tuple, kwargs: dict, mark: Callable[[int | None], None]) -> Any:
        """Run the program once under monitoring; the caller holds the monitor lock. Returns its
        result (raises SplitHere where the run split the call). ``mark(thread)``: the monitoring
        thread for the compiled callables' hot path (None once the run is over)."""
        mon = self.mon
        # No cyclic GC during the run: finalizers and weakref callbacks of unrelated objects
        # would run (and be monitored) as if the program called them.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        capture.start(mon)
        mark(threading.get_ident())
        try:
            if self.self_obj is not None:
                result = self.fn(self.self_obj, *args, **kwargs)
            else:
                result = self.fn(*args, **kwargs)
            mon.after_call()
        finally:
            capture.stop()
            mark(None)
            if gc_was_enabled:
                gc.enable()
        if mon.broken is None and not mon.finished:
            mon.break_reason = BreakReason(BreakKind.UNSUPPORTED, "the monitor run did not observe the function's return")
            mon.broken = str(mon.break_reason)
        self.returned = (result,)
        return result

    def finish(self) -> RunOutcome:
        """The stages after the run (:func:`finish_run`)."""
        out = finish_run(self.mon, self.shape, self.plan.arms)
        self.trace = out.trace
        return out

    @property
    def split(self) -> Any:
        """The split point the run split the call at (magpy.splits), or None."""
        return self.mon.split

    def resume_values(self) -> list:
        """The values the frames held at the split, for the continuation (plain ints: the rest of
        the call is not this run's)."""
        mon = self.mon
        values = [delift(v) for v in mon.split_values]
        mon.split_values = None
        if mon.made_lifted_ints():
            mon.delift_outside(None)   # (what the program wrote outside so far: plain ints for the rest)
        return values

    def lifting_failed(self) -> bool:
        """Whether a break of this run may be the lifting itself (sizes or numbers lifted, and no
        dynamic behaviour that would break with sizes guarded too)."""
        mon = self.mon
        return bool((mon.lifted_dims or mon.lifted_value_nodes) and (not mon.dynamic or mon.split_wants_fixed_sizes))

    def record(self, gen: Any, graphs: Any) -> Record:
        """The Record of the generated code ``gen``, its graph compiled by the backend
        (regions and rolled bodies shared through ``graphs``, a :class:`magpy.backends.CompiledGraphs`)."""
        trace, caps = self.trace, self.plan.caps
        outputs = gen.graph_output_nodes
        gm = None
        compiled = None
        choice = None
        regions = 1
        if outputs or trace.graph.op_count:
            gm = trace.graph.finish(outputs)
            example = [t for _, t in trace.graph.inputs]
            # (the eager graph, before the backend may rewrite gm: what the record may serve instead)
            twin = eager_twin(gm) if self.plan.adaptive and not caps.eager else None
            if trace.follows_changing_numbers:
                compile_fn = caps.compile_lifted
            else:
                compile_fn = caps.compile_graph
            whole = as_torch_cond(gm, example) if caps.compile_cond is not None and caps.regions(gm) \
                and not trace.follows_changing_numbers else None
            if whole is not None and not caps.regions(whole):
                # conditional nodes as torch.cond: one graph, compiled whole (else regions, below)
                try:
                    compiled, gm = caps.compile_cond(whole, example), whole
                except Exception as e:   # noqa: BLE001 - the backend refused it: the regions below
                    _log.info("magpy: the graph with torch.cond was not compiled (%s: %s); compiling regions",
                              type(e).__name__, " ".join(str(e).split())[:300])
            if compiled is not None:
                regions = 1
            elif caps.regions(gm):
                # numpy nodes run in Python between compiled regions (only eager runs them in its graph)
                compiled, regions = compile_regions(gm, example, compile_fn, caps.compile_graph, graphs)
            else:
                compiled = compile_fn(gm, example)
                # a rolled loop's body (magpy.dynamic.rolling) runs as a graph of its own
                regions += len({n.target.body.code for n in gm.graph.nodes if isinstance(n.target, RolledLoop)})
                # ... and so do the arms of a conditional (magpy.dynamic.merging) that compute something
                regions += len({b.code for n in gm.graph.nodes if isinstance(n.target, Conditional)
                                for b in n.target.bodies()})
            if twin is not None:
                compiled = choice = GraphChoice(compiled, twin, caps.name)
        mock, run, bugs, inputs = gen.mock_factory(compiled)
        if choice is not None:
            choice.serve_through(mock, run)
        return Record(make_guard=gen.make_guard, mock=mock, run=run, guard_bugs=bugs, inputs=inputs, graph_module=gm,
                      compiled_graph=compiled, readable=gen.readable, guard_source=gen.guard_source,
                      mock_source=gen.mock_source, run_source=gen.run_source, op_count=trace.graph.op_count,
                      assumptions=tuple(_without_location(a) for a in trace.assumption_lines),
                      assumed_at=tuple(zip(trace.assumed_at, map(_without_location, trace.assumption_lines))),
                      arg_shapes=shapes_of(arg_tensors(trace.param_sources, trace.param_values)),
                      int_values={g.source.describe(): g.value for g in trace.guards
                                  if type(g) is ValueGuard and type(g.value) in (int, float)},
                      int_sources={g.source.describe(): g.source for g in trace.guards
                                   if type(g) is ValueGuard and type(g.value) in (int, float)},
                      lifted={str(s.describe()): sorted(d) for s, d in trace.lifted_dims.items()}, regions=regions,
                      loops=trace.loop_report, reads=trace.read_log, branches=trace.branch_report or (),
                      choice=choice, declines_after_guard=gen.declines_after_guard)

    def keep_arms(self, record: Record, args: tuple, kwargs: dict) -> bool:
        """After the record was built: whether it holds for the call just run (the arms merged into
        it from earlier runs may rely on state that changed since: then they are dropped, and
        False); if it holds, this run's clean arms are kept for later runs (magpy.dynamic.merging)."""
        if not check_merged(self.mon, self.plan.arms, record, args, kwargs):
            return False
        keep_arms(self.mon, self.plan.arms)
        return True

    def close(self, result: Any) -> Any:
        """End the run: sizes it followed as LiftedInts go back to plain ints wherever the program
        left them outside the call (after the record was built from them), also when it raised.
        Returns ``result`` with them delifted."""
        mon = self.mon
        if mon.made_lifted_ints():
            result = mon.delift_outside(result)
        mon.release()
        return result


def arg_tensors(sources: dict, values: dict) -> dict[str, tuple]:
    """The tensor arguments of a call, directly or one level inside ``*args``/``**kwargs`` (or a
    tuple, list or dict argument): ``{description: (source, tensor)}``."""
    found = {}
    for name, v in values.items():
        src = sources[name]
        if is_instance(v, torch.Tensor):
            found[src.describe()] = (src, v)
        elif type(v) in (tuple, list):
            for i, e in enumerate(v):
                if is_instance(e, torch.Tensor):
                    s = ItemSource(src, i)
                    found[s.describe()] = (s, e)
        elif type(v) is dict:
            for k, e in v.items():
                if is_instance(e, torch.Tensor) and type(k) is str:
                    s = ItemSource(src, k)
                    found[s.describe()] = (s, e)
    return found


def shapes_of(tensors: dict) -> dict[str, tuple]:
    """Shapes of :func:`arg_tensors`' tensors (read without running a subclass's ``__torch_function__``)."""
    with torch._C.DisableTorchFunctionSubclass():
        return {k: tuple(t.shape) for k, (_, t) in tensors.items()}


def _without_location(assumption: str) -> str:
    return assumption.rsplit(" (", 1)[0]


def _changed(a: Any, b: Any) -> bool:
    """Did a guarded number change (NaN != NaN: a NaN both saw did not)?"""
    return a != b and not (a != a and b != b)


class Lifting:
    """Lifted shapes (magpy.monitor.scalars): the sizes of tensor arguments, and the ints read from
    outside, that a monitor run follows as graph inputs instead of guarding them.

    ``dynamic=None`` lifts a dimension once two calls differed in its size (as TorchDynamo's
    automatic dynamic shapes do); True lifts every dimension of every tensor argument; False,
    or a backend that compiles for the example sizes only, lifts nothing."""

    def __init__(self, dynamic: bool | None, backend_lifts: bool):
        self.dynamic = dynamic
        self.possible = dynamic is not False and backend_lifts
        self.cache = None   # the records to plan from, where not the callable's own (explain's probe)
        self.reset()

    def planning_copy(self, cache: Any) -> Lifting:
        """A copy that plans as this one would with ``cache``'s records (explain of a compiled
        callable: the sizes its next miss would lift), without changing this one."""
        other = copy.copy(self)
        other.dims, other.values, other.cache = dict(self.dims), set(self.values), cache
        return other

    def reset(self) -> None:
        self.on = self.possible
        self.dims: dict[str, frozenset] = {}   # argument (described) -> lifted dimensions
        self.values: set[str] = set()          # sources (described) of ints read from outside, lifted

    def give_up(self) -> None:
        """What failed may be the lifting itself: from now on every size is guarded."""
        self.on = False
        self.dims = {}
        self.values = set()

    def plan(self, cache: Any, sources: dict, values: dict) -> tuple[list[tuple], frozenset]:
        """What to lift in this call, given the records of ``cache`` (a RecordCache): ``(dims, values)``.

        ``dims``: ``(source, tensor, dims)`` per tensor argument (also inside ``*args``/``**kwargs``):
        with ``dynamic=True`` all dimensions of every one; otherwise those lifted before plus those
        whose size differs from the newest record with the same argument ranks (the call would
        otherwise be one more record per size). ``values``: sources of ints read from outside
        whose value differs between the two newest records (``self.step += 1``)."""
        recs = cache.records
        if recs and recs[0].int_values:
            # An int (or float) from outside that this call holds with another value than the newest
            # record saw (`self.step += 1`), as TorchDynamo's automatic dynamic does on a recompile:
            # peeked at through plain attributes and items only (nothing of the program's runs).
            a, peek = recs[0].int_values, recs[0].int_sources or {}
            now = {k: peek_value(peek[k], values) for k in a if k in peek and k not in self.values}
            self.values |= {k for k, v in now.items() if type(v) in (int, float) and _changed(a[k], v)}
        if len(recs) >= 2 and recs[0].int_values and recs[1].int_values:
            a, b = recs[0].int_values, recs[1].int_values
            self.values |= {k for k in a.keys() & b.keys() if _changed(a[k], b[k])}
        tensors = arg_tensors(sources, values)
        shapes = shapes_of(tensors)
        # A size of 0 or 1 is never lifted (TorchDynamo's 0/1 specialisation): a program may treat
        # it apart (`squeeze()`, broadcasting), so such a call makes its own record, and a record
        # with lifted sizes holds only for sizes >= 2 (TensorGuard.lifted_min_lines).
        def generic(k: str, dims) -> frozenset:
            return frozenset(d for d in dims if d < len(shapes[k]) and shapes[k][d] >= 2)

        if self.dynamic:
            out = [(src, t, generic(k, range(len(shapes[k])))) for k, (src, t) in tensors.items() if shapes[k]]
            return [x for x in out if x[2]], frozenset(self.values)
        for rec in cache.records:
            old = rec.arg_shapes
            if old is not None and old.keys() == shapes.keys() and all(len(old[k]) == len(s) for k, s in shapes.items()):
                for k, s in shapes.items():
                    changed = {d for d, (a, b) in enumerate(zip(old[k], s)) if a != b}
                    if changed:
                        self.dims[k] = self.dims.get(k, frozenset()) | changed
                break
        out = [(tensors[k][0], tensors[k][1], generic(k, d)) for k, d in self.dims.items() if k in tensors]
        return [x for x in out if x[2]], frozenset(self.values)
