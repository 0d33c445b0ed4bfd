"""What a record assumes of values its graph computes, checked by its mock (speculation).

A monitor run that read tensor values into Python (``bool(t)``, ``t.item()``, a size of a lifted
shape) made assumptions (:meth:`magpy.monitor.scalars.ScalarFlow.assume`). Those computed from input sizes
alone become guards; those over numbers the mock draws are checked right after the draws; the
others are checked after the graph ran, and the mock undoes what the graph changed when one fails
(the call is then a miss). This module turns a :class:`~magpy.trace.Trace`'s assumptions into
those checks, and holds the helpers the generated code calls for them.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None

from ..annotations.torch_ops import RANDOM_OPS
from ..global_state import is_state_setter_name, saved_tensor_hooks_active
from ..graph import Unsupported
from ..guards import TensorGuard
from ..objmodel import storage_key
from ..size_exprs import SIZE_ARITHMETIC, SIZE_CHECK_KINDS, size_expr
from ..source import ConstPool
from ..torch_support import set_version_counters, version_counters
from ..trace import Trace


def same_values(a, b) -> bool:
    """``a`` (what the graph computed) is ``b`` (what the run saw), for (nested lists of) numbers
    and numpy values: exactly, not as ``==`` says (a float zero's sign counts, NaN is NaN)."""
    tb = type(b)
    if tb is bool and _np is not None and type(a) is _np.bool_:
        return bool(a) is b   # (3.13's fused comparison and truth test saw the bool of a numpy bool)
    if _np is not None and isinstance(a, (_np.ndarray, _np.generic)):
        if not (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and bool(
                _np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))):
            return False
        if a.dtype.kind == "c":
            a, b = _np.concatenate([_np.ravel(a.real), _np.ravel(a.imag)]), _np.concatenate([_np.ravel(b.real), _np.ravel(b.imag)])
        return a.dtype.kind not in "fc" or bool(_np.array_equal(_np.signbit(a), _np.signbit(b)))
    if tb is float:
        if a == b:
            return b != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
        return a != a and b != b and type(a) is float and math.copysign(1.0, a) == math.copysign(1.0, b)
    if tb is list or tb is tuple:
        if a == b and 0.0 not in b and not any(type(e) is tb for e in b):
            return True   # (no zero whose sign == would not see: no 0, 0.0 or False in it)
        return type(a) is tb and len(a) == len(b) and all(map(same_values, a, b))
    return a == b


def speculation_state() -> tuple:
    """What a speculative graph may change besides its outputs: the RNG states and grad mode."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda, mode_state()


def changes_global_state(trace: Trace) -> bool:
    """May the graph change the RNG states or grad mode (a random operator, a grad-mode switch)?
    Only then does a matched path that can turn into a miss save them first (a few us a call)."""
    for n in trace.graph.graph.nodes:
        if n.op not in ("call_function", "call_method"):
            continue
        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        if not isinstance(name, str) or any(r in name for r in RANDOM_OPS) or "grad" in name or "seed" in name:
            return True
    return False


def restore_state(state: tuple) -> None:
    cpu, cuda, modes = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    restore_modes(modes)


def _autocast_nesting() -> int:
    n = torch.autocast_increment_nesting()
    torch.autocast_decrement_nesting()
    return n - 1


def mode_state() -> tuple:
    """Grad mode and autocast (per device: enabled, dtype; its cache switch and nesting depth): what
    a graph's ``with torch.no_grad()`` / ``with torch.autocast(...)`` nodes set and, run to their
    end, set back. A graph that raises between them leaves them set; eager's ``__exit__`` would
    have run (:func:`restore_modes`)."""
    devices = ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)
    return (torch.is_grad_enabled(), _autocast_nesting(), torch.is_autocast_cache_enabled(),
            tuple((d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in devices))


def restore_modes(state: tuple) -> None:
    """Put back what :func:`mode_state` read, leaving the autocast levels entered since as their
    ``__exit__`` leaves them (the cache cleared when the outermost one closes)."""
    grad, nesting, cache, per_device = state
    torch.set_grad_enabled(grad)
    n = _autocast_nesting()
    while n > nesting:
        n = torch.autocast_decrement_nesting()
        if n == 0:
            torch.clear_autocast_cache()
    for d, enabled, dtype in per_device:
        torch.set_autocast_enabled(d, enabled)
        torch.set_autocast_dtype(d, dtype)
    torch.set_autocast_cache_enabled(cache)


def modes_scoped(trace: Trace) -> bool:
    """Does the graph switch grad mode or autocast only inside blocks it closes again (``with
    torch.no_grad()``, ``with torch.autocast(...)``): run to its end, it leaves them as it found them?"""
    names = [getattr(n.target, "__name__", "") for n in trace.graph.graph.nodes if n.op == "call_function"]
    grads = [n.args[0] for n in trace.graph.graph.nodes if n.op == "call_function"
             and getattr(n.target, "__name__", "") in ("_set_grad_enabled", "set_grad_enabled") and n.args]
    if not any(is_state_setter_name(name) for name in names):
        return False
    return (not grads or grads[-1] is trace.global_state.grad_enabled) \
        and names.count("autocast_increment_nesting") == names.count("autocast_decrement_nesting")


def assumption_checks(trace: Trace, mb, pool: ConstPool) -> tuple[list, list, list[str], list[int]]:
    """The assumptions of the run (see :meth:`ScalarFlow.assume`): ``(shape_checks, draw_checks,
    checks, undo_inputs)``.

    An assumption on a number computed from the sizes of the graph's inputs alone (a lifted size
    used by Python) is a guard, ``(expr, value, kind)`` with ``expr(names)`` its source over the
    input variables. One that also involves numbers the mock draws (``random.random() < p``) is
    checked by the mock right after drawing, before the graph runs. Every other is one Python
    condition over the graph's outputs, checked after the graph runs; such a speculative graph
    must not change tensors from outside: when an assumption fails, the call goes on as a miss
    and the program runs again."""
    shape_checks, draw_checks, rest = [], [], []
    for a in trace.assumptions:
        expr = size_expr(a[1], pool) if a[0] in SIZE_CHECK_KINDS else None
        if expr is not None:
            shape_checks.append((expr, a[2], a[0]))
            continue
        expr = size_expr(a[1], pool, draws=True) if a[0] in SIZE_CHECK_KINDS and trace.draws else None
        if expr is not None:
            draw_checks.append((expr, a[2], a[0]))
        else:
            rest.append(a)
    if not rest and not trace.speculative_ops:
        return shape_checks, draw_checks, [], []
    changed = [trace.rg.sn[nid] for nid in trace.mutated if isinstance(trace.rg.sn[nid].obj, torch.Tensor)]
    undo: list[int] = []
    if changed or trace.mutates_outside:
        # The graph changes tensors from outside in place: the mock keeps a copy of each graph
        # input whose memory the graph writes, and puts it back when an assumption fails (or the
        # graph raises), so the miss leaves them as the call found them (the undo log).
        undo = _undo_inputs(trace, changed)
    # (a tensor operation inside try/except: the graph must not raise, see below)
    checks = [] if rest else ["True"]
    for kind, node, expected in rest:
        o = mb.graph_output(node)
        if kind == "truth":
            checks.append(f"bool({o}) is {bool(expected)!r}")
        elif kind == "item":
            checks.append(f"_same_values({o}.item(), {pool.ref(expected)})")
        elif kind == "list":
            checks.append(f"_same_values({o}.tolist(), {pool.ref(expected)})")
        elif kind == "atleast":
            checks.append(f"{o} >= {expected!r}")
        else:
            checks.append(f"_same_values({o}, {pool.ref(expected)})")
    return shape_checks, draw_checks, checks, undo


def _undo_inputs(trace: Trace, changed: list) -> list[int]:
    """Positions of the graph inputs the speculative graph writes in place (by storage), all
    with the shape, strides and dtype the call found; Unsupported when a change could not be
    undone by copying values back (a change of metadata, a tensor written that is no input)."""
    what = changed[0].source.describe() if changed else "a tensor from outside (through a view)"
    guards = {g.source: g for g in trace.guards if isinstance(g, TensorGuard)}
    undo = []
    for i, (src, v) in enumerate(trace.graph.inputs):
        if isinstance(v, torch.Tensor) and storage_key(v) in trace.mutated_storages:
            g = guards.get(src)
            if g is None or g.entry[:3] != (tuple(v.shape), tuple(v.stride()), v.dtype) or v.is_sparse \
                    or type(v) not in (torch.Tensor, torch.nn.Parameter):
                raise Unsupported(f"reads tensor values into Python and changes {what} in place in a way "
                                  "a failed check could not undo")
            if v.requires_grad:
                # An in-place change of a tensor autograd records gives it new history (a
                # non-leaf's grad_fn); copying the values back would not restore it.
                raise Unsupported(f"reads tensor values into Python and changes {what}, a tensor that "
                                  "requires grad, in place: a failed check could not undo its autograd history")
            undo.append(i)
    written = {id(trace.graph.inputs[i][1]) for i in undo}
    if not undo or any(id(n.obj) not in written for n in changed):
        raise Unsupported(f"reads tensor values into Python and changes {what} in place: "
                          "the values read cannot be checked before the change")
    return undo


def undo_save(tensors: tuple) -> tuple[list, list[int]]:
    """The undo log of a speculative graph: a copy of each tensor it writes, and its version
    counter (autograd checks it for tensors an earlier call saved for backward)."""
    return [t.detach().clone() for t in tensors], version_counters(tensors)


def undo_restore(tensors: tuple, saved: tuple[list, list[int]]) -> None:
    """Put back values and version counters: after a failed check, the tensors the graph wrote
    are as the call found them, also for ``t._version`` and for a backward over an earlier
    output that saved them."""
    values, versions = saved
    with torch.no_grad():
        for t, s in zip(tensors, values):
            t.copy_(s)
    set_version_counters(tensors, versions)


def speculation_declined() -> bool:
    """Must a speculative record decline to run its graph now? Under saved-tensor hooks with
    grad mode on, running the graph calls the user's pack hooks, which a failed check cannot
    take back: the call is a miss (and runs eagerly: ``Compiled.hooks_reason``)."""
    return saved_tensor_hooks_active()


def feeds_graph(node: Any, assumed: set) -> bool:
    """Does number input ``node`` reach an operator of the graph, or an assumption? (Python
    arithmetic on numbers alone the mock computes itself, see ``MockBuilder.graph_output``.)"""
    todo, seen = list(node.users), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in assumed or n.op != "call_function" or n.target not in SIZE_ARITHMETIC or n.kwargs:
            return True
        todo.extend(n.users)
    return False


def check_code(expr: Callable, expected: Any, kind: str, names: dict, pool: ConstPool) -> tuple[str, str]:
    """``(condition that fails, readable)`` of an assumption computed before the graph runs."""
    code = expr(names)
    if kind == "truth":
        return f"bool({code}) is not {bool(expected)!r}", f"bool({code}) is {bool(expected)!r}"
    if kind == "atleast":   # (a rolled loop's trip count, magpy.dynamic.loops)
        return f"{code} < {expected!r}", f"{code} >= {expected!r}"
    return f"not _same_values({code}, {pool.ref(expected)})", f"{code} == {expected!r}"


