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
import re
import types
import weakref
from typing import Any

import torch

from .cache import UNHELD, Record
from .check_access import (
    BASES,
    CONTAINERS,
    DELETED,
    NotIsolated,
    atomic,
    builtin_base,
    class_dict,
    class_lookup,
    copy_hook,
    exactly_a,
    has_slot,
    is_effect,
    library_code,
    module_dict,
    own_dict,
    program_hook,
    program_key,
    qualname,
    run_silenced,
    slot_descriptors,
    type_name,
)
from .check_compare import Evaluation, compare, describe, roots_of, same_value, tolerance
from .compiled_module import CompiledCallable
from .monitor.cached_calls import lru_cache_entry
from .objmodel import NO_VALUE
from .redraw import restore_states, save_states
from .source import (
    PAST_HOOK,
    TYPE_FIELD,
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

__all__ = ["CheckError", "Evaluation", "changed_reads", "compare", "divergence_message", "evaluate", "roots_of",
           "tolerance"]

class CheckError(UserWarning):
    """A record's answer differs from eager's (check mode). Warned with ``check=True``, raised
    with ``check="raise"`` (after the eager call ran: outside state is eager's)."""

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None



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
            if id(t) in seen or id(t) in memo or atomic(t) or exactly_a(t, enum.Enum):
                continue   # (an enum member is its class's: shared, like the class)
            seen.add(id(t))
            cls = type(t)
            if issubclass(cls, torch.Tensor):
                hook = copy_hook(cls) or program_hook(cls, ("__torch_function__", "__torch_dispatch__"))
                if hook:
                    raise NotIsolated(f"a {qualname(cls)} tensor cannot be copied without running its {hook}")
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
                    why = program_key(k)
                    if why:
                        raise NotIsolated(f"the keys of a `{qualname(cls)}` hold {why}, which its copy would run")
            if cls in (tuple, list, set, frozenset, collections.deque):
                todo.extend(t)
                continue
            if cls is dict and module_dict(t):
                continue   # (module globals are copied shallowly: their values only where reached otherwise)
            if cls is dict:
                todo.extend(t.keys())
                todo.extend(t.values())
                continue
            if (issubclass(cls, BASES) and cls not in BASES) or copy_hook(cls):
                self.shell(t)
            d = own_dict(t)
            if d is not None:
                todo.append(d)
            todo.extend(desc.__get__(t) for desc in slot_descriptors(cls) if has_slot(desc, t))
            if issubclass(cls, dict):
                todo.extend(dict.keys(t))
                todo.extend(dict.values(t))
            elif issubclass(cls, (list, tuple, set, frozenset, collections.deque, bytearray)):
                todo.extend(builtin_base(cls).__iter__(t))   # (the builtin's items, not a subclass's __iter__)

    def shell(self, o: Any) -> None:
        """An empty object of ``o``'s exact class, made without the program's code (filled by :meth:`fill`)."""
        cls = type(o)
        base = builtin_base(cls)
        if base is object:
            c = object.__new__(cls)
        elif base in BASES:
            c = base.__new__(cls)
            if base is collections.deque:
                collections.deque.__init__(c, (), collections.deque.maxlen.__get__(o))
        else:
            raise NotIsolated(f"a {qualname(cls)} (a {type_name(base)} whose copy would run the program's code) "
                              "cannot be copied")
        self.memo[id(o)] = c
        self.keep.append(o)
        d, cd = own_dict(o), own_dict(c)
        if d is not None and cd is not None:
            self.memo[id(d)] = cd
            self.keep.append(d)
        self.shells.append((o, c, base))

    def fill(self) -> None:
        """Copies of each shell's original's fields, in the one memo (aliasing is kept)."""
        memo = self.memo
        for o, c, base in self.shells:
            d, cd = own_dict(o), own_dict(c)
            if d is not None and cd is not None:
                for k, v in d.items():
                    cd[k] = copy.deepcopy(v, memo)
            for desc in slot_descriptors(type(o)):
                if has_slot(desc, o):
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
        if exactly_a(t, (type, types.FunctionType, types.ModuleType)):
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
            self.writes.setdefault(id(t), (t, {}))[1][name] = DELETED

    def hasattr(self, t: Any, name: str) -> bool:
        kept = self.writes.get(id(t))
        if kept is not None and name in kept[1]:
            return kept[1][name] is not DELETED
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
            why = program_key(a)   # (the table's lookup would hash and compare it)
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
        if exactly_a(v, (type, types.FunctionType, types.ModuleType)) and id(v) not in out and \
                not (exactly_a(v, types.ModuleType) and str((own_dict(v) or {}).get("__name__")).split(".")[0]
                     in ("torch", "builtins", "magpy")):
            d = own_dict(v) if not exactly_a(v, type) else class_dict(v)
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
        if type(fn) in (types.FunctionType, types.MethodType) and not library_code(fn) and not is_effect(fn):
            ev.skipped = (f"the record calls the program's function `{fn.__qualname__}`, which check "
                          "mode does not run a second time: only its guard was checked")
            return ev
    gens = g.get("_G")
    # The generators the mock draws from stay shared (a copy of one and a draw from the other would
    # part ways): their states are put back after the sandbox run. A compiled callable is MagPy's.
    memo: dict = {id(v): v for v in [*(gens or ()), *(g[n] for n in names)]
                  if v is not None and (exactly_a(v, CompiledCallable) or any(v is x for x in gens or ()))}
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
        elif exactly_a(v, functools._lru_cache_wrapper):
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
        if type(v) is types.BuiltinMethodType and exactly_a(v.__self__, CONTAINERS):   # (`LOG.append`)
            c = copy.deepcopy(v.__self__, memo)
            ns[name] = class_lookup(builtin_base(type(c)), v.__name__).__get__(c, type(c))
        elif is_effect(v):
            ns[name] = run_silenced(v)
            ev.notes.append(f"what the record prints or logs ({getattr(v, '__name__', v)}) is not compared")
        elif atomic(v) or exactly_a(v, (CompiledCallable, enum.Enum)):
            continue
        elif module_dict(v):
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
        if id(o) in found or atomic(o) or issubclass(t, torch.Tensor) and id(o) not in copied:
            continue
        if id(o) in copied:
            found[id(o)] = o
        elif not issubclass(t, (tuple, list, dict)):
            continue   # (an object that was not copied: what it holds was not either)
        if issubclass(t, torch.Tensor):
            continue
        if issubclass(t, (tuple, list, set, frozenset, collections.deque)):
            todo.extend(builtin_base(t).__iter__(o))   # (the builtin's items: not a subclass's __iter__)
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
        d = own_dict(o)
        if d is not None:
            todo.append(d)
        todo.extend(desc.__get__(o) for desc in slot_descriptors(t) if has_slot(desc, o))
    return [o for o in keep if id(o) in found]


def _own_dicts(memo: dict, keep: list) -> None:
    """``deepcopy`` of an object copies its ``__dict__`` (or what ``__getstate__`` makes of it) into the
    copy's own dict: the original's ``__dict__`` is the copy's (a mock writes ``K[obj.__dict__]``)."""
    for o in list(keep):
        c = memo.get(id(o))
        d = own_dict(o) if c is not None and c is not o else None
        cd = own_dict(c)
        if d is not None and cd is not None and memo.get(id(d)) is not cd:
            if id(d) not in memo:
                keep.append(d)
            memo[id(d)] = cd


# -- comparison -------------------------------------------------------------------------------------------

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
        if now is not _GONE and type(now) is type(value) and same_value(now, value):
            continue   # (read values are builtins: exact types, compared in C)
        desc = src.describe()
        guard = next((line for line in guards if line.startswith(f"{desc} == ") or line.startswith(f"{desc} is ")),
                     None)
        said = f"`{desc}` was {value!r} when the record was made and is " + \
            ("gone" if now is _GONE else describe(now)) + " now"
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
        if program_key(key):
            return _UNREAD
        if issubclass(tb, dict):
            got = dict.get(b, key, _GONE)   # (not a subclass's __missing__)
            if got is _GONE:
                raise KeyError(key)
            return got
        if issubclass(tb, (list, tuple)):
            return builtin_base(tb).__getitem__(b, key)
        getitem = class_lookup(tb, "__getitem__")
        if getitem is DELETED or type(getitem) in (staticmethod, classmethod) or not library_code(getitem):
            return _UNREAD
        return getitem(b, key)
    name, via = src.name, src.via
    if via == TYPE_FIELD:
        return type.__dict__[name].__get__(b) if issubclass(tb, type) else _UNREAD
    if via == PAST_HOOK:
        return _attr_now(b, name, past_hook=True) if not issubclass(tb, (type, types.ModuleType)) else _UNREAD
    if via:
        d = own_dict(b)
        if d is None:
            return _UNREAD
        table = d if via == "__dict__" else d.get(via)
        if type(table) is not dict:
            return _UNREAD
        return dict.__getitem__(table, name)
    return _attr_now(b, name)


def _attr_now(b: Any, name: str, past_hook: bool = False) -> Any:
    """``getattr(b, name)`` where CPython's lookup runs none of the program's code, else _UNREAD;
    ``past_hook``: ``object.__getattribute__(b, name)``, which runs neither the class's own
    ``__getattribute__`` nor its ``__getattr__``."""
    tb = type(b)
    if issubclass(tb, type):
        if program_hook(tb, ("__getattribute__", "__getattr__")) or class_lookup(tb, name) is not DELETED:
            return _UNREAD   # (the metaclass's hooks, or one of its attributes)
        v = class_lookup(b, name)
        if v is DELETED:
            raise AttributeError(name)
        if class_lookup(type(v), "__get__") is DELETED:
            return v
        return v.__func__ if type(v) is staticmethod else _UNREAD
    if not past_hook and program_hook(tb, ("__getattribute__", "__getattr__")):
        return _UNREAD
    if issubclass(tb, types.ModuleType):
        d = own_dict(b)
        if d is None or name not in d:
            return _UNREAD
        return d[name]
    v = class_lookup(tb, name)
    get = class_lookup(type(v), "__get__") if v is not DELETED else DELETED
    data = get is not DELETED and (class_lookup(type(v), "__set__") is not DELETED or
                                    class_lookup(type(v), "__delete__") is not DELETED)
    if data:   # (a slot, a property: before the instance's dict)
        return type(v).__get__(v, b, tb) if library_code(v) else _UNREAD
    d = own_dict(b)
    if d is not None and name in d:
        return d[name]
    if v is DELETED:
        return _UNREAD
    if get is DELETED:
        return v
    if type(v) is types.FunctionType:
        return types.MethodType(v, b)
    return type(v).__get__(v, b, tb) if library_code(v) else _UNREAD


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
