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
from dataclasses import dataclass, field
from typing import Any

import torch

from . import effects
from .cache import UNHELD, Record
from .cached_calls import lru_cache_entry
from .compiled_module import CompiledCallable
from .objmodel import NO_VALUE
from .redraw import restore_states, save_states
from .source import ConstPool
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


_ATOMIC = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodDescriptorType,
           types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.CodeType, torch.dtype,
           torch.device, torch.layout, torch.memory_format, str, bytes, int, float, complex, bool, type(None),
           range, slice, torch.Size)


_CONTAINERS = (list, dict, set, bytearray, collections.deque)


def _module_dict(v: Any) -> bool:
    """A module's globals (a mock's target for global writes): copied shallowly."""
    if type(v) is not dict:
        return False
    name = v.get("__name__")
    return (isinstance(name, str) and getattr(sys.modules.get(name), "__dict__", None) is v) or "__builtins__" in v


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
_HEAPTYPE = 1 << 9
_BASES = (dict, list, set, collections.deque, bytearray, collections.OrderedDict, collections.defaultdict)


class NotIsolated(Exception):
    """The record's evaluation would reach the program's own objects or code: it is not evaluated."""


def _library(fn: Any) -> bool:
    """Is ``fn`` C code, or Python of the standard library, torch, numpy or MagPy (not the program's)?"""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename == "<string>" and str(getattr(fn, "__module__", "")).startswith("namedtuple_"):
        return True   # (a namedtuple's generated __new__)
    if code is None or code.co_filename.startswith(_LIBRARIES):
        return True
    return code.co_filename.startswith(_STDLIB) and not any(
        part in code.co_filename for part in ("site-packages", "dist-packages"))


def _copy_hook(cls: type) -> str | None:
    """The program's code ``copy.deepcopy`` would run to copy an object of class ``cls``, named, or
    None: a ``__deepcopy__`` of a library (a tensor's, an enum's) is all it runs."""
    if _program_hook(cls, ("__getattribute__",)):
        return "__getattribute__"
    for klass in cls.__mro__:
        if "__deepcopy__" in klass.__dict__:
            return None if _library(klass.__dict__["__deepcopy__"]) else "__deepcopy__"
    hooks = _COPY_HOOKS[2:] + (_ITEM_HOOKS if issubclass(cls, (list, dict)) else ())
    return _program_hook(cls, hooks)


def _program_hook(cls: type, hooks: tuple) -> str | None:
    """The first of ``hooks`` that ``cls`` finds in the program's code (not C, stdlib, torch), or None."""
    mro = getattr(cls, "__mro__", ())
    for name in hooks:
        for klass in mro:
            if name in klass.__dict__:
                if not _library(klass.__dict__[name]):
                    return name
                break
    return None


def _own_dict(o: Any) -> dict | None:
    """``o.__dict__`` read without the program's ``__getattribute__``/``__getattr__``."""
    try:
        d = object.__getattribute__(o, "__dict__")
    except Exception:
        return None
    return d if type(d) is dict else None


def _slots(cls: type) -> list:
    """(slot descriptor) of every ``__slots__`` name along ``cls``'s MRO."""
    out = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for s in [slots] if isinstance(slots, str) else slots if isinstance(slots, (tuple, list)) else ():
            if s in ("__dict__", "__weakref__"):
                continue
            if s.startswith("__") and not s.endswith("__"):
                s = f"_{klass.__name__.lstrip('_')}{s}"
            desc = klass.__dict__.get(s)
            if desc is not None and hasattr(desc, "__get__") and hasattr(desc, "__set__"):
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
            if id(t) in seen or id(t) in memo or isinstance(t, _ATOMIC) or isinstance(t, enum.Enum):
                continue   # (an enum member is its class's: shared, like the class)
            seen.add(id(t))
            cls = type(t)
            if isinstance(t, torch.Tensor):
                hook = _copy_hook(cls) or _program_hook(cls, ("__torch_function__", "__torch_dispatch__"))
                if hook:
                    raise NotIsolated(f"a {cls.__qualname__} tensor cannot be copied without running its {hook}")
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
            if cls in (dict, set, frozenset):
                for k in t:
                    hook = _program_hook(type(k), ("__hash__", "__eq__"))
                    if hook and not isinstance(k, _ATOMIC):
                        raise NotIsolated(f"a {cls.__name__} holds a {type(k).__qualname__} key, whose {hook} is the "
                                          "program's code and would run on its copy")
            if cls in (tuple, list, set, frozenset, collections.deque):
                todo.extend(t)
                continue
            if cls is dict and _module_dict(t):
                continue   # (module globals are copied shallowly: their values only where reached otherwise)
            if cls is dict:
                todo.extend(t.keys())
                todo.extend(t.values())
                continue
            if (isinstance(t, _BASES) and cls not in _BASES) or _copy_hook(cls):
                self.shell(t)
            d = _own_dict(t)
            if d is not None:
                todo.append(d)
            todo.extend(desc.__get__(t) for desc in _slots(cls) if _has_slot(desc, t))
            if isinstance(t, dict):
                todo.extend(dict.keys(t))
                todo.extend(dict.values(t))
            elif isinstance(t, (list, tuple, set, frozenset, collections.deque, bytearray)):
                base = next(k for k in cls.__mro__ if not k.__flags__ & _HEAPTYPE)
                todo.extend(base.__iter__(t))   # (the builtin's items, not a subclass's __iter__)

    def shell(self, o: Any) -> None:
        """An empty object of ``o``'s exact class, made without the program's code (filled by :meth:`fill`)."""
        cls = type(o)
        base = next(k for k in cls.__mro__ if not k.__flags__ & _HEAPTYPE)
        if base is object:
            c = object.__new__(cls)
        elif base in _BASES:
            c = base.__new__(cls)
            if base is collections.deque:
                collections.deque.__init__(c, (), o.maxlen)
        else:
            raise NotIsolated(f"a {cls.__qualname__} (a {base.__name__} whose copy would run the program's code) "
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
                    c.default_factory = copy.deepcopy(o.default_factory, memo)
                for k, v in dict.items(o):
                    base.__setitem__(c, copy.deepcopy(k, memo), copy.deepcopy(v, memo))
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


_DELETED = object()


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
        if isinstance(t, (type, types.FunctionType, types.ModuleType)):
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
        if isinstance(v, (type, types.FunctionType, types.ModuleType)) and id(v) not in out and \
                not (isinstance(v, types.ModuleType) and v.__name__.split(".")[0] in ("torch", "builtins", "magpy")):
            d = _own_dict(v) if not isinstance(v, type) else v.__dict__
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
        if isinstance(fn, (types.FunctionType, types.MethodType)) and not _library(fn) and not _effect(fn):
            ev.skipped = (f"the record calls the program's function `{getattr(fn, '__qualname__', fn)}`, which check "
                          "mode does not run a second time: only its guard was checked")
            return ev
    gens = g.get("_G")
    # The generators the mock draws from stay shared (a copy of one and a draw from the other would
    # part ways): their states are put back after the sandbox run. A compiled callable is MagPy's.
    memo: dict = {id(v): v for v in [*(gens or ()), *(g[n] for n in names)]
                  if v is not None and (isinstance(v, CompiledCallable) or v in (gens or ()))}
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
        elif isinstance(v, functools._lru_cache_wrapper):
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
        if isinstance(v, types.BuiltinMethodType) and isinstance(v.__self__, _CONTAINERS):
            ns[name] = getattr(copy.deepcopy(v.__self__, memo), v.__name__)   # (`LOG.append`)
        elif _effect(v):
            ns[name] = _silenced(v)
            ev.notes.append(f"what the record prints or logs ({getattr(v, '__name__', v)}) is not compared")
        elif isinstance(v, _ATOMIC) or isinstance(v, CompiledCallable) or isinstance(v, enum.Enum):
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
        if id(o) in found or isinstance(o, _ATOMIC) or isinstance(o, torch.Tensor) and id(o) not in copied:
            continue
        if id(o) in copied:
            found[id(o)] = o
        elif not isinstance(o, (tuple, list, dict)):
            continue   # (an object that was not copied: what it holds was not either)
        if isinstance(o, torch.Tensor):
            continue
        if isinstance(o, (tuple, list, set, frozenset, collections.deque)):
            todo.extend(o)
        elif isinstance(o, dict):
            todo.extend(o.keys())
            todo.extend(o.values())
        elif type(o) is types.CellType:
            try:
                todo.append(o.cell_contents)
            except ValueError:
                pass
        elif isinstance(o, types.MethodType):
            todo.append(o.__self__)
        else:
            d = _own_dict(o)
            if d is not None:
                todo.append(d)
            for klass in type(o).__mro__:
                for slot in klass.__dict__.get("__slots__", ()) if isinstance(klass.__dict__.get("__slots__", ()), (tuple, list)) else ():
                    try:
                        todo.append(getattr(o, slot))
                    except AttributeError:
                        pass
    return [o for o in keep if id(o) in found]


def _own_dicts(memo: dict, keep: list) -> None:
    """``deepcopy`` of an object copies its ``__dict__`` (or what ``__getstate__`` makes of it) into the
    copy's own dict: the original's ``__dict__`` is the copy's (a mock writes ``K[obj.__dict__]``)."""
    for o in list(keep):
        c = memo.get(id(o))
        d = getattr(o, "__dict__", None) if c is not None and c is not o and not isinstance(o, type) else None
        cd = getattr(c, "__dict__", None)
        if type(d) is dict and type(cd) is dict and memo.get(id(d)) is not cd:
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


def _short(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor{tuple(v.shape)} {str(v.dtype).replace('torch.', '')}"
    try:
        r = repr(v)
    except Exception:
        r = f"<{type(v).__name__}>"
    return r if len(r) <= 80 else r[:77] + "..."


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
        return n if n is not None else f"an outside {type(o).__name__}"

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
            return f"{path}: eager has a {type(e).__qualname__} ({_short(e)}), the record would have a " \
                   f"{type(m).__qualname__} ({_short(m)})"
        return self.contents(e, m, path, depth)

    def contents(self, e: Any, m: Any, path: str, depth: int = 0) -> str | None:
        key = (id(e), id(m))
        if key in self.seen or depth > 200:
            return None
        self.seen.add(key)
        if isinstance(e, torch.Tensor):
            return self.tensor(e, m, path)
        if isinstance(e, float):
            return None if _close(e, m, *tolerance(torch.float64, self.backend)) else \
                f"{path}: eager has {e!r}, the record would have {m!r}"
        if isinstance(e, (tuple, list)):
            if len(e) != len(m):
                return f"{path}: eager has {len(e)} items, the record would have {len(m)}"
            for i, (a, b) in enumerate(zip(e, m)):
                d = self.same(a, b, f"{path}[{i}]", depth + 1)
                if d:
                    return d
            return None
        if isinstance(e, dict):
            ke, km = list(e), list(m)
            if ke != km:
                extra = [k for k in ke if k not in m]
                missing = [k for k in km if k not in e]
                if extra or missing:
                    return f"{path}: keys {extra} only in eager's, {missing} only in the record's"
                return f"{path}: keys in another order (eager {ke}, the record {km})"
            owner_attr = path.endswith("(attributes)")
            base = path[:-len(" (attributes)")] if owner_attr else path
            for k in ke:
                sub = f"{base}.{k}" if owner_attr and isinstance(k, str) else f"{path}[{k!r}]"
                d = self.same(e[k], m[k], sub, depth + 1)
                if d:
                    return d
            return None
        if isinstance(e, (set, frozenset)):
            return None if e == m else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        if isinstance(e, collections.deque):
            return self.contents(list(e), list(m), path, depth + 1)
        if type(e) is types.CellType:
            try:
                a = e.cell_contents
            except ValueError:
                a = _EMPTY
            try:
                b = m.cell_contents
            except ValueError:
                b = _EMPTY
            return self.same(a, b, path, depth + 1)
        if _np is not None and isinstance(e, (_np.ndarray, _np.generic)):
            ok = e.shape == m.shape and e.dtype == m.dtype and bool(
                _np.allclose(e, m, equal_nan=True) if e.dtype.kind in "fc" else _np.array_equal(e, m))
            return None if ok else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        if isinstance(e, (int, str, bytes, bool, complex, type(None), range, slice)):
            return None if e == m else f"{path}: eager has {e!r}, the record would have {m!r}"
        if isinstance(e, CompiledCallable):
            return None   # (MagPy's own: its original module is compared)
        de, dm = _own_dict(e), _own_dict(m)
        if de is not None and dm is not None and not isinstance(e, (type, types.ModuleType, types.FunctionType)):
            return self.contents(de, dm, f"{path} (attributes)", depth + 1)
        try:
            if type(e).__eq__ is object.__eq__:
                # (equal only to itself: compare what pickling it would keep, e.g. a bit generator's state)
                if _program_hook(type(e), ("__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs_ex__",
                                           "__getnewargs__")) is None:
                    re_, rm = e.__reduce_ex__(4), m.__reduce_ex__(4)
                    if type(re_) is tuple and type(rm) is tuple:
                        return self.contents(tuple(re_[1:3]), tuple(rm[1:3]), path, depth + 1)
            elif _program_hook(type(e), ("__eq__",)) is None:   # (the program's __eq__ is not run again)
                eq = e == m
                if type(eq) is bool:
                    return None if eq else f"{path}: eager has {_short(e)}, the record would have {_short(m)}"
        except Exception:
            pass
        note = f"{path}: a {type(e).__qualname__} was not compared"
        if note not in self.ev.notes:
            self.ev.notes.append(note)
        return None

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


def _names(roots: list, limit: int = 50000) -> dict[int, str]:
    """Names of the objects reachable from ``roots`` (``self.fc.weight``, ``args[0]``, ``mod.CACHE``)."""
    names: dict[int, str] = {}
    todo = list(roots)
    i = 0
    while i < len(todo) and i < limit:
        name, obj, style = todo[i] if len(todo[i]) == 3 else (*todo[i], None)
        i += 1
        if id(obj) in names or isinstance(obj, _ATOMIC):
            continue
        names[id(obj)] = name
        if isinstance(obj, torch.nn.Module):
            d = obj.__dict__
            todo.append((f"{name} (attributes)", d, name))
            for t in ("_parameters", "_buffers", "_modules"):
                for k, v in (d.get(t) or {}).items():
                    todo.append((f"{name}.{k}", v))
            for k, v in d.items():
                todo.append((f"{name}.{k}", v))
        elif isinstance(obj, dict):
            for k, v in obj.items():
                todo.append((f"{style}.{k}" if style else f"{name}[{k!r}]", v))
        elif isinstance(obj, (list, tuple)):
            for j, v in enumerate(obj):
                todo.append((f"{name}[{j}]", v))
        elif type(obj) is types.CellType:
            try:
                todo.append((name, obj.cell_contents))
            except ValueError:
                pass
        elif _own_dict(obj) is not None and not isinstance(obj, torch.Tensor):
            todo.append((f"{name} (attributes)", _own_dict(obj), name))
            for k, v in _own_dict(obj).items():
                todo.append((f"{name}.{k}", v))
    return names


def roots_of(target: Any, fn: Any, self_obj: Any, args: tuple, kwargs: dict) -> list:
    """Where outside objects are named from: the module (``self``), the arguments, the globals and
    closure cells of the compiled function."""
    roots: list = []
    if isinstance(target, torch.nn.Module):
        roots.append(("self", target))
    elif self_obj is not None:
        roots.append(("self", self_obj))
    code = getattr(fn, "__code__", None)
    params = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if self_obj is not None and params:
        params = params[1:]
    for i, a in enumerate(args):
        roots.append((params[i] if i < len(params) else f"args[{i}]", a))
    for k, v in kwargs.items():
        roots.append((k, v))
    for cell, var in zip(getattr(fn, "__closure__", None) or (), code.co_freevars if code is not None else ()):
        roots.append((var, cell))
    g = getattr(fn, "__globals__", None)
    if isinstance(g, dict):
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
        said = f"raised {type(raised).__name__}: {raised}" if raised is not None else "returned"
        would = f"raise {type(ev.raised).__name__}: {ev.raised}" if ev.raised is not None else "return"
        return f"eager {said}, the record would {would}"
    cmp = _Compare(ev, backend, roots)
    d = cmp.same(result, ev.out, "return value")
    if d:
        return d
    d = _compare_shared(ev, cmp)
    if d:
        return "outside state " + d
    owned = {id(o.__dict__) for o in ev.originals if type(getattr(o, "__dict__", None)) is dict}
    module_dicts = []
    for o in ev.originals:
        c = ev.memo.get(id(o))
        if c is None or c is o or id(o) in owned or isinstance(o, CompiledCallable):
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
        after = obj.__dict__ if isinstance(obj, type) else (_own_dict(obj) or {})
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
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__


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
        pool = ConstPool()
        try:
            expr = src.expr(pool)
            now = eval(f"lambda args, kwargs: {expr}", pool.namespace())(args, kwargs)   # noqa: S307 - our source
        except Exception:
            now = _GONE
        if now is not _GONE and type(now) is type(value) and (now == value or (now != now and value != value)):
            continue
        desc = src.describe()
        guard = next((line for line in guards if line.startswith(f"{desc} == ") or line.startswith(f"{desc} is ")),
                     None)
        said = f"`{desc}` was {value!r} when the record was made and is " + \
            ("gone" if now is _GONE else repr(now)) + " now"
        if where:
            said += f" (read at {where})"
        said += f"; its guard `{guard}` passed" if guard else "; no guard of the record checks it"
        out.append(said)
    return out


_GONE = object()


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
