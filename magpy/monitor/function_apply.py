"""Calls that run a function for its gradients: a custom ``autograd.Function``'s ``apply`` and
``torch.utils.checkpoint.checkpoint``.

Both run a Python function (the Function's ``forward``, the checkpointed function) from C; the
monitor follows that frame and binds what it returns. Without gradients the operators it runs are
the record's. With gradients a ``checkpoint`` still is (it only trades memory for recomputation),
but a custom Function's backward is its own: the graph calls ``apply`` itself, one node, and the
operators its forward ran are dropped (:func:`autograd_function`).

The functions take the monitor run ``mon`` first, as :mod:`magpy.monitor.cached_calls` does.
"""
from __future__ import annotations

import functools
import sys
import types
from typing import TYPE_CHECKING, Any

import torch

from ..annotations import torch_ops as T
from ..breaks import BreakCompile
from ..global_state import global_hooks_present
from ..graph import Unsupported
from ..objmodel import is_immutable, module_has_hooks
from ..torch_support import graph_apply
from .writes import arm_write, write_counters, write_mark

if TYPE_CHECKING:
    from ..callsite import CallSite
    from .frame import FrameState


def autograd_function(mon: Any, fs: FrameState, c: CallSite) -> bool:
    """A custom ``autograd.Function``'s ``apply``: its forward runs monitored; apply (C) hands
    back what forward returned, or a fresh view of it for an input returned as is: bound in the
    post from forward's return.

    With gradients, a graph of forward's operators would lose the Function's own backward: the
    graph calls ``apply`` itself instead, one node whose arguments are apply's (so the backend's
    autograd runs the class's backward, as eager does). Forward still runs monitored, for what it
    reads (guarded) and to check it changes nothing outside the call (the graph runs it again on
    every call, where the mock would replay a write a second time); its operators are dropped
    from the graph. The class's ``forward``, ``backward`` and ``setup_context`` are guarded; what
    backward reads when it runs, after the call, is its own business, as under eager."""
    fn_cls = c.fn_cls
    if not isinstance(getattr(fn_cls, "forward", None), types.FunctionType):
        return False
    applied = None
    if torch.is_grad_enabled() and any(t.requires_grad for t in T.tensors_in(c.args, c.kwargs)):
        args = c.args[1:] if c.args and c.args[0] is fn_cls else c.args   # (3.11: the class first)
        try:
            fx_args = tuple(_apply_arg(mon, fn_cls, a) for a in args)
            fx_kwargs = {k: _apply_arg(mon, fn_cls, v) for k, v in c.kwargs.items()}
        except Unsupported as e:
            mon.go_dynamic(f"calls custom autograd.Function `{fn_cls.__qualname__}` with gradients "
                           f"on an argument the graph cannot pass it ({e})")
        for name in ("forward", "backward", "setup_context"):
            mon.guard_class_attr(fn_cls, name)
        applied = (fn_cls, fx_args, fx_kwargs, write_mark(mon), write_counters(mon), len(mon.graph.graph.nodes))
    code = fn_cls.forward.__code__
    collector: list = []
    mon.return_collectors[code] = (collector, None)
    mon.pend(fs, functools.partial(_post_function_apply, mon), (code, collector, applied))
    return True


def checkpoint(mon: Any, fs: FrameState, c: CallSite) -> bool:
    """``torch.utils.checkpoint.checkpoint(function, *args)``: it computes what ``function``
    computes, with the same gradients (it only trades memory for recomputation). The call runs
    for real; its own frames (stashing RNG state, saved-tensor hooks, the reentrant
    ``autograd.Function``) are not the program and are not monitored; the frame of ``function``
    is, as any inlined call (:func:`in_checkpoint_machinery`)."""
    args, kwargs = c.args, c.kwargs
    target = args[0] if args else kwargs.get("function")
    code = _checkpointed_code(target)
    if code is None:
        raise BreakCompile(f"checkpoints a {type(target).__name__} whose code MagPy cannot follow "
                           "(a function, a method or a module without hooks)")
    ckpt = sys.modules["torch.utils.checkpoint"]
    if kwargs.get("context_fn", ckpt.noop_context_fn) is not ckpt.noop_context_fn or kwargs.get("debug"):
        raise BreakCompile("checkpoints with a context_fn or debug: the recomputation differs from the function")
    reentrant = kwargs.get("use_reentrant")
    if (reentrant is None or reentrant) and torch.is_grad_enabled() \
            and not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args[1:]):
        raise BreakCompile("checkpoint(use_reentrant=True) with no input requiring grad: its outputs "
                           "carry no gradient, unlike the function's")
    mon.checkpointing[id(fs.frame)] = (fs.frame, code)
    collector: list = []
    mon.return_collectors[code] = (collector, None)
    before = (write_mark(mon), write_counters(mon)) if torch.is_grad_enabled() else None
    mon.pend(fs, functools.partial(_post_checkpoint, mon), (code, collector, before))
    return True


def _post_checkpoint(mon: Any, fs, stack, data):
    code, collector, before = data
    mon.checkpointing.pop(id(fs.frame), None)
    if before is not None and (arm_write(mon, before[0]) is not None or write_counters(mon) != before[1]):
        # (backward runs the function again: BatchNorm's running statistics move twice in eager)
        raise BreakCompile("checkpoint with autograd recording of a function that changes state "
                           "(writes, in-place changes): eager's backward recomputes it and changes it again")
    _post_function_apply(mon, fs, stack, (code, collector, None))


def _post_function_apply(mon: Any, fs, stack, data):
    code, returned, applied = data
    mon.return_collectors.pop(code, None)
    out = stack[-1]
    if applied is not None:
        _graph_applies(mon, applied, out)
        mon.post_new(fs, stack, 1)
        return
    if returned:
        got = list(out) if isinstance(out, (tuple, list)) else [out]
        ret = returned[-1]
        ret = list(ret) if isinstance(ret, (tuple, list)) else [ret]
        for o, r in zip(got, ret):
            if isinstance(o, torch.Tensor) and o is not r and mon.graph.node_of(o) is None \
                    and isinstance(r, torch.Tensor) and o.shape == r.shape:
                node = mon.to_arg(r)
                mon.graph.bind(o, mon.graph.call("method", "view_as", (node, node), {}))
    mon.post_new(fs, stack, 1)


def _apply_arg(mon: Any, fn_cls: type, a: Any) -> Any:
    """An argument of the graph's ``apply`` call: a tensor's node, a value, or an object from
    outside taken as it is. Forward and backward keep what they are given (on ctx): a copy made
    now would not be the program's object, which backward may read or change later."""
    if isinstance(a, torch.Tensor) or is_immutable(a):
        return mon.to_arg(a)
    node = mon.node(a)
    if node is None or node.source is None:
        mon.go_dynamic(f"calls custom autograd.Function `{fn_cls.__qualname__}` with gradients on a "
                       f"{type(a).__name__} made in the call, which its ctx may keep")
    mon.guard_identity(a)
    return mon.graph.object_input(a, node.source)


def _graph_applies(mon: Any, applied: tuple, out: Any) -> None:
    """The graph calls ``fn_cls.apply`` where the run called it (see :func:`autograd_function`):
    its outputs are bound to that node, forward's own operators dropped."""
    fn_cls, fx_args, fx_kwargs, mark, counters, first = applied
    name = fn_cls.__qualname__
    outside = next((w for w in mon.rg.writes_since(mark)
                    if w.node is not None and mon.rg.sn[w.node].source is not None), None)
    if outside is not None or write_counters(mon) != counters:
        mon.go_dynamic(f"calls custom autograd.Function `{name}` with gradients, whose forward changes "
                       "state outside the call (the graph would run it again on every call)")
    outs = list(out) if isinstance(out, tuple) else [out]
    if not outs or not all(isinstance(o, torch.Tensor) for o in outs):
        mon.go_dynamic(f"calls custom autograd.Function `{name}` with gradients, whose forward returns "
                       "something other than tensors")
    graph = mon.graph
    inner = list(graph.graph.nodes)[first:]
    node = graph.call("function", graph_apply(fn_cls), fx_args, fx_kwargs)
    results = [graph.getitem(node, i) for i in range(len(outs))] if isinstance(out, tuple) else [node]
    for o, n in zip(outs, results):
        graph.bind(o, n)
    # Forward's operators computed only what apply now computes: those no later node uses go.
    # (not those the run still names: an assumption's value, a number followed into Python)
    kept = {a[1] for a in mon.assumptions} | {v[1] for v in mon.scalar_nodes.values()}
    dropped = {}
    for n in reversed(inner):
        if not n.users and n.op in ("call_function", "call_method") and n not in kept:
            dropped[n] = None
            graph.graph.erase_node(n)
            graph.op_count -= 1
    graph.rebind(dropped)


def _checkpointed_code(target: Any) -> Any:
    """The code whose frame runs what ``checkpoint(target, ...)`` computes, or None."""
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType):
        return target.__code__
    if isinstance(target, torch.nn.Module) and type(target).__call__ is torch.nn.Module.__call__ \
            and not module_has_hooks(target) and not global_hooks_present():
        forward = getattr(type(target), "forward", None)
        if isinstance(forward, types.FunctionType) and "forward" not in target.__dict__:
            return forward.__code__
    return None


def in_checkpoint_machinery(mon: Any, frame: Any, code: Any) -> bool:
    """Is ``frame`` part of ``torch.utils.checkpoint``'s own work (magpy.monitor.calls ``_checkpoint``)?
    Its frames, and what they call, are; the checkpointed function's frame, entered from the
    checkpoint call of the nearest monitored frame, is not (nor what it calls but the
    saved-tensor hooks checkpoint installs). Asked by the run on entering a frame while a
    checkpoint call is on the stack (``mon.checkpointing``)."""
    ckpt_file = getattr(sys.modules.get("torch.utils.checkpoint"), "__file__", None)
    inside = False
    f = frame.f_back
    while f is not None:
        fs = mon.frames.get(id(f))
        if fs is not None and fs.frame is f:
            break
        inside = inside or f.f_code.co_filename == ckpt_file
        f = f.f_back
    calling = mon.checkpointing.get(id(f)) if f is not None else None
    if calling is not None and calling[0] is f:
        return code is not calling[1]
    return inside or code.co_filename == ckpt_file
