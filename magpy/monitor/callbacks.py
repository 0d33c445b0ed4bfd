"""Natives that call the program back from C: ``sum(map(f, xs))``, ``f(*map(g, xs))``,
``tuple(filter(pred, xs))``, ``functools.reduce(f, xs)``. A ``functools.partial`` called from C
passes its bound arguments unseen: they are read through the partial (``partial_fields``).

The function ``f`` runs in monitored frames, but the native that draws from the map or filter
does so in C, where the monitor sees neither which items it took nor what it did with them (a
chain of ``+`` for ``sum``, a tuple for ``tuple``). Such a call is decided after it ran, at the
next instruction, with the items it drew in place of the map: what ``f``'s frames returned to
this frame (Monitor.leave_frame collects them), or for a filter the elements its predicate kept.

A map of a native over tensors (``tuple(map(torch.relu, xs))``, ``list(map(F.pad, xs, pads))``)
would call the native from C, where the monitor sees no call at all: before the consumer runs, the
map on the value stack is replaced by one of :func:`native_applier` over the same iterators, a
Python function whose frames are monitored and whose one call of the native is decided as any.
"""
from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

import torch

from .. import capture
from ..breaks import BreakCompile
from ..objmodel import peek_items
from .frame import FrameState

if TYPE_CHECKING:
    from ..callsite import CallSite

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None

#: The truth and length slots of the builtin types (a subclass may define its own).
_PLAIN_BOOLS = {getattr(t, "__bool__", None) for t in (bool, int, float, complex, type(None))} | {None}
_PLAIN_LENS = {getattr(t, "__len__", None) for t in (str, bytes, tuple, list, dict, set, frozenset, range)} | {None}


#: Types whose truth ``filter`` takes without running code of the program (containers by length).
_PLAIN_TRUTH = (bool, int, float, complex, type(None), str, bytes, tuple, list, dict, set, frozenset, range)


def _truth(value: Any) -> bool:
    """The truth ``filter`` took of what a Python predicate returned: that of a plain value (a
    number read from a tensor, an int subclass among them, is assumed as the predicate returns it:
    Monitor.leave_frame), a numpy scalar, ``torch.Size``; of any other object (its own ``__bool__``
    or ``__len__``) a break."""
    t = type(value)
    if isinstance(value, _PLAIN_TRUTH) and getattr(t, "__bool__", None) in _PLAIN_BOOLS \
            and getattr(t, "__len__", None) in _PLAIN_LENS or (_np is not None and isinstance(value, _np.generic)):
        return bool(value)
    raise BreakCompile(f"`filter`'s predicate returned a {type(value).__name__}, whose truth is taken in C")


def native_applier(fn: Any) -> types.FunctionType:
    """A Python function that calls ``fn`` with its arguments: the map ``map(fn, *its)`` drawn in C
    becomes ``map(native_applier(fn), *its)`` over the same iterators (what draws from either
    advances them alike), so each call of ``fn`` is made from a monitored frame."""
    def apply_native(*args):
        return fn(*args)
    return apply_native


def drain(iterator: Any):
    """A generator of what ``iterator`` gives: ``f(*map(g, xs))`` unpacks the map in C, so the
    monitor puts ``drain(m)`` in its place, whose monitored frame draws the map (a ``for`` loop)
    and yields the items, then ``f`` is called with them (the ``f(*gen)`` rule)."""
    for item in iterator:   # noqa: UP028 (a FOR_ITER the monitor follows, not `yield from`'s SEND)
        yield item


#: The code of :func:`native_applier`'s functions: a place is reported as the user's line that drew the map.
APPLIER_CODE = native_applier(None).__code__


def _maps_tensors(mapped: Any) -> bool:
    """Does ``mapped`` (a map) apply a callable that is not Python code to items among which the
    iterables hold a tensor (as far as their items can be seen without drawing them)?"""
    func, *iterables = mapped.__reduce__()[1]
    return maps_tensors(func, iterables)


def _python_code(func: Any) -> bool:
    """Is ``func`` a Python function (or a method or partial of one), whose frames are monitored?"""
    return isinstance(getattr(func, "__func__", func), types.FunctionType) or type(func) is functools.partial


def maps_tensors(func: Any, iterables: Any) -> bool:
    """Would ``map(func, *iterables)`` apply a callable that is not Python code to items among
    which the iterables may hold a tensor (a tensor seen without drawing them, or items that
    cannot be seen: ``map(Tensor.item, map(torch.neg, xs))``, a generator's)?"""
    if _python_code(func):
        return False
    for it in iterables:
        items = peek_items(it)
        if items is None or any(isinstance(x, torch.Tensor) for x in items):
            return True   # (items that cannot be seen, another map's: may be tensors)
    return False


class CallbackRules:
    """Deciding a native's call by what the callbacks it ran from C returned: a rule object of the
    run, whose methods the call rules reach as the run's (``star_map``, ``drained``) or as
    handlers of ``FIGURE_12`` (``_map_natively``, ``_consume_map``, ``_python_fold``). Its table
    is the run's ``star_maps`` (code of ``f`` in ``g(*map(f, ..))`` -> what its frames returned,
    the frame of ``g``), which the run's frame exit fills; it uses the run's reads, pending updates and call rule, and ends the run's opaque frame
    once a collected call is decided."""

    #: what its rules call of the run (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("check_stateful_iterator", "outside_iterator", "partial_fields", "read_args", "holds_scalar",
            "new_outputs", "pend", "post_new", "decide_call")

    def __init__(self, run) -> None:
        self.run = run

    def star_map(self, fs: FrameState, fn, pos: map, kw: dict) -> bool:
        """``zip(*map(f, xs))`` with a Python ``f`` (mmdet's ``multi_apply``): the interpreter
        calls ``f`` on each item (monitored frames) to build the arguments, then calls the native
        ``fn``. The arguments are what those frames return, so the call is decided right after it
        ran, at the next instruction, with them. False: ``f`` is not Python code."""
        return self.after_map(fs, fn, pos, lambda items: list(items), kw)

    def _map_natively(self, fs: FrameState, c) -> bool:
        """``map(torch.relu, xs)`` made in the call, over tensors: whatever draws from it later (a
        ``for`` loop, ``zip``, ``[*m]``, ``next``, a native in C) would call the native unseen, so the
        map is made of :func:`native_applier` instead (its function replaced on the value stack
        before the call runs), each call of the native then made from a monitored frame. Never
        decides the call (the map is then made as any)."""
        if c.kwargs or len(c.args) < 2 or not (maps_tensors(c.args[0], c.args[1:]) or (
                not _python_code(c.args[0]) and any(self.holds_scalar(it) for it in c.args[1:]))):
            return False   # (numbers read from tensors too: `map(abs, [t.item() for t in ts])`)
        stack = capture.read_stack(fs.frame)
        below = len(c.args) - 1   # (map's positional operands are the top of the stack)
        ins = fs.instrs.get(fs.frame.f_lasti)
        if ins is None or not ins.real.startswith("CALL") or ins.real == "CALL_FUNCTION_EX" \
                or len(stack) <= below or stack[-1 - below] is not c.args[0]:
            return False
        applier = native_applier(c.args[0])
        self.new_outputs([applier])   # (made in the call: its cell holds the native the call read)
        capture.replace_top(fs.frame, applier, below=below)
        c.args[0] = applier
        return False

    def drained(self, fs: FrameState, pos: map | filter, stack: list):
        """``f(*pos)`` with ``pos`` a map or filter whose items cannot be read without drawing
        them: a :func:`drain` generator made in the call, put in its place on the value stack
        (under the keyword dict, if any), or None where ``pos`` is not among the top slots."""
        slots = [k for k in range(min(len(stack), 2)) if stack[-1 - k] is pos]
        if not slots or self.outside_iterator(pos):
            return None   # (a map from outside: each call advances it, see _star_items)
        gen = drain(pos)
        self.new_outputs([gen])
        capture.replace_top(fs.frame, gen, below=slots[0])
        return gen

    def _consume_map(self, fs: FrameState, c) -> bool:
        """``sum(map(f, xs))``, ``tuple(map(f, xs))``, ``sum(filter(f, xs))`` with a Python ``f``: the
        native draws the items from the map in C, each one a monitored call of ``f``; the call is
        decided after it ran, with the list of its items in place of the map."""
        if "key" in c.kwargs:
            return False   # (sorted(map(f, xs), key=k): k's returns are collected before the call)
        i = next(i for i, a in enumerate(c.args) if type(a) in (map, filter))
        self.check_stateful_iterator(c.args[i], f"passes to `{getattr(c.fn, '__qualname__', c.fn)}`")
        if type(c.args[i]) is map and _maps_tensors(c.args[i]) and not self._apply_natively(fs, c, i):
            return False
        if self.after_map(fs, c.fn, c.args[i], lambda items: [*c.args[:i], list(items), *c.args[i + 1:]],
                          dict(c.kwargs)):
            return True
        if type(c.args[i]) is map and _python_code(c.args[i].__reduce__()[1][0]) and c.fn not in (list, tuple):
            # (list and tuple hold the very objects the frames returned: the monitor saw them)
            # (what its Python function returns, numbers read from tensors among them, would be
            # combined in C unseen: `sum(map(f, map(g, xs)))`, which after_map declines)
            raise BreakCompile(f"`{getattr(c.fn, '__qualname__', c.fn)}` draws a `map` of a Python function "
                               "over another map, which MagPy cannot follow")
        return False

    def _apply_natively(self, fs: FrameState, c, i: int) -> bool:
        """Replace the map ``c.args[i]`` of a native by a map of :func:`native_applier` over its
        iterators, on the value stack of the frame about to call ``c.fn`` and in ``c.args``. False
        where the map is not among the call's operands on the stack."""
        old = c.args[i]
        func, *iterables = old.__reduce__()[1]
        stack = capture.read_stack(fs.frame)
        slots = [k for k in range(min(len(stack), len(c.args) + 3)) if stack[-1 - k] is old]
        if not slots:
            return False
        applier = native_applier(func)
        new = map(applier, *iterables)
        self.new_outputs([applier, new])
        for below in slots:
            capture.replace_top(fs.frame, new, below=below)
        c.args[i] = new
        return True

    def _python_fold(self, fs: FrameState, c: CallSite) -> bool:
        """A Python fold function (or a partial of one: its bound arguments read through it) runs
        monitored on each item: the items and the initial value are passed to it, not read by reduce."""
        if type(c.args[0]) is functools.partial:
            self.partial_fields(c.args[0])
        self.read_args([a for a in c.args[1:] if not isinstance(a, torch.Tensor)], None, c.fn)
        self.pend(fs, self.post_new, 1)
        return True

    def after_map(self, fs: FrameState, fn, mapped: map | filter, arguments, kw: dict) -> bool:
        """Collect what the Python function of ``mapped`` returns to this frame while the native
        ``fn`` runs, then decide ``fn``'s call with ``arguments(items)`` as its arguments: the items
        are what a map's function returned, or the elements a filter's predicate kept (the filter's
        iterable copied before the call; its predicate's returns are plain truths, else the
        monitor breaks as they return: Monitor.leave_frame)."""
        self.check_stateful_iterator(mapped, f"passes to `{getattr(fn, '__qualname__', fn)}`")
        reduced = mapped.__reduce__()[1]
        func = reduced[0]
        inner = func.func if type(func) is functools.partial else func
        inner = getattr(inner, "__func__", inner)
        code = getattr(inner, "__code__", None)
        if not isinstance(inner, types.FunctionType) or code in self.run.star_maps \
                or any(type(it) in (map, filter) for it in reduced[1:]):
            return False   # (map(f, map(f, xs)): both call f from this frame, so their items would mix)
        if type(func) is functools.partial:
            self.partial_fields(func)   # (its bound arguments reach the function from C: read through it)
        collector: list = []
        if type(mapped) is filter:
            elements = peek_items(reduced[1])
            if elements is None:
                return False
            kept = arguments
            arguments = lambda returned: kept(e for e, r in zip(elements, returned) if _truth(r))   # noqa: E731
        self.run.star_maps[code] = (collector, fs.frame)
        self.pend(fs, self._post_star_map, (fn, collector, kw, code, arguments))
        return True

    def _post_star_map(self, fs, stack, data):
        fn, items, kw, code, arguments = data
        self.run.star_maps.pop(code, None)
        self.decide_call(fs, fn, arguments(items), kw)   # (the decision the call would have had before it ran)
        if fs.pending is not None:
            post, pdata = fs.pending
            fs.pending = None
            self.run.opaque_frame = None
            post(fs, stack, pdata)
