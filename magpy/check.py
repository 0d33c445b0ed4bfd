"""Check mode: every call runs eagerly, and the record MagPy would have used is compared with it.

``magpy.compile(f, check=True)`` (or ``MAGPY_CHECK=1`` in the environment when compiling) makes
each call run the real program, so what the user sees is exactly eager's. Before that, MagPy
finds the record whose guard passes and evaluates its mock on a *sandbox* that runs none of the
program's code and changes none of its objects: one ``copy.deepcopy`` (one memo, so aliasing is
kept) of what the guard fetched and of the objects the mock refers to itself, in which objects
whose copying would run the program's code (its ``__deepcopy__``, ``__getstate__``,
``__setstate__``, ``__new__``, ``__getattr__``...) are copied field by field instead
(:class:`_Isolation`); writes on classes, functions and modules, which no copy can stand for, are
kept aside (:class:`_SharedWrites`); a ``functools.lru_cache`` function the mock calls is answered
from its table without a hit; prints and logging are silenced; the random generators are put
back. What cannot be evaluated so (:class:`NotIsolated`) is not: only the guard is checked, and
the reason is a check note. Then eager runs on the real objects, and the record's return value,
the state the mock left on the copies and the writes it kept aside are compared with eager's
return value and the state eager left (tensors with a tolerance suited to the backend,
structure, types, identity of outside objects). The first difference is a *divergence*: it names
the record, the value read from outside whose guard should have failed (where the record's run
read it, file:line), and what differed. See :func:`evaluate` and :func:`compare`.
"""
from __future__ import annotations

import collections
import copy
import enum
import functools
import math
import os
import re
import sys
import sysconfig
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from . import effects
from .cache import UNHELD, Record
from .cached_calls import lru_cache_entry
from .compiled_module import CompiledCallable
from .objmodel import NO_VALUE
from .redraw import restore_states, save_states
from .source import (
    ArgSource,
    AttrSource,
    CellSource,
    ConstPool,
    ConstSource,
    DerefSource,
    GlobalSource,
    ItemSource,
    SelfArgsSource,
)
from .torch_support import rng_and_grad_state, set_rng_and_grad_state

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None


class CheckError(UserWarning):
    """A record's answer differs from eager's (check mode). Warned with ``check=True``, raised
    with ``check="raise"`` (after the eager call ran: outside state is eager's)."""


@dataclass
class Evaluation:
    """What the record would have done on a sandbox copy of the call's state."""

    record: Record
    out: Any = None
    raised: BaseException | None = None
    unheld: bool = False
    skipped: str | None = None            # why the mock was not evaluated (only the guard was checked)
    memo: dict = field(default_factory=dict)
    originals: list = field(default_factory=list)
    notes: list = field(default_factory=list)   # parts not compared
    shared: dict = field(default_factory=dict)       # id -> (class/function/module, its attributes before the call)
    kept_writes: dict = field(default_factory=dict)  # id -> (class/function/module, {name: what the record writes})


_DELETED = object()

# -- reading objects without the program's code ---------------------------------------------------------
# ``isinstance`` reads ``o.__class__`` where the type test fails (a property of the program's, or its
# ``__getattribute__``, answers), and ``cls.__mro__`` or ``cls.__dict__`` go through a metaclass's
# ``__getattribute__``: the checker tests ``type(o)`` and reads classes through ``type``'s own descriptors.
_mro = type.__dict__["__mro__"].__get__
_cdict = type.__dict__["__dict__"].__get__
_qualname = type.__dict__["__qualname__"].__get__
_type_name = type.__dict__["__name__"].__get__
_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9


def _is(o: Any, classes: Any) -> bool:
    """``isinstance(o, classes)`` by ``type(o)`` alone (``o.__class__`` is not read)."""
    return issubclass(type(o), classes)


def _lookup(cls: type, name: str) -> Any:
    """What ``cls`` finds for ``name`` along its MRO (class dicts only), or _DELETED."""
    for klass in _mro(cls):
        d = _cdict(klass)
        if name in d:
            return d[name]
    return _DELETED


def _builtin_base(cls: type) -> type:
    """The first class of ``cls``'s MRO that is not a Python class (``list`` for a list subclass)."""
    return next(k for k in _mro(cls) if not _flags(k) & _HEAPTYPE)


# Shared objects, not copied (compared by identity), by kind; and values, by exact type (a subclass of
# int or float is an object of the program's class: copied and compared as one).
_ATOMIC_KINDS = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodDescriptorType,
                 types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.CodeType, torch.dtype,
                 torch.device, torch.layout, torch.memory_format)
_VALUES = frozenset({str, bytes, int, float, complex, bool, type(None), range, slice, torch.Size, type(Ellipsis)})


def _atomic(o: Any) -> bool:
    t = type(o)
    return t in _VALUES or issubclass(t, _ATOMIC_KINDS)


def _plain(v: Any, depth: int = 0) -> bool:
    """A value whose ``==``, hash and repr are C's on builtins (exact types, tuples of them)."""
    t = type(v)
    if t is slice:
        return all(_plain(x, depth + 1) for x in (v.start, v.stop, v.step))
    if t in _VALUES:
        return True
    return t in (tuple, frozenset) and depth < 20 and all(_plain(x, depth + 1) for x in v)


def _program_key(k: Any, depth: int = 0) -> str | None:
    """What hashing or comparing ``k`` as a dict key or set item runs of the program's code (a
    ``__hash__``/``__eq__`` of its, on ``k`` or inside it: a tuple's items, a weak reference's
    referent), described, or None."""
    t = type(k)
    if t in _VALUES or depth > 50:
        return None
    hook = _program_hook(t, ("__hash__", "__eq__"))
    if hook:
        return f"a {_qualname(t)}, whose {hook} is the program's code"
    if issubclass(t, (tuple, frozenset)):
        for x in _builtin_base(t).__iter__(k):
            why = _program_key(x, depth + 1)
            if why:
                return why
    elif issubclass(t, weakref.ref):   # (a weak key hashes and compares as its referent)
        return _program_key(weakref.ref.__call__(k), depth + 1)
    return None


_CONTAINERS = (list, dict, set, bytearray, collections.deque)


def _module_dict(v: Any) -> bool:
    """A module's globals (a mock's target for global writes): copied shallowly."""
    if type(v) is not dict:
        return False
    name = v.get("__name__")
    return (type(name) is str and _own_dict(sys.modules.get(name)) is v) or "__builtins__" in v


def _effect(v: Any) -> bool:
    return v is print or effects.sleep_call(v) or effects.log_call(v) or v is effects.replay_warning


def _silenced(fn: Any):
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
_BASES = (dict, list, set, collections.deque, bytearray, collections.OrderedDict, collections.defaultdict)


class NotIsolated(Exception):
    """The record's evaluation would reach the program's own objects or code: it is not evaluated."""


def _library(fn: Any) -> bool:
    """Is ``fn`` (what a class dict holds) C code, or Python of the standard library, torch, numpy or
    MagPy (not the program's)? A property is its getter's, setter's and deleter's; an object of a
    Python class (a callable, a descriptor) is its class's ``__call__``/``__get__``/``__set__``'s."""
    t = type(fn)
    if t in (staticmethod, classmethod, types.MethodType):
        return _library(fn.__func__)
    if issubclass(t, property):
        return (t is property or _program_hook(t, ("__get__", "__set__", "__delete__")) is None) and all(
            _library(f) for f in (property.fget.__get__(fn), property.fset.__get__(fn), property.fdel.__get__(fn))
            if f is not None)
    if t is functools.partial:
        return _library(fn.func)
    if t is functools.cached_property:
        return _library(fn.func)
    if t is not types.FunctionType:
        if not _flags(t) & _HEAPTYPE:
            return True   # (C: a builtin, a slot wrapper, a method descriptor)
        return _program_hook(t, ("__call__", "__get__", "__set__", "__delete__")) is None
    code = fn.__code__
    if code.co_filename == "<string>" and str(fn.__module__).startswith("namedtuple_"):
        return True   # (a namedtuple's generated __new__)
    if code.co_filename.startswith(_LIBRARIES):
        return True
    return code.co_filename.startswith(_STDLIB) and not any(
        part in code.co_filename for part in ("site-packages", "dist-packages"))


def _copy_hook(cls: type) -> str | None:
    """The program's code ``copy.deepcopy`` would run to copy an object of class ``cls``, named, or
    None: a ``__deepcopy__`` of a library (a tensor's, an enum's) is all it runs. Its metaclass's
    attribute hooks (``copyreg`` reads the class), a ``__class__`` property, ``__setattr__`` and
    ``__delattr__`` (``deepcopy`` sets slots with ``setattr``) count."""
    meta = _program_hook(type(cls), ("__getattribute__", "__getattr__", "__setattr__"))
    if meta:
        return f"metaclass's {meta}"
    hook = _program_hook(cls, ("__getattribute__", "__class__"))
    if hook:
        return hook
    deep = _lookup(cls, "__deepcopy__")
    if deep is not _DELETED:
        return None if _library(deep) else "__deepcopy__"
    hooks = _COPY_HOOKS[2:] + ("__setattr__", "__delattr__") + (_ITEM_HOOKS if issubclass(cls, (list, dict)) else ())
    return _program_hook(cls, hooks)


def _program_hook(cls: type, hooks: tuple) -> str | None:
    """The first of ``hooks`` that ``cls`` finds in the program's code (not C, stdlib, torch), or None."""
    if not _is(cls, type):
        return None
    mro = _mro(cls)
    for name in hooks:
        for klass in mro:
            d = _cdict(klass)
            if name in d:
                if not _library(d[name]):
                    return name
                break
    return None


def _own_dict(o: Any) -> dict | None:
    """``o.__dict__`` read without the program's ``__getattribute__``/``__getattr__``."""
    if o is None or _is(o, type):
        return None
    try:
        d = object.__getattribute__(o, "__dict__")
    except Exception:
        return None
    return d if type(d) is dict else None


def _slots(cls: type) -> list:
    """(slot descriptor) of every ``__slots__`` name along ``cls``'s MRO."""
    out = []
    for klass in _mro(cls):
        d = _cdict(klass)
        slots = d.get("__slots__", ())
        for s in [slots] if type(slots) is str else slots if type(slots) in (tuple, list) else ():
            if type(s) is not str or s in ("__dict__", "__weakref__"):
                continue
            if s.startswith("__") and not s.endswith("__"):
                s = f"_{_type_name(klass).lstrip('_')}{s}"
            desc = d.get(s)
            if type(desc) is types.MemberDescriptorType:
                out.append(desc)
    return out


class _Isolation:
    """Prepares the memo of one ``copy.deepcopy`` so that copying runs none of the program's code:
    tensors ``deepcopy`` refuses (non-leaf) are copied by value; an object whose class has a copy
    hook written in the program (``__deepcopy__``, ``__getstate__``, ``__setstate__``, ``__new__``,
    ``__getattr__``, ...) or a subclass of a builtin container is copied field by field (a *shell*
    of its exact class, made with ``object.__new__``, filled with copies of its ``__dict__``, slots
    and items); what cannot be copied so raises :class:`NotIsolated`. ``seen`` is every original
    object reached."""

    def __init__(self, memo: dict, keep: list):
        self.memo, self.keep = memo, keep
        self.shells: list = []
        self.seen: set = set()

    def walk(self, roots: list) -> None:
        todo = list(roots)
        memo, seen = self.memo, self.seen
        while todo:
            t = todo.pop()
            if id(t) in seen or id(t) in memo or _atomic(t) or _is(t, enum.Enum):
                continue   # (an enum member is its class's: shared, like the class)
            seen.add(id(t))
            cls = type(t)
            if issubclass(cls, torch.Tensor):
                hook = _copy_hook(cls) or _program_hook(cls, ("__torch_function__", "__torch_dispatch__"))
                if hook:
                    raise NotIsolated(f"a {_qualname(cls)} tensor cannot be copied without running its {hook}")
                if not t.is_leaf and cls is torch.Tensor:
                    c = t.detach().clone()
                    if t.requires_grad:
                        c.requires_grad_(True)
                    memo[id(t)] = c
                    self.keep.append(t)
                continue
            if _np is not None and type(t) is _np.ndarray:
                continue
            if cls is types.CellType:
                try:
                    todo.append(t.cell_contents)
                except ValueError:
                    pass
                continue
            if cls is types.MethodType:
                todo.append(t.__self__)
                continue
            if cls is functools.partial:
                todo.extend([t.func, *t.args, *t.keywords.values()])
                continue
            if issubclass(cls, (dict, set, frozenset)):   # (its copy hashes every key again)
                for k in (dict if issubclass(cls, dict) else set if issubclass(cls, set) else frozenset).__iter__(t):
                    why = _program_key(k)
                    if why:
                        raise NotIsolated(f"the keys of a `{_qualname(cls)}` hold {why}, which its copy would run")
            if cls in (tuple, list, set, frozenset, collections.deque):
                todo.extend(t)
                continue
            if cls is dict and _module_dict(t):
                continue   # (module globals are copied shallowly: their values only where reached otherwise)
            if cls is dict:
                todo.extend(t.keys())
                todo.extend(t.values())
                continue
            if (issubclass(cls, _BASES) and cls not in _BASES) or _copy_hook(cls):
                self.shell(t)
            d = _own_dict(t)
            if d is not None:
                todo.append(d)
            todo.extend(desc.__get__(t) for desc in _slots(cls) if _has_slot(desc, t))
            if issubclass(cls, dict):
                todo.extend(dict.keys(t))
                todo.extend(dict.values(t))
            elif issubclass(cls, (list, tuple, set, frozenset, collections.deque, bytearray)):
                todo.extend(_builtin_base(cls).__iter__(t))   # (the builtin's items, not a subclass's __iter__)

    def shell(self, o: Any) -> None:
        """An empty object of ``o``'s exact class, made without the program's code (filled by :meth:`fill`)."""
        cls = type(o)
        base = _builtin_base(cls)
        if base is object:
            c = object.__new__(cls)
        elif base in _BASES:
            c = base.__new__(cls)
            if base is collections.deque:
                collections.deque.__init__(c, (), collections.deque.maxlen.__get__(o))
        else:
            raise NotIsolated(f"a {_qualname(cls)} (a {_type_name(base)} whose copy would run the program's code) "
                              "cannot be copied")
        self.memo[id(o)] = c
        self.keep.append(o)
        d, cd = _own_dict(o), _own_dict(c)
        if d is not None and cd is not None:
            self.memo[id(d)] = cd
            self.keep.append(d)
        self.shells.append((o, c, base))

    def fill(self) -> None:
        """Copies of each shell's original's fields, in the one memo (aliasing is kept)."""
        memo = self.memo
        for o, c, base in self.shells:
            d, cd = _own_dict(o), _own_dict(c)
            if d is not None and cd is not None:
                for k, v in d.items():
                    cd[k] = copy.deepcopy(v, memo)
            for desc in _slots(type(o)):
                if _has_slot(desc, o):
                    desc.__set__(c, copy.deepcopy(desc.__get__(o), memo))
            if base in (dict, collections.OrderedDict, collections.defaultdict):
                if base is collections.defaultdict:
                    factory = collections.defaultdict.default_factory
                    factory.__set__(c, copy.deepcopy(factory.__get__(o), memo))
                for k in base.__iter__(o):   # (keys hashed by C alone: see walk)
                    base.__setitem__(c, copy.deepcopy(k, memo), copy.deepcopy(dict.__getitem__(o, k), memo))
            elif base in (list, collections.deque, bytearray):
                base.extend(c, [copy.deepcopy(x, memo) for x in base.__iter__(o)])
            elif base is set:
                set.update(c, [copy.deepcopy(x, memo) for x in set.__iter__(o)])


def _has_slot(desc: Any, o: Any) -> bool:
    try:
        desc.__get__(o)
    except AttributeError:
        return False
    return True


class _SharedWrites:
    """The sandbox's ``setattr``/``delattr``/``hasattr`` (and ``object.__setattr__``/``__delattr__``):
    a write on a copy is made on the copy; a write on a class, function or module (which no copy
    can stand for: they are shared by identity) is kept aside, in ``writes``, and compared with
    what eager left on the object; a write on any other original object raises NotIsolated."""

    def __init__(self, memo: dict, seen: set):
        self.copies = {id(c) for k, c in memo.items() if k != id(c) and k != id(memo)}
        self.originals = seen | {k for k, c in memo.items() if k == id(c)}
        self.writes: dict[int, tuple[Any, dict]] = {}

    def _where(self, t: Any, name: str) -> bool:
        """True: write ``t`` itself (a copy, or an object the mock made); False: keep it aside."""
        if id(t) in self.copies:
            return True
        if _is(t, (type, types.FunctionType, types.ModuleType)):
            return False
        if id(t) in self.originals:
            raise NotIsolated(f"the record writes `{name}` on a {type(t).__name__} that check mode shares with "
                              "the program (it could not be copied)")
        return True

    def setattr(self, t: Any, name: str, v: Any, _set: Any = setattr) -> None:
        if self._where(t, name):
            _set(t, name, v)
        else:
            self.writes.setdefault(id(t), (t, {}))[1][name] = v

    def delattr(self, t: Any, name: str, _del: Any = delattr) -> None:
        if self._where(t, name):
            _del(t, name)
        else:
            self.writes.setdefault(id(t), (t, {}))[1][name] = _DELETED

    def hasattr(self, t: Any, name: str) -> bool:
        kept = self.writes.get(id(t))
        if kept is not None and name in kept[1]:
            return kept[1][name] is not _DELETED
        return hasattr(t, name)

    def namespace(self) -> dict:
        return {"setattr": self.setattr, "delattr": self.delattr, "hasattr": self.hasattr}

    def object_setattr(self, t: Any, name: str, v: Any) -> None:
        self.setattr(t, name, v, object.__setattr__)

    def object_delattr(self, t: Any, name: str) -> None:
        self.delattr(t, name, object.__delattr__)


def _cache_answer(fn: Any):
    """The sandbox's stand-in for a ``functools.lru_cache`` function the mock calls (for the hit eager
    makes): the result the cache holds for the call, read without a hit, a miss or a change of order."""
    def answer(*args, **kwargs):
        for a in (*args, *kwargs.values()):
            why = _program_key(a)   # (the table's lookup would hash and compare it)
            if why:
                raise NotIsolated(f"the record calls the cached `{fn.__qualname__}` with {why}, which the "
                                  "lookup in its table would run")
        entry = lru_cache_entry(fn, args, kwargs)
        got = entry.result() if entry is not None else NO_VALUE
        if got is NO_VALUE:
            raise NotIsolated(f"the cache of `{fn.__qualname__}` holds no answer the record's call could read "
                              "without running the function")
        return got
    answer.__name__ = getattr(fn, "__name__", "cached")
    return answer


def _shared_state(values: list) -> dict[int, tuple[Any, dict]]:
    """The attributes of the classes, functions and modules among ``values`` before the call
    (shallow): what eager changes on them is compared with the record's writes kept aside."""
    out = {}
    for v in values:
        if _is(v, (type, types.FunctionType, types.ModuleType)) and id(v) not in out and \
                not (_is(v, types.ModuleType) and str((_own_dict(v) or {}).get("__name__")).split(".")[0]
                     in ("torch", "builtins", "magpy")):
            d = _own_dict(v) if not _is(v, type) else _cdict(v)
            if d is not None:
                out[id(v)] = (v, dict(d))
    return out


def evaluate(record: Record, fetched: Any) -> Evaluation:
    """Run ``record``'s mock on a sandbox copy of what it reads and writes: no object of the program
    is changed and none of its code runs (what cannot be evaluated so is not: ``skipped`` says why)."""
    ev = Evaluation(record)
    if record.split is not None:
        ev.skipped = ("the record is split at a dynamic operation and its continuation runs the program's own "
                      "code: only its guard was checked")
        return ev
    mock = record.mock
    g = mock.__globals__
    names = sorted(set(re.findall(r"\bK\d+\b", record.mock_source)))
    for name in sorted(set(re.findall(r"\b(K\d+)\(", record.mock_source))):
        fn = g[name]
        if type(fn) in (types.FunctionType, types.MethodType) and not _library(fn) and not _effect(fn):
            ev.skipped = (f"the record calls the program's function `{fn.__qualname__}`, which check "
                          "mode does not run a second time: only its guard was checked")
            return ev
    gens = g.get("_G")
    # The generators the mock draws from stay shared (a copy of one and a draw from the other would
    # part ways): their states are put back after the sandbox run. A compiled callable is MagPy's.
    memo: dict = {id(v): v for v in [*(gens or ()), *(g[n] for n in names)]
                  if v is not None and (_is(v, CompiledCallable) or any(v is x for x in gens or ()))}
    keep: list = []
    memo[id(memo)] = keep   # (deepcopy's keep-alive list: every original that was copied)
    ns = dict(g)
    roots = [fetched] + [g[n] for n in names]
    iso = _Isolation(memo, keep)
    try:
        with torch._C.DisableTorchFunctionSubclass():   # (copying is MagPy's, not the program's)
            iso.walk(roots)
            new_fetched = _copy_state(g, ns, names, fetched, memo, keep, ev)
            iso.fill()
            _own_dicts(memo, keep)
    except NotIsolated as e:
        ev.skipped = f"{e}: only the record's guard was checked"
        return ev
    except Exception as e:
        ev.skipped = (f"the state the record reads could not be copied ({type(e).__name__}: {e}): only its "
                      "guard was checked")
        return ev
    writes = _SharedWrites(memo, iso.seen)
    ns.update(writes.namespace())
    for name in names:
        v = g[name]
        if v is object.__setattr__:
            ns[name] = writes.object_setattr
        elif v is object.__delattr__:
            ns[name] = writes.object_delattr
        elif _is(v, functools._lru_cache_wrapper):
            ns[name] = _cache_answer(v)
    ev.shared = _shared_state(roots[1:] + (list(fetched) if type(fetched) in (tuple, list) else [fetched]))
    sandbox = types.FunctionType(mock.__code__, ns, mock.__name__, mock.__defaults__, mock.__closure__)
    state = rng_and_grad_state()
    gen_states = save_states(gens) if gens else None
    try:
        out = sandbox(new_fetched)
        if out is UNHELD:
            ev.unheld = True
        else:
            ev.out = out
    except NotIsolated as e:
        ev.skipped = f"{e}: only the record's guard was checked"
        return ev
    except Exception as e:
        ev.raised = e
    finally:
        set_rng_and_grad_state(state)
        if gens:
            restore_states(gens, gen_states)
    ev.kept_writes = writes.writes
    for key, (obj, _) in writes.writes.items():
        if key not in ev.shared:   # (not written by the sandbox: its attributes are still those before the call)
            ev.shared.update(_shared_state([obj]))
    ev.memo, ev.originals = memo, _reachable(keep, memo, roots)
    return ev


def _copy_state(g: dict, ns: dict, names: list, fetched: Any, memo: dict, keep: list, ev: Evaluation) -> Any:
    """Copies of what the guard fetched and of the mock's own constants into ``ns``, one memo."""
    new_fetched = copy.deepcopy(fetched, memo)
    deferred, dicts = [], []
    for name in names:
        v = g[name]
        if type(v) is types.BuiltinMethodType and _is(v.__self__, _CONTAINERS):   # (`LOG.append`)
            c = copy.deepcopy(v.__self__, memo)
            ns[name] = _lookup(_builtin_base(type(c)), v.__name__).__get__(c, type(c))
        elif _effect(v):
            ns[name] = _silenced(v)
            ev.notes.append(f"what the record prints or logs ({getattr(v, '__name__', v)}) is not compared")
        elif _atomic(v) or _is(v, (CompiledCallable, enum.Enum)):
            continue
        elif _module_dict(v):
            deferred.append(name)
        elif type(v) is dict:
            dicts.append(name)   # (perhaps an object's __dict__: copied once its owner is)
        elif type(v) is types.CellType:
            if id(v) not in memo:
                try:
                    memo[id(v)] = types.CellType(copy.deepcopy(v.cell_contents, memo))
                except ValueError:
                    memo[id(v)] = types.CellType()
                keep.append(v)
            ns[name] = memo[id(v)]
        else:
            ns[name] = copy.deepcopy(v, memo)
    _own_dicts(memo, keep)
    for name in dicts:
        ns[name] = copy.deepcopy(g[name], memo)
    _own_dicts(memo, keep)
    for name in deferred:
        d = g[name]
        if id(d) not in memo:
            memo[id(d)] = {k: memo.get(id(x), x) for k, x in d.items()}
            keep.append(d)
        ns[name] = memo[id(d)]
    return new_fetched


def _reachable(keep: list, memo: dict, roots: list) -> list:
    """The copied originals that are outside state: reachable from what the mock reads through
    containers, attributes and cells (``deepcopy`` also memoizes temporaries, such as the state
    tuples ``__reduce_ex__`` makes, which nothing outside holds)."""
    copied = {id(o) for o in keep}
    found: dict[int, Any] = {}
    todo = list(roots)
    while todo:
        o = todo.pop()
        t = type(o)
        if id(o) in found or _atomic(o) or issubclass(t, torch.Tensor) and id(o) not in copied:
            continue
        if id(o) in copied:
            found[id(o)] = o
        elif not issubclass(t, (tuple, list, dict)):
            continue   # (an object that was not copied: what it holds was not either)
        if issubclass(t, torch.Tensor):
            continue
        if issubclass(t, (tuple, list, set, frozenset, collections.deque)):
            todo.extend(_builtin_base(t).__iter__(o))   # (the builtin's items: not a subclass's __iter__)
        elif issubclass(t, dict):
            todo.extend(dict.keys(o))
            todo.extend(dict.values(o))
        elif t is types.CellType:
            try:
                todo.append(o.cell_contents)
            except ValueError:
                pass
            continue
        elif t is types.MethodType:
            todo.append(o.__self__)
            continue
        d = _own_dict(o)
        if d is not None:
            todo.append(d)
        todo.extend(desc.__get__(o) for desc in _slots(t) if _has_slot(desc, o))
    return [o for o in keep if id(o) in found]


def _own_dicts(memo: dict, keep: list) -> None:
    """``deepcopy`` of an object copies its ``__dict__`` (or what ``__getstate__`` makes of it) into the
    copy's own dict: the original's ``__dict__`` is the copy's (a mock writes ``K[obj.__dict__]``)."""
    for o in list(keep):
        c = memo.get(id(o))
        d = _own_dict(o) if c is not None and c is not o else None
        cd = _own_dict(c)
        if d is not None and cd is not None and memo.get(id(d)) is not cd:
            if id(d) not in memo:
                keep.append(d)
            memo[id(d)] = cd


# -- comparison -------------------------------------------------------------------------------------------

def tolerance(dtype: torch.dtype, backend: str) -> tuple[float, float]:
    """(rtol, atol): the eager backend runs the program's operators; others may reorder and fuse."""
    low = dtype in (torch.float16, torch.bfloat16)
    if backend == "eager":
        return (1e-3, 1e-3) if low else (1e-5, 1e-6)
    return (2e-2, 2e-2) if low else (1e-3, 1e-4)


_VALUE_BASES = (bool, int, float, complex, str, bytes)


def _base_value(v: Any) -> Any:
    """The builtin value of ``v``, an int, float, complex, str or bytes or an object of a subclass,
    read in C (no ``__float__``, ``__str__``... of the program's)."""
    t = type(v)
    if t in _VALUES:
        return v
    if issubclass(t, float):
        return float.__float__(v)
    if issubclass(t, int):
        return int.__int__(v)
    if issubclass(t, str):
        return str.__str__(v)
    if issubclass(t, bytes):
        return bytes.__getitem__(v, slice(None))
    return complex(complex.real.__get__(v), complex.imag.__get__(v))


def _short(v: Any, depth: int = 0) -> str:
    """``v`` described for a report without running the program's code: the repr of a builtin
    value, the type name and id of an object of a user's class (its ``__repr__`` is not run)."""
    t = type(v)
    if issubclass(t, torch.Tensor):
        return f"tensor{tuple(torch.Tensor.shape.__get__(v))} {str(torch.Tensor.dtype.__get__(v)).replace('torch.', '')}"
    if t in _VALUES:
        r = repr(v) if t is not slice else f"slice({_short(v.start)}, {_short(v.stop)}, {_short(v.step)})"
    elif issubclass(t, _VALUE_BASES):
        r = f"{_qualname(t)}({_base_value(v)!r})"
    elif t in (tuple, list, set, frozenset) and depth < 2:
        items = [_short(x, depth + 1) for x in t.__iter__(v)]
        r = ", ".join(items[:8]) + (", ..." if len(items) > 8 else "")
        r = {tuple: f"({r}{',' if len(items) == 1 else ''})", list: f"[{r}]"}.get(t, f"{t.__name__}({{{r}}})")
    elif t is dict and depth < 2:
        items = [f"{_short(k, depth + 1)}: {_short(x, depth + 1)}" for k, x in zip(dict.keys(v), dict.values(v))]
        r = "{" + ", ".join(items[:8]) + (", ..." if len(items) > 8 else "") + "}"
    elif _np is not None and t is _np.ndarray:
        r = repr(v)
    elif issubclass(t, type):
        r = f"<class {_qualname(v)}>"
    elif t is types.FunctionType:
        r = f"<function {v.__qualname__}>"
    elif t is types.ModuleType:
        r = f"<module {(_own_dict(v) or {}).get('__name__')!r}>"
    else:
        r = f"<{_qualname(t)} object at {id(v):#x}>"
    return r if len(r) <= 80 else r[:77] + "..."


def _key_text(k: Any) -> str:
    return repr(k) if _plain(k) else _short(k)


def _exc_text(e: BaseException) -> str:
    """``type: message`` of an exception, without its ``__str__`` (or its arguments' ``__repr__``) of the program's."""
    t = type(e)
    name = _type_name(t)
    if _program_hook(t, ("__str__", "__repr__")) is None and all(_plain(a) for a in BaseException.args.__get__(e)):
        return f"{name}: {BaseException.__str__(e)}"
    return name


class _Compare:
    def __init__(self, ev: Evaluation, backend: str, roots: list):
        self.ev = ev
        self.backend = backend
        self.roots = roots
        self.memo = ev.memo
        self.inv = {id(ev.memo[id(o)]): o for o in ev.originals if id(o) in ev.memo}
        self.seen: set = set()
        self._names: dict | None = None

    # names of outside objects, for the report (found only when one differs)
    def name(self, o: Any) -> str:
        if self._names is None:
            self._names = _names(self.roots)
        n = self._names.get(id(o))
        return n if n is not None else f"an outside {_qualname(type(o))}"

    def same(self, e: Any, m: Any, path: str, depth: int = 0) -> str | None:
        """None if eager's ``e`` and the record's ``m`` agree, else what differs at ``path``."""
        orig = self.inv.get(id(m))
        if orig is not None:
            if e is orig:
                return None
            return f"{path}: eager has {_short(e)}, the record would have the outside object {self.name(orig)}"
        if e is m:
            return None
        c = self.memo.get(id(e))
        if c is not None and c is not e:
            return f"{path}: eager has the outside object {self.name(e)}, the record would have {_short(m)}"
        if type(e) is not type(m):
            return f"{path}: eager has a {_qualname(type(e))} ({_short(e)}), the record would have a " \
                   f"{_qualname(type(m))} ({_short(m)})"
        return self.contents(e, m, path, depth)

    def contents(self, e: Any, m: Any, path: str, depth: int = 0) -> str | None:
        """What differs between ``e`` and ``m`` (of one type), read without the program's code: a
        subclass of a builtin is compared through the builtin's methods (``list.__iter__``,
        ``dict.keys``), and its attributes; an object's ``__eq__`` of the program's is not run."""
        key = (id(e), id(m))
        if key in self.seen or depth > 200:
            return None
        self.seen.add(key)
        t = type(e)
        if issubclass(t, torch.Tensor):
            return self.tensor(e, m, path)
        if issubclass(t, _VALUE_BASES):
            a, b = _base_value(e), _base_value(m)
            # (a Python number the record computes is eager's exactly with the eager backend: it runs
            # the program's operators; another backend's tensors, and numbers read from them, may round)
            if not _same_value(a, b, self.backend == "eager", *tolerance(torch.float64, self.backend)):
                return f"{path}: eager has {a!r}, the record would have {b!r}"
            return self.fields(e, m, path, depth)
        if issubclass(t, (tuple, list)):
            base = tuple if issubclass(t, tuple) else list
            a, b = list(base.__iter__(e)), list(base.__iter__(m))
            if len(a) != len(b):
                return f"{path}: eager has {len(a)} items, the record would have {len(b)}"
            for i, (x, y) in enumerate(zip(a, b)):
                d = self.same(x, y, f"{path}[{i}]", depth + 1)
                if d:
                    return d
            return self.fields(e, m, path, depth)
        if issubclass(t, dict):
            d = self.mapping(e, m, path, depth)
            return d or self.fields(e, m, path, depth)
        if issubclass(t, (set, frozenset)):
            d = self.set(e, m, path)
            return d or self.fields(e, m, path, depth)
        if issubclass(t, collections.deque):
            d = self.contents(list(collections.deque.__iter__(e)), list(collections.deque.__iter__(m)), path, depth + 1)
            return d or self.fields(e, m, path, depth)
        if t is types.CellType:
            try:
                a = e.cell_contents
            except ValueError:
                a = _EMPTY
            try:
                b = m.cell_contents
            except ValueError:
                b = _EMPTY
            return self.same(a, b, path, depth + 1)
        if _np is not None and (t is _np.ndarray or issubclass(t, _np.generic)):
            ok = e.shape == m.shape and e.dtype == m.dtype and bool(
                _np.allclose(e, m, equal_nan=True) if e.dtype.kind in "fc" else _np.array_equal(e, m))
            return None if ok else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        if t in _VALUES:   # (None, range, slice, Ellipsis)
            return None if _plain(e) and _plain(m) and e == m or e is m else \
                f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        if issubclass(t, CompiledCallable):
            return None   # (MagPy's own: its original module is compared)
        if not issubclass(t, (type, types.ModuleType, types.FunctionType)) and \
                (_own_dict(e) is not None or _slots(t)):
            return self.fields(e, m, path, depth)
        try:
            if _lookup(t, "__eq__") is object.__dict__["__eq__"]:
                # (equal only to itself: compare what pickling it would keep, e.g. a bit generator's state)
                if _program_hook(t, ("__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs_ex__",
                                     "__getnewargs__", "__getattribute__", "__getattr__")) is None and \
                        _program_hook(type(t), ("__getattribute__", "__getattr__")) is None:
                    re_, rm = e.__reduce_ex__(4), m.__reduce_ex__(4)
                    if type(re_) is tuple and type(rm) is tuple:
                        return self.contents(tuple(re_[1:3]), tuple(rm[1:3]), path, depth + 1)
            elif _program_hook(t, ("__eq__",)) is None:   # (the program's __eq__ is not run)
                eq = e == m
                if type(eq) is bool:
                    return None if eq else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        except Exception:
            pass
        self.note(f"{path}: a {_qualname(t)} was not compared")
        return None

    def note(self, note: str) -> None:
        if note not in self.ev.notes:
            self.ev.notes.append(note)

    def fields(self, e: Any, m: Any, path: str, depth: int) -> str | None:
        """The attributes (``__dict__`` and slots) of two objects of one class."""
        t = type(e)
        de, dm = _own_dict(e), _own_dict(m)
        if de is not None and dm is not None:
            d = self.contents(de, dm, f"{path} (attributes)", depth + 1)
            if d:
                return d
        for desc in _slots(t):
            a = desc.__get__(e) if _has_slot(desc, e) else _EMPTY
            b = desc.__get__(m) if _has_slot(desc, m) else _EMPTY
            if a is _EMPTY or b is _EMPTY:
                if a is not b:
                    return f"{path}.{desc.__name__}: {'only eager' if b is _EMPTY else 'only the record'} sets it"
                continue
            d = self.same(a, b, f"{path}.{desc.__name__}", depth + 1)
            if d:
                return d
        return None

    def mapping(self, e: dict, m: dict, path: str, depth: int) -> str | None:
        """Two dicts (of one class), keys in order, then values, without hashing a key of the program's."""
        it = _builtin_base(type(e)).__iter__   # (an OrderedDict's own order)
        ke, km = list(it(e)), list(it(m))
        if all(_plain(k) for k in ke) and all(_plain(k) for k in km):
            if ke != km:
                extra = [k for k in ke if not dict.__contains__(m, k)]
                missing = [k for k in km if not dict.__contains__(e, k)]
                if extra or missing:
                    return f"{path}: keys {extra} only in eager's, {missing} only in the record's"
                return f"{path}: keys in another order (eager {ke}, the record {km})"
        else:
            for k in ke + km:
                why = _program_key(k)
                if why:
                    self.note(f"{path}: a `{_qualname(type(e))}` whose keys hold {why} was not compared")
                    return None
            if len(ke) != len(km):
                return f"{path}: eager has {len(ke)} keys, the record would have {len(km)}"
            for i, (a, b) in enumerate(zip(ke, km)):
                d = self.same(a, b, f"{path} key #{i}", depth + 1)
                if d:
                    return d
        owner_attr = path.endswith("(attributes)")
        base = path[:-len(" (attributes)")] if owner_attr else path
        for a, b in zip(ke, km):
            sub = f"{base}.{a}" if owner_attr and type(a) is str else f"{path}[{_key_text(a)}]"
            d = self.same(dict.__getitem__(e, a), dict.__getitem__(m, b), sub, depth + 1)
            if d:
                return d
        return None

    def set(self, e: Any, m: Any, path: str) -> str | None:
        """Two sets: builtin values by value, outside objects by identity (the record's copy stands
        for its original); objects each side made are not compared (nor hashed again)."""
        base = set if issubclass(type(e), set) else frozenset
        a, b = list(base.__iter__(e)), list(base.__iter__(m))
        originals = {id(o) for o in self.inv.values()}
        ka, kb = set(), set()
        for items, out, mine in ((a, ka, False), (b, kb, True)):
            for x in items:
                if _plain(x):
                    out.add(("value", x))
                    continue
                x = self.inv.get(id(x), x) if mine else x
                if not (_atomic(x) or id(x) in originals):
                    self.note(f"{path}: a {_qualname(type(e))} of objects made in the call was not compared")
                    return None
                out.add(("object", id(x)))
        return None if ka == kb else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"

    def tensor(self, e: torch.Tensor, m: torch.Tensor, path: str) -> str | None:
        if e.shape != m.shape or e.dtype != m.dtype or e.device != m.device:
            return (f"{path}: eager has a tensor {tuple(e.shape)} {e.dtype} on {e.device}, the record would have "
                    f"{tuple(m.shape)} {m.dtype} on {m.device}")
        if e.requires_grad != m.requires_grad:
            return f"{path}: requires_grad is {e.requires_grad} in eager, {m.requires_grad} from the record"
        if e.device.type == "meta":
            return None
        with torch.no_grad():
            a, b = e.detach(), m.detach()
            if a.layout != torch.strided:
                a, b = a.to_dense(), b.to_dense()
            if not (a.is_floating_point() or a.is_complex()):
                return None if torch.equal(a, b) else f"{path}: tensor values differ"
            # (the artifact's one rule on tensor values, experiments/compare.py; the bar is check mode's)
            from experiments.compare import tensor_gap

            worst, bad = tensor_gap(a, b, *tolerance(a.dtype, self.backend))
        if not bad:
            return None
        return f"{path}: tensor values differ ({f'largest difference {worst:.4g}' if worst else 'a NaN facing a number'})"


_EMPTY = object()


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if a != a and b != b:
        return True
    return math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or a == b


def _same_value(a: Any, b: Any, exact: bool = True, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Builtin values ``a``, ``b`` (exact types, or tuples of them) equal: floats exactly (the sign of
    a zero too, NaN equal to NaN), or within ``rtol``/``atol`` where ``exact`` is False."""
    t = type(a)
    if t is not type(b):
        return False
    if t is float:
        if a != a or b != b:
            return a != a and b != b
        if exact:
            return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
        return _close(a, b, rtol, atol)
    if t is complex:
        return _same_value(a.real, b.real, exact, rtol, atol) and _same_value(a.imag, b.imag, exact, rtol, atol)
    if t in (tuple, torch.Size):
        return len(a) == len(b) and all(_same_value(x, y, exact, rtol, atol) for x, y in zip(a, b))
    return a == b


def _names(roots: list, limit: int = 50000) -> dict[int, str]:
    """Names of the objects reachable from ``roots`` (``self.fc.weight``, ``args[0]``, ``mod.CACHE``)."""
    names: dict[int, str] = {}
    todo = list(roots)
    i = 0
    while i < len(todo) and i < limit:
        name, obj, style = todo[i] if len(todo[i]) == 3 else (*todo[i], None)
        i += 1
        t = type(obj)
        if id(obj) in names or _atomic(obj):
            continue
        names[id(obj)] = name
        if issubclass(t, torch.nn.Module):
            d = _own_dict(obj) or {}
            todo.append((f"{name} (attributes)", d, name))
            for attr in ("_parameters", "_buffers", "_modules"):
                sub = d.get(attr)
                if type(sub) is dict:
                    for k, v in sub.items():
                        todo.append((f"{name}.{k}", v))
            for k, v in d.items():
                todo.append((f"{name}.{k}", v))
        elif issubclass(t, dict):
            for k, v in zip(list(dict.keys(obj)), list(dict.values(obj))):
                todo.append((f"{style}.{k}" if style and type(k) is str else f"{name}[{_key_text(k)}]", v))
        elif issubclass(t, (list, tuple)):
            for j, v in enumerate(_builtin_base(t).__iter__(obj)):
                todo.append((f"{name}[{j}]", v))
        elif t is types.CellType:
            try:
                todo.append((name, obj.cell_contents))
            except ValueError:
                pass
        elif _own_dict(obj) is not None and not issubclass(t, torch.Tensor):
            todo.append((f"{name} (attributes)", _own_dict(obj), name))
            for k, v in _own_dict(obj).items():
                todo.append((f"{name}.{k}", v))
    return names


def roots_of(target: Any, fn: Any, self_obj: Any, args: tuple, kwargs: dict) -> list:
    """Where outside objects are named from: the module (``self``), the arguments, the globals and
    closure cells of the compiled function."""
    roots: list = []
    if _is(target, torch.nn.Module):
        roots.append(("self", target))
    elif self_obj is not None:
        roots.append(("self", self_obj))
    code = fn.__code__ if type(fn) is types.FunctionType else None
    params = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if self_obj is not None and params:
        params = params[1:]
    for i, a in enumerate(args):
        roots.append((params[i] if i < len(params) else f"args[{i}]", a))
    for k, v in kwargs.items():
        roots.append((k, v))
    if code is not None:
        for cell, var in zip(fn.__closure__ or (), code.co_freevars):
            roots.append((var, cell))
        g = fn.__globals__
        mod = g.get("__name__", "?")
        roots.append((f"{mod} globals", g, mod))
    return roots


def compare(ev: Evaluation, raised: BaseException | None, result: Any, backend: str, roots: list) -> str | None:
    """What differs between the record's answer (``ev``) and eager's (``result`` or ``raised``), or None."""
    with torch._C.DisableTorchFunctionSubclass():   # (MagPy's reads of the tensors are not the program's)
        return _compare(ev, raised, result, backend, roots)


def _compare(ev: Evaluation, raised: BaseException | None, result: Any, backend: str, roots: list) -> str | None:
    if ev.skipped is not None:
        return None
    if ev.raised is not None or raised is not None:
        if ev.raised is not None and raised is not None and type(ev.raised) is type(raised):
            return None
        said = f"raised {_exc_text(raised)}" if raised is not None else "returned"
        would = f"raise {_exc_text(ev.raised)}" if ev.raised is not None else "return"
        return f"eager {said}, the record would {would}"
    cmp = _Compare(ev, backend, roots)
    d = cmp.same(result, ev.out, "return value")
    if d:
        return d
    d = _compare_shared(ev, cmp)
    if d:
        return "outside state " + d
    owned = {id(d) for d in map(_own_dict, ev.originals) if d is not None}
    module_dicts = []
    for o in ev.originals:
        c = ev.memo.get(id(o))
        if c is None or c is o or id(o) in owned or _is(o, CompiledCallable):
            continue
        if _module_dict(o):
            module_dicts.append((o, c))
            continue
        d = cmp.contents(o, c, _state_name(cmp, o))
        if d:
            return "outside state " + d
    for o, c in module_dicts:
        mod = o.get("__name__", "?")
        for k in set(o) | set(c):
            if k not in c or k not in o:
                return f"outside state {mod}.{k}: {'only eager' if k in o else 'only the record'} binds it"
            d = cmp.same(o[k], c[k], f"{mod}.{k}")
            if d:
                return "outside state " + d
    return None


def _compare_shared(ev: Evaluation, cmp: _Compare) -> str | None:
    """The attributes of the classes, functions and modules the record reads or writes: each one
    eager changed, or the record writes (kept aside, see _SharedWrites), must be what the record
    would leave."""
    kept = ev.kept_writes
    for key, (obj, before) in ev.shared.items():
        after = _cdict(obj) if _is(obj, type) else (_own_dict(obj) or {})
        writes = kept.get(key, (obj, {}))[1]
        changed = [k for k in set(after) | set(before) if after.get(k, _DELETED) is not before.get(k, _DELETED)]
        for k in sorted(set(changed) | set(writes), key=str):
            e = after.get(k, _DELETED)
            m = writes[k] if k in writes else before.get(k, _DELETED)
            path = f"{_owner_name(obj)}.{k}"
            if e is _DELETED or m is _DELETED:
                if e is not m:
                    return f"{path}: {'only eager' if m is _DELETED else 'only the record'} binds it"
                continue
            d = cmp.same(e, m, path)
            if d:
                return d
    return None


def _owner_name(obj: Any) -> str:
    if _is(obj, type):
        return _qualname(obj)
    if type(obj) is types.FunctionType:
        return obj.__qualname__
    if _is(obj, types.ModuleType):
        return str((_own_dict(obj) or {}).get("__name__", "module"))
    return _qualname(type(obj))


def _state_name(cmp: _Compare, o: Any) -> str:
    return cmp.name(o)


# -- which guard should have failed -----------------------------------------------------------------------

def changed_reads(record: Record, args: tuple, kwargs: dict) -> list[str]:
    """Values the record's run read from outside that are different now (evaluated before the call
    runs): each is a guard that should have failed, with the user's file:line that read it."""
    out = []
    guards = record.guards_text.splitlines()
    with torch._C.DisableTorchFunctionSubclass():
        return _changed_reads(record, args, kwargs, guards, out)


def _changed_reads(record: Record, args: tuple, kwargs: dict, guards: list, out: list) -> list[str]:
    for src, value, where in record.reads:
        try:
            now = _read_now(src, args, kwargs)
        except Exception:
            now = _GONE
        if now is _UNREAD:
            continue   # (it cannot be read without the program's code: not named)
        if now is not _GONE and type(now) is type(value) and _same_value(now, value):
            continue   # (read values are builtins: exact types, compared in C)
        desc = src.describe()
        guard = next((line for line in guards if line.startswith(f"{desc} == ") or line.startswith(f"{desc} is ")),
                     None)
        said = f"`{desc}` was {value!r} when the record was made and is " + \
            ("gone" if now is _GONE else _short(now)) + " now"
        if where:
            said += f" (read at {where})"
        said += f"; its guard `{guard}` passed" if guard else "; no guard of the record checks it"
        out.append(said)
    return out


_GONE = object()
_UNREAD = object()


def _read_now(src: Any, args: tuple, kwargs: dict) -> Any:
    """The value at ``src`` now, read as the guard reads it but without the program's code (an
    attribute read through C or a class dict, an item through the builtin's method): _UNREAD where
    a step would run the program's code (its ``__getattribute__``, a property, a ``__getitem__``)."""
    t = type(src)
    if t in (ArgSource, SelfArgsSource):   # (the call's own tuple and dict)
        pool = ConstPool()
        return eval(f"lambda args, kwargs: {src.expr(pool)}", pool.namespace())(args, kwargs)   # noqa: S307
    if t is ConstSource:
        return src.value
    if t is GlobalSource:
        g = src.globals_dict
        return dict.__getitem__(g, src.name) if type(g) is dict else _UNREAD
    if t not in (AttrSource, ItemSource, CellSource, DerefSource):
        return _UNREAD
    b = _read_now(src.base, args, kwargs)
    if b is _UNREAD:
        return b
    tb = type(b)
    if t is CellSource:
        return b.cell_contents if tb is types.CellType else _UNREAD
    if t is DerefSource:
        return weakref.ref.__call__(b) if issubclass(tb, weakref.ref) else _UNREAD
    if t is ItemSource:
        key = src.key
        if _program_key(key):
            return _UNREAD
        if issubclass(tb, dict):
            got = dict.get(b, key, _GONE)   # (not a subclass's __missing__)
            if got is _GONE:
                raise KeyError(key)
            return got
        if issubclass(tb, (list, tuple)):
            return _builtin_base(tb).__getitem__(b, key)
        getitem = _lookup(tb, "__getitem__")
        if getitem is _DELETED or type(getitem) in (staticmethod, classmethod) or not _library(getitem):
            return _UNREAD
        return getitem(b, key)
    name, via = src.name, src.via
    if via:
        d = _own_dict(b)
        if d is None:
            return _UNREAD
        table = d if via == "__dict__" else d.get(via)
        if type(table) is not dict:
            return _UNREAD
        return dict.__getitem__(table, name)
    return _attr_now(b, name)


def _attr_now(b: Any, name: str) -> Any:
    """``getattr(b, name)`` where CPython's lookup runs none of the program's code, else _UNREAD."""
    tb = type(b)
    if issubclass(tb, type):
        if _program_hook(tb, ("__getattribute__", "__getattr__")) or _lookup(tb, name) is not _DELETED:
            return _UNREAD   # (the metaclass's hooks, or one of its attributes)
        v = _lookup(b, name)
        if v is _DELETED:
            raise AttributeError(name)
        if _lookup(type(v), "__get__") is _DELETED:
            return v
        return v.__func__ if type(v) is staticmethod else _UNREAD
    if _program_hook(tb, ("__getattribute__", "__getattr__")):
        return _UNREAD
    if issubclass(tb, types.ModuleType):
        d = _own_dict(b)
        if d is None or name not in d:
            return _UNREAD
        return d[name]
    v = _lookup(tb, name)
    get = _lookup(type(v), "__get__") if v is not _DELETED else _DELETED
    data = get is not _DELETED and (_lookup(type(v), "__set__") is not _DELETED or
                                    _lookup(type(v), "__delete__") is not _DELETED)
    if data:   # (a slot, a property: before the instance's dict)
        return type(v).__get__(v, b, tb) if _library(v) else _UNREAD
    d = _own_dict(b)
    if d is not None and name in d:
        return d[name]
    if v is _DELETED:
        return _UNREAD
    if get is _DELETED:
        return v
    if type(v) is types.FunctionType:
        return types.MethodType(v, b)
    return type(v).__get__(v, b, tb) if _library(v) else _UNREAD


def divergence_message(name: str, rec: Any, records: tuple, differs: str, suspects: list[str]) -> str:
    """What check mode says of record ``rec`` (one of ``records``) whose call answered differently
    from eager: which record, what differs, and the guard that should have failed (``suspects``)
    or, when none is known, the record's guards."""
    number = next((len(records) - i for i, r in enumerate(records) if r is rec), 0)
    msg = f"magpy check: {name}: the record (#{number} of {len(records)}) whose guard passed " \
          f"answers differently from eager: {differs}"
    if suspects:
        msg += "; the guard that should have failed: " + "; ".join(suspects[:3])
    else:
        msg += "; no value the record's run read from outside has changed (its guards: " + \
            "; ".join(rec.guards_text.splitlines()[:6]) + ")"
    if rec.split:
        msg += f"; the record is split: {rec.split}"
    return msg
