"""Annotations for Python builtins, container methods, ``math`` and ``operator``.

Only properties are declared here; the monitor never re-implements what these
functions compute: the real interpreter runs them and the monitor reads the result.
"""
from __future__ import annotations

import builtins
import collections
import copy
import functools
import itertools
import math
import operator
import random
import string
import time
import types

import torch

from ..objmodel import is_instance
from ..realtype import callable_attr
from . import DYNAMIC, PURE, REGISTRY, Annotation

_add = REGISTRY.add

# Builtins that read (the structure of) every argument and return a fresh value.
for _fn in (len, range, enumerate, zip, reversed, sorted, min, max, sum, abs, any, all, int, float,
            bool, str, repr, list, tuple, dict, set, frozenset, iter, next, round, divmod, pow, hash,
            format, chr, ord, slice, map, filter, bin, hex, oct, ascii, complex, bytes, sorted):
    _add(_fn, PURE)

# Builtins that only look at the type of their arguments.
_add(isinstance, Annotation(value_read=(False, False)))
_add(issubclass, Annotation(value_read=(False, False)))
_add(type, Annotation(value_read=(False,)))
_add(callable, Annotation(value_read=(False,)))
_add(super, Annotation(value_read=()))
_add(object, PURE)
_add(object.__new__, Annotation(value_read=()))
_add(object.__init__, Annotation(value_read=()))

# Reference relations: the result is reached from input 0.
_add(getattr, Annotation(value_read=(False, True, False), relation=lambda a, k: ("attr", a[1])))
_add(hasattr, Annotation(value_read=(False, True), relation=lambda a, k: ("hasattr", a[1])))
_add(object.__getattribute__, Annotation(value_read=(False, True), relation=lambda a, k: ("attr", a[1])))
_add(vars, Annotation(value_read=(False,), relation=lambda a, k: ("attr", "__dict__")))
_add(setattr, Annotation(value_read=(False, True, False), inplace=(0,), relation=lambda a, k: ("setattr", a[1])))
_add(object.__setattr__, Annotation(value_read=(False, True, False), inplace=(0,), relation=lambda a, k: ("setattr", a[1])))
_add(delattr, Annotation(value_read=(False, True), inplace=(0,), relation=lambda a, k: ("delattr", a[1])))
_add(object.__delattr__, Annotation(value_read=(False, True), inplace=(0,), relation=lambda a, k: ("delattr", a[1])))

# Dynamic: results or effects differ between calls with equal inputs (PureClosure=False).
# id() is pure within one run (used as a memo key by inspect, copy...); the number stands for its
# argument's identity, which the call rule guards (CallRules: `fn is id`).
_add(id, Annotation(value_read=(False,)))
for _fn in (print, input, open, exec, eval, compile, globals, locals, breakpoint, __import__):
    _add(_fn, DYNAMIC)
for _name in dir(time):
    if callable(getattr(time, _name)) and not _name.startswith("_"):
        _add(getattr(time, _name), DYNAMIC)
for _name in dir(random):
    _obj = getattr(random, _name)
    if callable(_obj) and not _name.startswith("_") and not isinstance(_obj, type):
        _add(_obj, DYNAMIC)

for _name in dir(random.Random):
    _obj = getattr(random.Random, _name)
    if callable(_obj) and not _name.startswith("__"):
        _add(_obj, DYNAMIC)
_add(type.__instancecheck__, Annotation(value_read=(False, False)))
_add(type.__subclasscheck__, Annotation(value_read=(False, False)))

# math: pure functions of their arguments.
for _name in dir(math):
    _obj = getattr(math, _name)
    if callable(_obj):
        _add(_obj, PURE)

# operator: pure, except the in-place forms and item writes.
for _name in dir(operator):
    _obj = getattr(operator, _name)
    if callable(_obj) and not _name.startswith("_") and not isinstance(_obj, type):
        _add(_obj, PURE)
for _name in ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor",
              "ilshift", "irshift", "imatmul", "iconcat"):
    _add(getattr(operator, _name), Annotation(inplace=(0,), out_inplace=True))
_add(operator.setitem, Annotation(value_read=(True, True, False), inplace=(0,)))
_add(operator.delitem, Annotation(inplace=(0,)))
_add(operator.getitem, Annotation(value_read=(False, True), relation=lambda a, k: ("item", a[1])))
_add(operator.attrgetter, PURE)
_add(operator.itemgetter, PURE)

# Container methods (called unbound: self is argument 0).
_READ_ONLY = Annotation()
_MUTATE = Annotation(inplace=(0,))
_APPEND = Annotation(value_read=(True, False), inplace=(0,))
#: ``d.pop(key, default)``: the default is handed back, not read (namedtuple's ``_replace`` maps it).
_POP = Annotation(value_read=(True, True, False), inplace=(0,))

for _cls, _mutators in (
    (list, {"append": _APPEND, "extend": _MUTATE, "insert": Annotation(value_read=(True, True, False), inplace=(0,)),
            "pop": _MUTATE, "remove": _MUTATE, "clear": _MUTATE, "sort": _MUTATE, "reverse": _MUTATE,
            "__setitem__": Annotation(value_read=(True, True, False), inplace=(0,)), "__delitem__": _MUTATE,
            "__iadd__": Annotation(inplace=(0,), out_inplace=True)}),
    (dict, {"update": _MUTATE, "setdefault": Annotation(value_read=(True, True, False), inplace=(0,)),
            "pop": _POP, "popitem": _MUTATE, "clear": _MUTATE,
            "__setitem__": Annotation(value_read=(True, True, False), inplace=(0,)), "__delitem__": _MUTATE}),
    (collections.OrderedDict, {"update": _MUTATE, "setdefault": _MUTATE, "pop": _POP, "popitem": _MUTATE,
                               "clear": _MUTATE, "move_to_end": _MUTATE,
                               "__setitem__": Annotation(value_read=(True, True, False), inplace=(0,)),
                               "__delitem__": _MUTATE}),
    (set, {"add": _APPEND, "update": _MUTATE, "discard": _MUTATE, "remove": _MUTATE, "pop": _MUTATE,
           "clear": _MUTATE, "difference_update": _MUTATE, "intersection_update": _MUTATE,
           "symmetric_difference_update": _MUTATE}),
    (collections.deque, {"append": _APPEND, "appendleft": _APPEND, "extend": _MUTATE, "extendleft": _MUTATE,
                         "pop": _MUTATE, "popleft": _MUTATE, "clear": _MUTATE, "rotate": _MUTATE,
                         "remove": _MUTATE, "insert": _MUTATE}),
    (str, {}), (tuple, {}), (frozenset, {}), (bytes, {}), (int, {}), (float, {}), (complex, {}), (bool, {}),
    (range, {}), (slice, {}),
):
    for _name in dir(_cls):
        _obj = getattr(_cls, _name, None)
        if _name in _mutators:
            _add(_obj, _mutators[_name])
        elif callable(_obj) and _name not in ("__class__", "__init_subclass__", "__subclasshook__", "__new__",
                                               "__init__", "__getattribute__", "__setattr__", "__delattr__"):
            _add(_obj, _READ_ONLY)
_add(dict.get, Annotation(value_read=(False, True, False), relation=lambda a, k: ("item", a[1])))
_add(dict.__getitem__, Annotation(value_read=(False, True), relation=lambda a, k: ("item", a[1])))
# A class's namespace view (`C.__dict__`): read-only; an item read is guarded, anything else reads it whole.
_add(types.MappingProxyType.get, Annotation(value_read=(False, True, False), relation=lambda a, k: ("item", a[1])))
_add(types.MappingProxyType.__getitem__, Annotation(value_read=(False, True), relation=lambda a, k: ("item", a[1])))
for _name in ("keys", "values", "items", "__len__", "__contains__", "__iter__", "copy"):
    _add(getattr(types.MappingProxyType, _name), _READ_ONLY)
_add(list.__getitem__, Annotation(value_read=(True, True)))
for _cls in (dict, list, set, tuple, collections.OrderedDict, collections.deque, str, int, float, frozenset):
    _add(_cls, PURE)
for _cls in (tuple, list, dict, set, frozenset, int, float, str):
    _add(_cls.__new__, Annotation(value_read=(False,)))
# Classmethods of builtin types bind anew on every access (``dict.fromkeys is dict.fromkeys`` is
# false): the descriptor in the type's namespace is what a call is looked up by.
for _cls, _name in ((dict, "fromkeys"), (collections.OrderedDict, "fromkeys"), (int, "from_bytes"),
                    (float, "fromhex"), (bytes, "fromhex")):
    _add(_cls.__dict__[_name], PURE)
_add(collections.defaultdict, PURE)
_add(collections.Counter, PURE)

# functools / itertools: pure combinators (user callbacks they call are monitored as usual).
for _obj in (functools.reduce, functools.partial, itertools.chain, itertools.chain.from_iterable,
             itertools.product, itertools.repeat, itertools.islice, itertools.accumulate, itertools.count,
             itertools.zip_longest, itertools.combinations, itertools.permutations, itertools.starmap,
             itertools.cycle, itertools.groupby, itertools.tee, itertools.pairwise, itertools.takewhile,
             itertools.dropwhile, itertools.compress, itertools.filterfalse):
    _add(_obj, PURE)

# Harmless effects the compiled call may drop: warnings are reported once by the monitor run.
try:
    import warnings

    _add(warnings.warn, Annotation(value_read=()))
except Exception:  # pragma: no cover
    pass

import weakref  # noqa: E402

_add(weakref.ref, Annotation(value_read=()))
_add(weakref.ReferenceType.__call__, Annotation(value_read=()))

# Introspection of code that does not change while the program runs: static results,
# computed once by the monitor run without monitoring the library's own code.
import inspect  # noqa: E402

_STATIC = Annotation(meta=True, value_read=(), note="static introspection")
for _obj in (inspect.signature, inspect.unwrap, inspect.getfullargspec, inspect.getmro, inspect.isclass,
             inspect.isfunction, inspect.ismethod, inspect.iscoroutinefunction, inspect.isgeneratorfunction,
             inspect.Signature.from_callable, inspect.getmodule, inspect.getsourcefile):
    _add(_obj, _STATIC)

# `with warnings.catch_warnings():` tells the C warnings module its filter list changed (a cache
# invalidation): no effect on what the program computes; the filter list itself is an attribute
# of the warnings module, read and written through sources like any other.
import warnings as _warnings  # noqa: E402

# warnings.warn shows its warning during the monitor run; matched calls do not warn again, as
# eager does not under the default filters (once per code location, kept in the registry the
# monitor run updated). Its frames (showwarning, a recording list) are not monitored.
_add(_warnings.warn, Annotation(meta=True, value_read=(), note="warning shown once, during the monitor run"))
_add(_warnings.warn_explicit, Annotation(meta=True, value_read=(), note="warning shown once, during the monitor run"))

# torch.autograd.profiler.record_function labels a block for the profiler: no effect on what the
# program computes. Entered and left during the monitor run; matched calls carry no labels.
import torch.autograd.profiler as _profiler  # noqa: E402

for _fn in (_profiler.record_function.__enter__,
            _profiler.record_function.__exit__):
    _add(_fn, Annotation(meta=True, value_read=(), note="profiler label"))

if hasattr(_warnings, "_filters_mutated"):
    _add(_warnings._filters_mutated, Annotation(value_read=(), note="warnings filter cache invalidation"))

del _fn, _name, _obj, _cls, _mutators


# -- What a native call may write, whatever its object's origin ---------------------------------------
# (The update rules record each such call as a write in the RefGraph, ``magpy.monitor.rules.note_write``:
# a loop whose iterations write, or a branch arm that writes, is not rolled or merged. Python functions
# are followed instruction by instruction instead, so only natives are judged here, by what they are.)

#: Builtin methods that only read their object.
READING_METHODS = frozenset({
    "get", "keys", "values", "items", "copy", "index", "count", "__getitem__", "__len__", "__contains__",
    "startswith", "endswith", "format", "join", "split", "strip", "lower", "upper", "replace",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__",
    "__format__", "is_integer", "bit_length", "conjugate", "union", "intersection", "difference",
    "issubset", "issuperset", "isdisjoint", "__reduce__", "__reduce_ex__", "__sizeof__", "isdigit",
    "isalpha", "rstrip", "lstrip", "partition", "rpartition", "find", "rfind", "encode", "decode"})
#: Builtins that write an object, or a frame, by what they are.
WRITING_BUILTINS = (builtins.setattr, builtins.delattr, object.__setattr__, object.__delattr__, builtins.exec,
                    builtins.eval, builtins.globals, builtins.vars, builtins.locals)
_VALUES = (int, float, complex, str, bytes, tuple, frozenset, type(None), type, types.ModuleType)


def _is_torch_operator(fn) -> bool:
    """Is ``fn`` a native function of torch's operator namespaces (``torch.cat``, ``torch.nn.functional``'s
    and ``torch.linalg``'s natives), as opposed to a method bound to some object?"""
    module = getattr(fn, "__module__", None) or ""
    return module == "torch" or module.startswith(("torch.nn.functional", "torch._C._nn", "torch._C._linalg",
                                                    "torch._C._special", "torch._C._fft", "torch.linalg",
                                                    "torch.special", "torch.fft"))


_NATIVE_METHOD_TYPES = (types.BuiltinMethodType, types.MethodDescriptorType, types.WrapperDescriptorType,
                        types.MethodWrapperType)
_NATIVE_CALLABLE_TYPES = (types.BuiltinFunctionType, *_NATIVE_METHOD_TYPES)


def native_writes(fn, args: list):
    """``(name, obj)`` when the native call ``fn(*args)`` may write ``obj`` (a builtin that changes
    its object's state, a native given an object it may change; ``obj`` None when unknown), else None."""
    if fn in WRITING_BUILTINS:
        return fn.__name__, (args[0] if args else None)
    if not is_instance(fn, _NATIVE_CALLABLE_TYPES):
        return None   # (Python code, a module, a class: what it writes, the run sees it write)
    owner = callable_attr(fn, "__self__")
    if is_instance(fn, types.BuiltinFunctionType) and owner is not builtins and not is_instance(owner, (type, torch.Tensor)) \
            and not (getattr(fn, "__module__", None) or "").startswith(("torch", "math")):
        # a function of a native module given an object it may change (heapq.heappush,
        # operator.setitem, bisect.insort)
        for a in args:
            if not is_instance(a, (torch.Tensor, *_VALUES)):
                return getattr(fn, "__qualname__", repr(fn)), a
    if is_instance(fn, _NATIVE_METHOD_TYPES):
        if owner is None and _is_torch_operator(fn):
            # a torch operator (``torch.cat([a, h])``, ``torch.stack(outs)``) reads the lists and
            # tuples it is given; what it changes in place is a tensor, which the graph records
            return None
        if owner is None or is_instance(owner, type) or type(owner).__name__.startswith("pybind11_detail_function_record"):
            # (a pybind11 function's `__self__` is its own function record, not an object it is given)
            owner = args[0] if args else None
        name = getattr(fn, "__name__", "")
        if not is_instance(owner, (torch.Tensor, int, float, str, bytes, tuple, frozenset, type(None),
                                  types.ModuleType, torch.nn.Module)) and name not in READING_METHODS:
            return f"{type(owner).__name__}.{name}", owner
    return None


_ATTRIBUTE_READERS = (operator.attrgetter, operator.methodcaller)
_FORMATTER = string.Formatter()


def native_attribute_reader(fn, args: list, kwargs: dict) -> str | None:
    """What reads attributes (or items) of objects in native code in the call ``fn(*args,
    **kwargs)``, or None: an ``operator.attrgetter``/``methodcaller`` or ``getattr`` handed to
    another native (``sorted(xs, key=attrgetter('prio'))``, ``map(attrgetter('w'), xs)``,
    ``functools.reduce(getattr, path, obj)``), or ``str.format`` with a field that names an
    attribute or item (``"{0.k}".format(cfg)``). No monitored frame sees those reads."""
    for v in (*args, *kwargs.values()):
        if type(v) in _ATTRIBUTE_READERS or v is getattr:
            if fn in (getattr, *_ATTRIBUTE_READERS):
                break
            return repr(v) if v is not getattr else "getattr"
    if callable_attr(fn, "__name__", "") not in ("format", "format_map"):
        return None
    owner = callable_attr(fn, "__self__")
    if type(owner) is str or (fn in (str.format, str.format_map) and args):
        text = owner if type(owner) is str else args[0]
        try:
            fields = [f for _, f, _, _ in _FORMATTER.parse(text) if f]
        except (ValueError, TypeError):
            return "str.format"
        if any("." in f or "[" in f for f in fields):
            return f"str.format of {text!r}"
    return None


#: Code that uses ``id()`` of the objects it is handed only as keys of its own memo dict
#: (``copy.deepcopy`` and its helpers: ``memo.get(id(x))``, ``memo[id(x)] = y``): there the number
#: of an object made in the call stands for which objects are the same, never for its value.
#: Anywhere else such a number (new on every call) may be printed, ordered, hashed into a
#: table or compared, so the call runs eagerly (magpy.monitor.natives).
ID_MEMO_CODES = frozenset(f.__code__ for f in vars(copy).values()
                          if isinstance(f, types.FunctionType) and f.__module__ == "copy")
