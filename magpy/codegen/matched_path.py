"""The matched path of a record: guard and mock fused into one function (paper §4.2).

:func:`generate` turns a :class:`~magpy.trace.Trace` into the record's code: the mock's plan
first (:mod:`magpy.codegen.mock`: it decides the graph's outputs and which sources the mock
needs), then the guard (:mod:`magpy.codegen.guard`), then the mock's lines around the graph
(draws, speculation checks, :mod:`magpy.codegen.speculation`), and finally ``run``: guard and
mock as one straight-line function, what a call runs when this record is tried. No loops, no
per-parameter dict lookups beyond the path itself.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..cache import MISS, UNHELD
from ..graph import Unsupported
from ..guards import alias_guards, array_same
from ..redraw import restore_states, same_draw, save_states
from ..refgraph import guard_nodes, mock_nodes
from ..source import ConstPool, literal
from ..trace import Trace
from .guard import MISSED_PATHS, Vars, batch_identity_items, direct_module_write, guard_code, storage_pattern
from .guard_batch import batch_held
from .mock import REBUILD_HELPERS, MockBuilder, check_plan, in_program_order, plan_writes, replayed_effects
from .speculation import (
    assumption_checks,
    changes_global_state,
    check_code,
    feeds_graph,
    mode_state,
    modes_scoped,
    restore_modes,
    restore_state,
    same_values,
    speculation_declined,
    speculation_state,
    undo_restore,
    undo_save,
)


@dataclass
class GeneratedCode:
    """What code generation hands to the record."""

    make_guard: Callable             # () -> the guard alone (compiled when first asked for: Record.guard)
    mock_factory: Callable           # (compiled_graph) -> (mock, run, guard exceptions list, inputs)
    guard_source: str
    mock_source: str
    run_source: str
    readable: list                   # the guard's checks in words, or callables that say them (guard_words)
    graph_output_nodes: list
    input_sources: list
    guard_node_count: int
    mock_node_count: int
    #: the mock may still decline the call after the guard passed (values its graph computes or it
    #: draws are checked, or a graph that raises makes the call a miss): the guard alone does not decide
    declines_after_guard: bool = False


def generate(trace: Trace, call_shape: tuple, graph_mod_factory: Callable) -> GeneratedCode:
    """Build guard and mock for one finished monitor run (raises Unsupported for what it cannot mock)."""
    with torch._C.DisableTorchFunctionSubclass():   # MagPy's reads of example tensors are not the user's
        return _generate(trace, call_shape, graph_mod_factory)


def _generate(trace: Trace, call_shape: tuple, graph_mod_factory: Callable) -> GeneratedCode:
    for arr, snap in trace.array_constants:
        if not array_same(arr, snap):
            raise Unsupported("a numpy array passed to a tensor operator changed later in the call")
    pool = ConstPool()
    vars_ = Vars(pool)
    # Before any local is defined: checks batched in C decide which sources are constants.
    batched, pinned = batch_identity_items(list(trace.guards) + alias_guards(trace.rg), vars_)
    batched, held = batch_held(batched, pinned)
    for src, obj in held.pinned_sources():
        vars_.bind_const(src, obj)
    held_objs = {id(o) for _, o in held.pinned_sources()}
    direct_writes = {(s.node.node_id, s.key) for s in trace.replay
                     if s.kind == "attr" and direct_module_write(trace, held, held_objs, s.node, s.key)}

    # -- the mock's plan first: it decides the graph outputs and which sources it needs --------
    mb = MockBuilder(trace, vars_, pool)
    step_writes = plan_writes(trace, mb, pool, direct_writes)
    writes = [line for lines in step_writes for line in lines]
    ret = mb.value(trace.result)
    shape_checks, draw_checks, checks, undo_inputs = assumption_checks(trace, mb, pool)
    prints = replayed_effects(trace, mb, pool)
    outside = in_program_order(trace, step_writes, prints)
    check_plan(trace)

    # -- graph inputs: placeholders in order, fetched by the guard ------------------------------------
    input_vars = [mb.src(src) for src, _ in trace.graph.inputs]
    # A graph that changes tensors in place (or switches grad mode/autocast) runs even when
    # the mock needs none of its outputs.
    gm_needed = bool(mb.outputs) or trace.graph_mutates
    # -- guard ------------------------------------------------------------------------------------------
    ns: dict[str, Any] = {}
    guard = guard_code(trace, call_shape, batched, held, vars_, pool, mb, shape_checks, draw_checks, ns)
    guard_src, readable, needed, names = guard.source, guard.readable, guard.needed, guard.names

    # -- mock ----------------------------------------------------------------------------------------------
    mlines = []
    if needed:
        mlines.append(f"{''.join(n + ', ' for n in needed)}= fetched")
    # Random draws (magpy.redraw): drawn again, in the run's order, before the graph that takes them.
    draw_lines = [d.call_code(pool, mb.size_code) for d in trace.draws]
    # A clock read after operators ran, that no operator takes, is read after the graph ran (where
    # the program read it: `elapsed = time.perf_counter() - t0` measures the graph).
    assumed = {a[1] for a in trace.assumptions}
    used = {n.meta["magpy_draw"] for n in trace.graph.graph.nodes
            if n.op == "placeholder" and n.meta.get("magpy_draw") is not None and feeds_graph(n, assumed)}
    # A cached function's hit is made after the graph and its checks too (its result is the
    # guard's; a check that fails must not have touched the cache).
    late_draws = {d for d in trace.draws
                  if d.cache_hit or (d.generator is None and d.after_ops and d not in used and d.pinned is None)}
    late = [line for d, line in zip(trace.draws, draw_lines) if d in late_draws]
    early = [(d, line) for d, line in zip(trace.draws, draw_lines) if d not in late_draws]
    draws = [line for _, line in early]   # (emitted once, before the graph)
    # (the graph does not use a late reading: it gets the run's value in its place)
    input_vars = [literal(v, pool) if src in late_draws else var
                  for (src, v), var in zip(trace.graph.inputs, input_vars)]
    # (no outputs and no operators: no graph is compiled, magpy.pipeline, and there is none to call,
    # e.g. a record that only draws numbers and prints them)
    graph_call = f"_graph({', '.join(input_vars)})" if mb.outputs or trace.graph.op_count else "()"
    restore = "_restore_state(_state)"
    readable.extend(f"draws again: {d.describe()}" for d in trace.draws)
    if early:
        ns["_G"] = tuple(dict.fromkeys(d.generator for d, _ in early))
        ns.update(_save_draws=save_states, _restore_draws=restore_states, _same_draw=same_draw)
        restore += "; _restore_draws(_G, _gs)"
    pinned = [d for d, _ in early if d.pinned is not None]
    declines = bool(draw_checks or pinned or checks)   # (the mock may make the call a miss after the guard)
    if draw_checks or pinned:
        # What the run's path assumed of the numbers drawn, and the values it pinned, checked as
        # soon as they are drawn: a call that draws another path is a miss with the generators
        # put back.
        mlines.append("_gs = _save_draws(_G)")
        for d, line in early:
            mlines.append(line)
            if d.pinned is not None:
                mlines.append(f"if {d.check_code(pool)}:")
                mlines.append("    _restore_draws(_G, _gs)")
                mlines.append("    return _UNHELD")
                readable.append(f"draw {d.index} is pinned: {d.pinned[0]!r}"[:200])
        draws = []
        for expr, expected, kind in draw_checks:
            fails, said = check_code(expr, expected, kind, names, pool)
            mlines.append(f"if {fails}:")
            mlines.append("    _restore_draws(_G, _gs)")
            mlines.append("    return _UNHELD")
            readable.append(f"drawn numbers: {said}")
    if checks:
        # Speculation (magpy.monitor.scalars): the graph computed values the run's path depended on. If
        # one differs, or the graph fails, the record does not hold: the call is a miss, as if
        # the graph had not run (it changed nothing outside but the RNGs, which are put back).
        mlines.append("if _speculation_declined():")
        mlines.append("    return _UNHELD")
        mlines.append("_state = _speculation_state()")
        if undo_inputs:
            undo_vars = "(" + "".join(f"{input_vars[i]}, " for i in undo_inputs) + ")"
            mlines.append(f"_saved = _undo_save({undo_vars})")
            restore += f"; _undo_restore({undo_vars}, _saved)"
        if early and not (draw_checks or pinned):
            mlines.append("_gs = _save_draws(_G)")
        mlines += draws
        mlines.append("try:")
        mlines.append(f"    o = {graph_call}")
        mlines.append("except Exception:")
        mlines.append(f"    {restore}")
        mlines.append("    return _UNHELD")
        mlines.append(f"if not ({' and '.join(checks)}):")
        mlines.append(f"    {restore}")
        mlines.append("    return _UNHELD")
    elif (gm_needed or prints) and (writes or prints or late) and not early and not trace.mutates_outside \
            and not any(isinstance(trace.rg.sn[nid].obj, torch.Tensor) for nid in trace.mutated):
        # The record has outside effects, replayed after the graph; eager made the ones its code
        # reaches before an operator raises (`self.count += 1` before a shape error). A graph that
        # raises changed nothing outside (but the RNGs, put back): the call is a miss, and the
        # program runs as eager runs it, effects and exception included.
        declines = True
        keeps_state = changes_global_state(trace)
        if keeps_state:
            mlines.append("_state = _speculation_state()")
        mlines.append("try:")
        mlines.append(f"    o = {graph_call}")
        mlines.append("except Exception:")
        if keeps_state:
            mlines.append("    _restore_state(_state)")
        mlines.append("    return _UNHELD")
    elif (gm_needed or prints) and modes_scoped(trace):
        # The run left grad mode and autocast as it found them (its `with` blocks closed): if the
        # graph raises inside one, they are put back, as the blocks' `__exit__` does in eager.
        mlines += draws
        mlines += ["_modes = _mode_state()", "try:", f"    o = {graph_call}", "except BaseException:",
                   "    _restore_modes(_modes)", "    raise"]
    elif gm_needed or prints:
        mlines += draws
        mlines.append(f"o = {graph_call}")
    else:
        mlines += draws   # (drawn for their effect on the generators: nothing uses them)
    mlines += late
    mlines += mb.lines
    # (after the graph and its checks: printed once, with the call's values, among the writes in
    # the order the run made them)
    mlines += outside
    mlines.append(f"return {ret}")
    mock_src = "def mock(fetched):\n" + "\n".join("    " + line for line in mlines) + "\n"

    ns.update(pool.namespace())
    ns.update(_speculation_state=speculation_state, _restore_state=restore_state, _UNHELD=UNHELD,
              _mode_state=mode_state, _restore_modes=restore_modes,
              _undo_save=undo_save, _undo_restore=undo_restore,
              _speculation_declined=speculation_declined)
    ns.update(_same_values=same_values, _storage_pattern=storage_pattern, **REBUILD_HELPERS)

    def make_guard():
        guard_ns = dict(ns, _MISS=None)   # (the guard alone: None is its miss)
        exec(compile(guard_src, "<magpy guard>", "exec"), guard_ns)
        return guard_ns.pop("guard")

    # -- the matched path: guard and mock fused into one function ------------------------------------
    # What a call runs when this record is tried: no fetched tuple built and unpacked, one frame.
    # A miss returns MISS. The guard part keeps its own try: a path that is gone is a miss, any
    # other exception there is MagPy's bug (kept in ``_BUGS`` for the caller to report, then a
    # miss). The mock part runs outside it, so the user's exceptions propagate as eager's would.
    run_lines = ["try:", *guard.checks, *MISSED_PATHS, "    return _MISS",
                 "except Exception as e:", "    _BUGS.append(e)", "    return _MISS"]
    run_lines += mlines[1:] if needed else mlines
    run_src = "def run(args, kwargs):\n" + "\n".join("    " + line for line in run_lines) + "\n"

    # The graph's inputs from what the guard fetched (for benchmarks that time the bare graph).
    inputs_lines = ([f"{''.join(n + ', ' for n in needed)}= fetched"] if needed else []) + draw_lines + \
        [f"return [{', '.join(input_vars)}]"]
    inputs_src = "def inputs(fetched):\n" + "\n".join("    " + line for line in inputs_lines) + "\n"

    def mock_factory(compiled_graph):
        mock_ns = dict(ns)
        mock_ns["_graph"] = compiled_graph
        exec(compile(mock_src, "<magpy mock>", "exec"), mock_ns)
        exec(compile(inputs_src, "<magpy inputs>", "exec"), mock_ns)
        run_ns = dict(ns)
        run_ns.update(_graph=compiled_graph, _MISS=MISS, _BUGS=[])
        exec(compile(run_src, "<magpy run>", "exec"), run_ns)
        # (popped: a function in its own globals is a reference cycle, which would keep what
        # the record holds alive until the cyclic collector runs, after the record is dropped)
        return mock_ns.pop("mock"), run_ns.pop("run"), run_ns["_BUGS"], mock_ns.pop("inputs")

    return GeneratedCode(
        make_guard=make_guard, mock_factory=mock_factory, guard_source=guard_src, mock_source=mock_src,
        run_source=run_src,
        readable=readable, graph_output_nodes=list(mb.outputs),
        input_sources=[s for s, _ in trace.graph.inputs],
        guard_node_count=len(guard_nodes(trace.rg)), mock_node_count=len(mock_nodes(trace.rg)),
        declines_after_guard=declines,
    )
