"""Check mode's comparison: what eager left (its return value, the state it left on the originals,
what it changed on classes, functions and modules) against what the record would have left on the
sandbox's copies, without running the program's code; reports that describe values without
running the program's ``__repr__``."""

from __future__ import annotations

import collections
import math
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from .cache import Record
from .check_access import (
    DELETED,
    VALUES,
    atomic,
    builtin_base,
    class_dict,
    class_lookup,
    exactly_a,
    has_slot,
    module_dict,
    own_dict,
    plain_value,
    program_hook,
    program_key,
    qualname,
    slot_descriptors,
    type_name,
)
from .compiled_module import CompiledCallable

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None



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
    if t in VALUES:
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


def describe(v: Any, depth: int = 0) -> str:
    """``v`` described for a report without running the program's code: the repr of a builtin
    value, the type name and id of an object of a user's class (its ``__repr__`` is not run)."""
    t = type(v)
    if issubclass(t, torch.Tensor):
        return f"tensor{tuple(torch.Tensor.shape.__get__(v))} {str(torch.Tensor.dtype.__get__(v)).replace('torch.', '')}"
    if t in VALUES:
        r = repr(v) if t is not slice else f"slice({describe(v.start)}, {describe(v.stop)}, {describe(v.step)})"
    elif issubclass(t, _VALUE_BASES):
        r = f"{qualname(t)}({_base_value(v)!r})"
    elif t in (tuple, list, set, frozenset) and depth < 2:
        items = [describe(x, depth + 1) for x in t.__iter__(v)]
        r = ", ".join(items[:8]) + (", ..." if len(items) > 8 else "")
        r = {tuple: f"({r}{',' if len(items) == 1 else ''})", list: f"[{r}]"}.get(t, f"{t.__name__}({{{r}}})")
    elif t is dict and depth < 2:
        items = [f"{describe(k, depth + 1)}: {describe(x, depth + 1)}" for k, x in zip(dict.keys(v), dict.values(v))]
        r = "{" + ", ".join(items[:8]) + (", ..." if len(items) > 8 else "") + "}"
    elif _np is not None and t is _np.ndarray:
        r = repr(v)
    elif issubclass(t, type):
        r = f"<class {qualname(v)}>"
    elif t is types.FunctionType:
        r = f"<function {v.__qualname__}>"
    elif t is types.ModuleType:
        r = f"<module {(own_dict(v) or {}).get('__name__')!r}>"
    else:
        r = f"<{qualname(t)} object at {id(v):#x}>"
    return r if len(r) <= 80 else r[:77] + "..."


def _key_text(k: Any) -> str:
    return repr(k) if plain_value(k) else describe(k)


def _exc_text(e: BaseException) -> str:
    """``type: message`` of an exception, without its ``__str__`` (or its arguments' ``__repr__``) of the program's."""
    t = type(e)
    name = type_name(t)
    if program_hook(t, ("__str__", "__repr__")) is None and all(plain_value(a) for a in BaseException.args.__get__(e)):
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
        return n if n is not None else f"an outside {qualname(type(o))}"

    def same(self, e: Any, m: Any, path: str, depth: int = 0) -> str | None:
        """None if eager's ``e`` and the record's ``m`` agree, else what differs at ``path``."""
        orig = self.inv.get(id(m))
        if orig is not None:
            if e is orig:
                return None
            return f"{path}: eager has {describe(e)}, the record would have the outside object {self.name(orig)}"
        if e is m:
            return None
        c = self.memo.get(id(e))
        if c is not None and c is not e:
            return f"{path}: eager has the outside object {self.name(e)}, the record would have {describe(m)}"
        if type(e) is not type(m):
            return f"{path}: eager has a {qualname(type(e))} ({describe(e)}), the record would have a " \
                   f"{qualname(type(m))} ({describe(m)})"
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
            if not same_value(a, b, self.backend == "eager", *tolerance(torch.float64, self.backend)):
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
            return None if ok else f"{path}: eager has {describe(e)}, the record would have {describe(m)}"
        if t in VALUES:   # (None, range, slice, Ellipsis)
            return None if plain_value(e) and plain_value(m) and e == m or e is m else \
                f"{path}: eager has {describe(e)}, the record would have {describe(m)}"
        if issubclass(t, CompiledCallable):
            return None   # (MagPy's own: its original module is compared)
        if not issubclass(t, (type, types.ModuleType, types.FunctionType)) and \
                (own_dict(e) is not None or slot_descriptors(t)):
            return self.fields(e, m, path, depth)
        try:
            if class_lookup(t, "__eq__") is object.__dict__["__eq__"]:
                # (equal only to itself: compare what pickling it would keep, e.g. a bit generator's state)
                if program_hook(t, ("__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs_ex__",
                                     "__getnewargs__", "__getattribute__", "__getattr__")) is None and \
                        program_hook(type(t), ("__getattribute__", "__getattr__")) is None:
                    re_, rm = e.__reduce_ex__(4), m.__reduce_ex__(4)
                    if type(re_) is tuple and type(rm) is tuple:
                        return self.contents(tuple(re_[1:3]), tuple(rm[1:3]), path, depth + 1)
            elif program_hook(t, ("__eq__",)) is None:   # (the program's __eq__ is not run)
                eq = e == m
                if type(eq) is bool:
                    return None if eq else f"{path}: eager has {describe(e)}, the record would have {describe(m)}"
        except Exception:
            pass
        self.note(f"{path}: a {qualname(t)} was not compared")
        return None

    def note(self, note: str) -> None:
        if note not in self.ev.notes:
            self.ev.notes.append(note)

    def fields(self, e: Any, m: Any, path: str, depth: int) -> str | None:
        """The attributes (``__dict__`` and slots) of two objects of one class."""
        t = type(e)
        de, dm = own_dict(e), own_dict(m)
        if de is not None and dm is not None:
            d = self.contents(de, dm, f"{path} (attributes)", depth + 1)
            if d:
                return d
        for desc in slot_descriptors(t):
            a = desc.__get__(e) if has_slot(desc, e) else _EMPTY
            b = desc.__get__(m) if has_slot(desc, m) else _EMPTY
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
        it = builtin_base(type(e)).__iter__   # (an OrderedDict's own order)
        ke, km = list(it(e)), list(it(m))
        if all(plain_value(k) for k in ke) and all(plain_value(k) for k in km):
            if ke != km:
                extra = [k for k in ke if not dict.__contains__(m, k)]
                missing = [k for k in km if not dict.__contains__(e, k)]
                if extra or missing:
                    return f"{path}: keys {extra} only in eager's, {missing} only in the record's"
                return f"{path}: keys in another order (eager {ke}, the record {km})"
        else:
            for k in ke + km:
                why = program_key(k)
                if why:
                    self.note(f"{path}: a `{qualname(type(e))}` whose keys hold {why} was not compared")
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
                if plain_value(x):
                    out.add(("value", x))
                    continue
                x = self.inv.get(id(x), x) if mine else x
                if not (atomic(x) or id(x) in originals):
                    self.note(f"{path}: a {qualname(type(e))} of objects made in the call was not compared")
                    return None
                out.add(("object", id(x)))
        return None if ka == kb else f"{path}: eager has {describe(e)}, the record would have {describe(m)}"

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


def same_value(a: Any, b: Any, exact: bool = True, rtol: float = 0.0, atol: float = 0.0) -> bool:
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
        return same_value(a.real, b.real, exact, rtol, atol) and same_value(a.imag, b.imag, exact, rtol, atol)
    if t in (tuple, torch.Size):
        return len(a) == len(b) and all(same_value(x, y, exact, rtol, atol) for x, y in zip(a, b))
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
        if id(obj) in names or atomic(obj):
            continue
        names[id(obj)] = name
        if issubclass(t, torch.nn.Module):
            d = own_dict(obj) or {}
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
            for j, v in enumerate(builtin_base(t).__iter__(obj)):
                todo.append((f"{name}[{j}]", v))
        elif t is types.CellType:
            try:
                todo.append((name, obj.cell_contents))
            except ValueError:
                pass
        elif own_dict(obj) is not None and not issubclass(t, torch.Tensor):
            todo.append((f"{name} (attributes)", own_dict(obj), name))
            for k, v in own_dict(obj).items():
                todo.append((f"{name}.{k}", v))
    return names


def roots_of(target: Any, fn: Any, self_obj: Any, args: tuple, kwargs: dict) -> list:
    """Where outside objects are named from: the module (``self``), the arguments, the globals and
    closure cells of the compiled function."""
    roots: list = []
    if exactly_a(target, torch.nn.Module):
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
    owned = {id(d) for d in map(own_dict, ev.originals) if d is not None}
    module_dicts = []
    for o in ev.originals:
        c = ev.memo.get(id(o))
        if c is None or c is o or id(o) in owned or exactly_a(o, CompiledCallable):
            continue
        if module_dict(o):
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
        after = class_dict(obj) if exactly_a(obj, type) else (own_dict(obj) or {})
        writes = kept.get(key, (obj, {}))[1]
        changed = [k for k in set(after) | set(before) if after.get(k, DELETED) is not before.get(k, DELETED)]
        for k in sorted(set(changed) | set(writes), key=str):
            e = after.get(k, DELETED)
            m = writes[k] if k in writes else before.get(k, DELETED)
            path = f"{_owner_name(obj)}.{k}"
            if e is DELETED or m is DELETED:
                if e is not m:
                    return f"{path}: {'only eager' if m is DELETED else 'only the record'} binds it"
                continue
            d = cmp.same(e, m, path)
            if d:
                return d
    return None


def _owner_name(obj: Any) -> str:
    if exactly_a(obj, type):
        return qualname(obj)
    if type(obj) is types.FunctionType:
        return obj.__qualname__
    if exactly_a(obj, types.ModuleType):
        return str((own_dict(obj) or {}).get("__name__", "module"))
    return qualname(type(obj))


def _state_name(cmp: _Compare, o: Any) -> str:
    return cmp.name(o)


# -- which guard should have failed -----------------------------------------------------------------------
