"""What an iterator made in the call may hand to native code that reads values.

``any(l > 2 for l in losses)``, ``max(iter(rows))``, ``sum(map(bool, x > 2))``,
``list(filter(lambda r: r.sum() > 2, x))``, ``np.mean([l1, l2])``: native code takes the truth,
order or number of tensors it gets from an iterator (or a container, for numpy), in C, where the
monitor sees no ``__bool__`` and no comparison. Such a read is a tensor value read by a native:
dynamic. :func:`iterator_reads` says, for an iterator argument, whether tensors may come out of
it (looking through builtin iterators with ``__reduce__``), and which Python generators made in
the call it draws from (the monitor then checks what they yield, :meth:`Monitor.leave_frame`).
"""
from __future__ import annotations

import functools
import itertools
import math
import operator
import types
from typing import Any

import torch

from ..annotations import torch_ops as T
from ..objmodel import is_immutable

#: Builtin iterator types whose ``__reduce__`` names the iterables they draw from.
_SEE_THROUGH = tuple(dict.fromkeys((
    type(iter([])), type(iter(())), type(iter(range(1))), type(iter("")), map, filter, zip, enumerate, reversed,
    type(reversed([])), type(iter({})), type(iter({}.values())), type(iter({}.items())), itertools.chain,
    itertools.islice, itertools.starmap, itertools.compress, itertools.takewhile, itertools.dropwhile,
    itertools.filterfalse, itertools.accumulate, itertools.zip_longest)))
#: Natives that draw every item of a ``map`` they are given before they return (``sum(map(f, xs))``):
#: with a Python ``f``, the call is decided after it ran, with what ``f`` returned (Monitor.after_map).
MAP_CONSUMERS = frozenset({sum, functools.reduce, tuple, list, set, frozenset, dict, any, all, max, min, sorted,
                           math.fsum, math.prod, str.join, bytes.join})
#: The lazy iterators a consumer's call is decided by the items of (magpy.monitor.callbacks).
CALLBACK_ITERATORS = (map, filter)
#: Natives that map a value to a Python number or text: ``map(bool, x > 2)`` reads tensor values.
VALUE_CONVERTERS = frozenset({bool, int, float, complex, str, repr, format, round, hash, operator.truth,
                              operator.index})


def iterator_reads(v: Any, depth: int = 0) -> tuple[bool, list]:
    """``(may_hand_out_tensors, generators)`` for an iterator ``v``: whether tensors may come out
    of it (True where it cannot be seen through), and the Python generators it draws from, whose
    yields tell."""
    if isinstance(v, torch.Tensor):
        return True, []
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        return T.contains_tensor(list(v.values()) if isinstance(v, dict) else list(v)), []
    if isinstance(v, types.GeneratorType):
        return False, [v]
    if depth > 6:
        return True, []   # (nested too deep to tell: tensors may come out)
    if isinstance(v, (str, bytes, range)):
        return False, []
    if not isinstance(v, _SEE_THROUGH):
        return True, []
    try:
        reduced = v.__reduce__()
    except Exception:   # noqa: BLE001 - an iterator that cannot say: tensors may come out
        return True, []
    args = reduced[1] if len(reduced) > 1 and isinstance(reduced[1], tuple) else ()
    if isinstance(v, (map, filter)) and args:
        fn, args = args[0], args[1:]
        if isinstance(v, filter) or fn in VALUE_CONVERTERS:
            # filter tests the truth of what its predicate (or the element) gives; map(bool, ...)
            # converts the elements: both read the values of tensors among them
            sub = [iterator_reads(a, depth + 1) for a in args]
            if any(s[0] for s in sub):
                return True, []
    tensors, gens = False, []
    for a in args:
        if callable(a) and not isinstance(a, (torch.Tensor, types.GeneratorType)) and not hasattr(type(a), "__next__"):
            continue   # (map's function: what it returns is what comes out; a Python one is monitored)
        t, g = iterator_reads(a, depth + 1)
        tensors, gens = tensors or t, gens + g
    return tensors, gens


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_ITEMS = type({}.items())


def may_hold_tensors(v: Any) -> bool:
    """Whether iterating ``v`` (a container, a dict view, an iterator) may give tensors."""
    if isinstance(v, _DICT_VIEWS):
        return T.contains_tensor(list(v))
    if isinstance(v, (list, tuple, dict, set, frozenset)) or hasattr(type(v), "__next__") or isinstance(v, torch.Tensor):
        tensors, gens = iterator_reads(v)
        return tensors or bool(gens)
    return False


def numpy_callable(fn: Any) -> bool:
    """A numpy function or ufunc (``np.mean``, ``np.asarray``), which converts tensors it finds in
    containers to arrays by reading their values."""
    if isinstance(fn, (types.FunctionType, types.MethodType)):
        return False   # (numpy's Python code runs monitored: its natives are what read values)
    mod = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "") or ""
    return mod == "numpy" or mod.startswith("numpy.")


def python_predicate(fn: Any, args: list) -> types.FunctionType | None:
    """The Python function of ``filter(pred, xs)`` (a bound method's function), or None."""
    pred = getattr(args[0], "__func__", args[0]) if fn is filter and args else None
    return pred if isinstance(pred, types.FunctionType) else None


def element_read(fn: Any, args: list, readers: frozenset) -> tuple[str | None, list]:
    """For the native call ``fn(*args)`` (``readers``: the natives that read the values of the
    elements they are given): why it reads tensor values no record could check (None if it does
    not), and the generators made in the call whose yields it reads (to watch)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    if numpy_callable(fn):
        if any(T.contains_tensor(a) for a in args if not isinstance(a, torch.Tensor)):
            return f"`{name}` (numpy) reads the values of tensors in a container", []
    if python_predicate(fn, args) is not None:
        return None, []   # (a Python predicate: the truth tested is of what it returns, see Monitor.leave_frame)
    if fn is filter or (fn is map and args and args[0] in VALUE_CONVERTERS):
        # lazy: whatever consumes it reads the truth (filter) or the converted value (map) of
        # each element, tensors included
        tensors, gens = False, []
        for a in args[1:]:
            t, g = iterator_reads(a)
            tensors, gens = tensors or t, gens + g
        if tensors:
            return f"`{name}` of tensors reads their values", []
        return None, gens
    if fn not in readers and not numpy_callable(fn):
        return None, []
    gens = []
    for a in args:
        if isinstance(a, _DICT_VIEWS) and T.contains_tensor([k for k, _ in a] if isinstance(a, _ITEMS) else list(a)):
            # (items are compared as (key, value) pairs: keys are unique, so values never are)
            return f"`{name}` reads the values of tensors in a dict view", []
        if isinstance(a, (torch.Tensor, type)) or not hasattr(type(a), "__next__"):
            continue
        tensors, g = iterator_reads(a)
        if tensors:
            return f"`{name}` reads the values of tensors an iterator hands out", []
        gens += g
    return None, gens


def made_in_call_only(node_of: Any, v: Any, depth: int = 0) -> bool:
    """Is ``v`` a value, an attribute reader, a function or class, a tensor made in the call, or
    an object made in the call holding only such (to depth 2)? What a native reading attributes
    in C (``sorted(xs, key=attrgetter('prio'))``) may read of it is then the run's own state,
    not state from outside that no guard covers. ``node_of``: the run's ShadowNode lookup."""
    if is_immutable(v) or v is getattr or type(v) in (operator.attrgetter, operator.methodcaller) \
            or isinstance(v, (types.BuiltinFunctionType, types.FunctionType, type)):
        return True
    node = node_of(v)
    if isinstance(v, torch.Tensor):
        return node is None or node.source is None
    if node is None or node.source is not None or depth > 2:
        return False
    if type(v) in (list, tuple, set, frozenset):
        return all(made_in_call_only(node_of, e, depth + 1) for e in v)
    if type(v) is dict:
        return all(made_in_call_only(node_of, e, depth + 1) for e in (*v.keys(), *v.values()))
    d = getattr(v, "__dict__", None)
    return type(d) is dict and all(made_in_call_only(node_of, e, depth + 1) for e in d.values())


def attribute_reader_break(node_of: Any, fn: Any, args: Any, kwargs: dict, reader: str) -> str | None:
    """Why a native that reads attributes or items in C (``reader``: what reads, see
    :func:`~magpy.annotations.builtins.native_attribute_reader`) cannot be part of a record: it
    reaches an object from outside or of unknown origin, whose attributes no guard would cover.
    None over values and objects the call made (their state is the run's)."""
    owner = getattr(fn, "__self__", None)   # (the text of `"{0.k}".format`; builtins' module)
    if all(made_in_call_only(node_of, v) for v in (*args, *kwargs.values(), owner if type(owner) is str else None)):
        return None
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"`{name}` reads attributes of objects from outside in native code ({reader}), which no guard covers"
