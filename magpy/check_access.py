"""Reading the program's objects without running its code: check mode's sandbox and its comparison
(:mod:`magpy.check`, :mod:`magpy.check_compare`) test exact types (never ``o.__class__``), read
classes and instance dicts through ``type`` and ``object``, and tell a hook of the program (a
``__getattribute__``, ``__eq__``, copy hook) from one of the standard library, torch, numpy or MagPy."""

from __future__ import annotations

import collections
import functools
import os
import sys
import sysconfig
import types
import weakref
from typing import Any

import torch

from . import replayed_effects as effects

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None


DELETED = object()

# -- reading objects without the program's code ---------------------------------------------------------
# ``isinstance`` reads ``o.__class__`` where the type test fails (a property of the program's, or its
# ``__getattribute__``, answers), and ``cls.__mro__`` or ``cls.__dict__`` go through a metaclass's
# ``__getattribute__``: the checker tests ``type(o)`` and reads classes through ``type``'s own descriptors.
_mro = type.__dict__["__mro__"].__get__
class_dict = type.__dict__["__dict__"].__get__
qualname = type.__dict__["__qualname__"].__get__
type_name = type.__dict__["__name__"].__get__
_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9


def exactly_a(o: Any, classes: Any) -> bool:
    """``isinstance(o, classes)`` by ``type(o)`` alone (``o.__class__`` is not read)."""
    return issubclass(type(o), classes)


def class_lookup(cls: type, name: str) -> Any:
    """What ``cls`` finds for ``name`` along its MRO (class dicts only), or DELETED."""
    for klass in _mro(cls):
        d = class_dict(klass)
        if name in d:
            return d[name]
    return DELETED


def builtin_base(cls: type) -> type:
    """The first class of ``cls``'s MRO that is not a Python class (``list`` for a list subclass)."""
    return next(k for k in _mro(cls) if not _flags(k) & _HEAPTYPE)


# Shared objects, not copied (compared by identity), by kind; and values, by exact type (a subclass of
# int or float is an object of the program's class: copied and compared as one).
_ATOMIC_KINDS = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodDescriptorType,
                 types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.CodeType, torch.dtype,
                 torch.device, torch.layout, torch.memory_format)
VALUES = frozenset({str, bytes, int, float, complex, bool, type(None), range, slice, torch.Size, type(Ellipsis)})


def atomic(o: Any) -> bool:
    t = type(o)
    return t in VALUES or issubclass(t, _ATOMIC_KINDS)


def plain_value(v: Any, depth: int = 0) -> bool:
    """A value whose ``==``, hash and repr are C's on builtins (exact types, tuples of them)."""
    t = type(v)
    if t is slice:
        return all(plain_value(x, depth + 1) for x in (v.start, v.stop, v.step))
    if t in VALUES:
        return True
    return t in (tuple, frozenset) and depth < 20 and all(plain_value(x, depth + 1) for x in v)


def program_key(k: Any, depth: int = 0) -> str | None:
    """What hashing or comparing ``k`` as a dict key or set item runs of the program's code (a
    ``__hash__``/``__eq__`` of its, on ``k`` or inside it: a tuple's items, a weak reference's
    referent), described, or None."""
    t = type(k)
    if t in VALUES or depth > 50:
        return None
    hook = program_hook(t, ("__hash__", "__eq__"))
    if hook:
        return f"a {qualname(t)}, whose {hook} is the program's code"
    if issubclass(t, (tuple, frozenset)):
        for x in builtin_base(t).__iter__(k):
            why = program_key(x, depth + 1)
            if why:
                return why
    elif issubclass(t, weakref.ref):   # (a weak key hashes and compares as its referent)
        return program_key(weakref.ref.__call__(k), depth + 1)
    return None


CONTAINERS = (list, dict, set, bytearray, collections.deque)


def module_dict(v: Any) -> bool:
    """A module's globals (a mock's target for global writes): copied shallowly."""
    if type(v) is not dict:
        return False
    name = v.get("__name__")
    return (type(name) is str and own_dict(sys.modules.get(name)) is v) or "__builtins__" in v


def is_effect(v: Any) -> bool:
    return v is print or effects.sleep_call(v) or effects.log_call(v) or v is effects.replay_warning


def run_silenced(fn: Any):
    def silent(*args, **kwargs):
        return None
    silent.__name__ = getattr(fn, "__name__", "effect")
    return silent


# -- the sandbox: copies that run none of the program's code ----------------------------------------------

# Code that is not the program's: the standard library (not its site-packages), torch, numpy, MagPy.
_STDLIB = tuple({os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "platstdlib")})
_LIBRARIES = tuple(os.path.join(os.path.dirname(m.__file__), "")
                   for m in (torch, sys.modules[__package__], *((_np,) if _np is not None else ())))

# What ``copy.deepcopy`` may call on an object besides C code: where the class (or a base) defines
# one of these in the program's code, the copy is made without it (:meth:`_Isolation.shell`).
_COPY_HOOKS = ("__getattribute__", "__deepcopy__", "__getattr__", "__reduce_ex__", "__reduce__", "__getstate__",
               "__getnewargs_ex__", "__getnewargs__", "__new__", "__setstate__")
_ITEM_HOOKS = ("append", "extend", "__setitem__")
BASES = (dict, list, set, collections.deque, bytearray, collections.OrderedDict, collections.defaultdict)


class NotIsolated(Exception):
    """The record's evaluation would reach the program's own objects or code: it is not evaluated."""


def library_code(fn: Any) -> bool:
    """Is ``fn`` (what a class dict holds) C code, or Python of the standard library, torch, numpy or
    MagPy (not the program's)? A property is its getter's, setter's and deleter's; an object of a
    Python class (a callable, a descriptor) is its class's ``__call__``/``__get__``/``__set__``'s."""
    t = type(fn)
    if t in (staticmethod, classmethod, types.MethodType):
        return library_code(fn.__func__)
    if issubclass(t, property):
        return (t is property or program_hook(t, ("__get__", "__set__", "__delete__")) is None) and all(
            library_code(f) for f in (property.fget.__get__(fn), property.fset.__get__(fn), property.fdel.__get__(fn))
            if f is not None)
    if t is functools.partial:
        return library_code(fn.func)
    if t is functools.cached_property:
        return library_code(fn.func)
    if t is not types.FunctionType:
        if not _flags(t) & _HEAPTYPE:
            return True   # (C: a builtin, a slot wrapper, a method descriptor)
        return program_hook(t, ("__call__", "__get__", "__set__", "__delete__")) is None
    code = fn.__code__
    if code.co_filename == "<string>" and str(fn.__module__).startswith("namedtuple_"):
        return True   # (a namedtuple's generated __new__)
    if code.co_filename.startswith(_LIBRARIES):
        return True
    return code.co_filename.startswith(_STDLIB) and not any(
        part in code.co_filename for part in ("site-packages", "dist-packages"))


def copy_hook(cls: type) -> str | None:
    """The program's code ``copy.deepcopy`` would run to copy an object of class ``cls``, named, or
    None: a ``__deepcopy__`` of a library (a tensor's, an enum's) is all it runs. Its metaclass's
    attribute hooks (``copyreg`` reads the class), a ``__class__`` property, ``__setattr__`` and
    ``__delattr__`` (``deepcopy`` sets slots with ``setattr``) count."""
    meta = program_hook(type(cls), ("__getattribute__", "__getattr__", "__setattr__"))
    if meta:
        return f"metaclass's {meta}"
    hook = program_hook(cls, ("__getattribute__", "__class__"))
    if hook:
        return hook
    deep = class_lookup(cls, "__deepcopy__")
    if deep is not DELETED:
        return None if library_code(deep) else "__deepcopy__"
    hooks = _COPY_HOOKS[2:] + ("__setattr__", "__delattr__") + (_ITEM_HOOKS if issubclass(cls, (list, dict)) else ())
    return program_hook(cls, hooks)


def program_hook(cls: type, hooks: tuple) -> str | None:
    """The first of ``hooks`` that ``cls`` finds in the program's code (not C, stdlib, torch), or None."""
    if not exactly_a(cls, type):
        return None
    mro = _mro(cls)
    for name in hooks:
        for klass in mro:
            d = class_dict(klass)
            if name in d:
                if not library_code(d[name]):
                    return name
                break
    return None


def own_dict(o: Any) -> dict | None:
    """``o.__dict__`` read without the program's ``__getattribute__``/``__getattr__``."""
    if o is None or exactly_a(o, type):
        return None
    try:
        d = object.__getattribute__(o, "__dict__")
    except Exception:
        return None
    return d if type(d) is dict else None


def slot_descriptors(cls: type) -> list:
    """(slot descriptor) of every ``__slots__`` name along ``cls``'s MRO."""
    out = []
    for klass in _mro(cls):
        d = class_dict(klass)
        slots = d.get("__slots__", ())
        for s in [slots] if type(slots) is str else slots if type(slots) in (tuple, list) else ():
            if type(s) is not str or s in ("__dict__", "__weakref__"):
                continue
            if s.startswith("__") and not s.endswith("__"):
                s = f"_{type_name(klass).lstrip('_')}{s}"
            desc = d.get(s)
            if type(desc) is types.MemberDescriptorType:
                out.append(desc)
    return out


def has_slot(desc: Any, o: Any) -> bool:
    try:
        desc.__get__(o)
    except AttributeError:
        return False
    return True
