"""The ``int`` subclass of numbers a monitor run follows, and how what a run leaves behind is made
plain again (:func:`delift`): a run that lifts sizes puts :class:`LiftedInt` values on the value
stack, and what the program keeps of them (returned, stored outside, held by closures it made)
must be plain ``int`` as in eager (``type(n) is int``)."""
from __future__ import annotations

import collections
import types
from typing import Any

import torch

from .realtype import instance_dict


class LiftedInt(int):
    """An ``int`` the monitor run follows: a size read from a tensor whose shape changes between
    calls (lifted shapes), or an integer computed from one. Python shares small ints, so a plain
    ``int`` has no identity to follow; the monitor puts a ``LiftedInt`` of the same value on the
    value stack instead (:func:`magpy.capture.replace_top`). It is an ``int`` in every respect
    but its type (``type(n)`` in a monitored frame gives ``int``: ``ScalarFlow.plain_type``;
    ``n.__class__``, pickling and copying give plain ints too); the mock hands out plain ints."""

    __slots__ = ()

    @property
    def __class__(self):   # noqa: D105 - what the program sees: an int
        return int

    def __reduce__(self):
        return (int, (int(self),))


#: id(copy) -> (copy, original): the floats a lifting run handed the program in place of the very
#: objects it read (``value * 1.0``: its own identity to follow), set by :func:`restoring`; a NaN is
#: found by ``in``, ``list.index`` and as a dict key only as the very object, so what the program
#: keeps of a copy is given back as the original.
_ORIGINALS: dict[int, tuple] = {}


def restoring(pairs: Any) -> None:
    """:func:`delift` gives ``original`` in place of ``copy`` for each ``(original, copy)`` float pair."""
    _ORIGINALS.clear()
    _ORIGINALS.update((id(c), (c, o)) for o, c in pairs if type(c) is float and c is not o)


def restores_any() -> bool:
    """Does :func:`delift` give back originals for float copies now (:func:`restoring`)?"""
    return bool(_ORIGINALS)


def delift(v: Any, depth: int = 0) -> Any:
    """``v`` with every :class:`LiftedInt` in it a plain ``int`` (and a float copy the run made the
    original, :func:`restoring`): lists, dicts and plain objects are changed in place (they keep
    their identity), tuples and sizes are rebuilt when they hold one. Types are tested on
    ``type(v)``, never through ``v`` (see :func:`magpy.realtype.is_instance`)."""
    t = type(v)
    if t is LiftedInt:
        return int(v)
    if t is float:
        hit = _ORIGINALS.get(id(v)) if _ORIGINALS else None
        return hit[1] if hit is not None and hit[0] is v else v
    if depth > 6 or v is None or t in (int, float, bool, str, bytes) or issubclass(t, (torch.Tensor, torch.nn.Module)):
        return v
    if issubclass(t, type):   # (a class made in the call, `type("T", (), {"v": n})`: its own attributes)
        for k, e in list(vars(v).items()):
            if type(e) is LiftedInt:
                type.__setattr__(v, k, int(e))
        return v
    if t is types.MethodType:   # (a bound method of an object made in the call)
        delift(v.__self__, depth + 1)
        return v
    if t is types.CellType:   # (a cell a split hands the continuation, shared with closures)
        try:
            held = v.cell_contents
        except ValueError:
            return v
        new = delift(held, depth + 1)
        if new is not held:
            v.cell_contents = new
        return v
    if t is slice:   # (`slice(0, x.size(0))` returned or stored: rebuilt, as a tuple is)
        parts = [delift(e, depth + 1) for e in (v.start, v.stop, v.step)]
        return v if all(a is b for a, b in zip(parts, (v.start, v.stop, v.step))) else slice(*parts)
    if t is collections.deque:   # (in place: `history.append(x.size(0))` on a deque from outside)
        for i, e in enumerate(list(v)):
            new = delift(e, depth + 1)
            if new is not e:
                v[i] = new
        return v
    if t is frozenset:
        return frozenset(delift(e, depth + 1) for e in v) if any(_keyed(e) for e in v) else v
    if t is list:
        for i, e in enumerate(v):
            new = delift(e, depth + 1)
            if new is not e:
                v[i] = new
        return v
    if t is dict:
        if any(_keyed(k) for k in v):
            items = [(delift(k, depth + 1), delift(e, depth + 1)) for k, e in v.items()]
            v.clear()
            v.update(items)   # (same order, keys that compare and hash equal)
            return v
        for k, e in list(v.items()):
            new = delift(e, depth + 1)
            if new is not e:
                v[k] = new
        return v
    if t is set:
        if any(_keyed(e) for e in v):
            items = [delift(e, depth + 1) for e in v]
            v.clear()
            v.update(items)
        return v
    if issubclass(t, (dict, list)) and t.__module__ in ("collections", "builtins"):
        # (Counter, OrderedDict, defaultdict, UserList-free subclasses of the stdlib: item values
        # in place, through the container's own protocol, which keeps the order; keys re-added)
        if issubclass(t, dict) and any(_keyed(k) for k in v):
            items = [(delift(k, depth + 1), delift(e, depth + 1)) for k, e in v.items()]
            v.clear()
            for k, e in items:
                v[k] = e
            return v
        for k, e in (list(v.items()) if issubclass(t, dict) else list(enumerate(v))):
            new = delift(e, depth + 1)
            if new is not e:
                v[k] = new
        return v
    if t in (tuple, torch.Size) or (issubclass(t, tuple) and (
            callable(getattr(t, "_make", None)) or t.__module__ == "torch.return_types")):
        items = [delift(e, depth + 1) for e in v]
        if all(a is b for a, b in zip(items, v)):
            return v
        # (a namedtuple rebuilt by its _make, a torch.return_types structseq from its items)
        new = t._make(items) if t not in (tuple, torch.Size) and hasattr(t, "_make") else t(items)
        if type(getattr(v, "__dict__", None)) is dict:
            new.__dict__.update(v.__dict__)   # (a subclass of a namedtuple may carry attributes)
        return new
    if t is types.FunctionType:   # (a closure made in the call: its cells and defaults)
        for c in v.__closure__ or ():
            try:
                held = c.cell_contents
            except ValueError:
                continue
            new = delift(held, depth + 1)
            if new is not held:
                c.cell_contents = new
        if v.__defaults__:
            v.__defaults__ = delift(v.__defaults__, depth + 1)
        if v.__kwdefaults__:
            delift(v.__kwdefaults__, depth + 1)
        delift(v.__dict__, depth + 1)   # (attributes set on it: `g.attr = k`)
        return v
    if issubclass(t, BaseException):   # (`ValueError("bad batch", x.size(0))` kept or returned)
        args = delift(v.args, depth + 1)
        if args is not v.args:
            v.args = args
    d = instance_dict(v)
    if type(t) is type and t.__module__ not in ("builtins",) and not t.__module__.startswith("torch"):
        if type(d) is dict:
            delift(d, depth + 1)
        for name in _slot_names(t):   # (`__slots__` members: `SBox(n).v`)
            e = getattr(v, name, None)
            new = delift(e, depth + 1)
            if new is not e:
                setattr(v, name, new)
    return v


def _keyed(k: Any) -> bool:
    """Might :func:`delift` give another object for the set item or dict key ``k``?"""
    t = type(k)
    return t is LiftedInt or (t is tuple and any(_keyed(e) for e in k)) or (t is float and id(k) in _ORIGINALS)


def _slot_names(t: type) -> list:
    """The ``__slots__`` member names of ``t`` and its bases (``__dict__``/``__weakref__`` aside)."""
    names = []
    for c in t.__mro__:
        slots = c.__dict__.get("__slots__", ())
        names += [n for n in ((slots,) if isinstance(slots, str) else slots) if n not in ("__dict__", "__weakref__")]
    return names
