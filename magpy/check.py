"""Check mode: every call runs eagerly, and the record MagPy would have used is compared with it.

``magpy.compile(f, check=True)`` (or ``MAGPY_CHECK=1`` in the environment when compiling) makes
each call run the real program, so what the user sees is exactly eager's. Before that, MagPy
finds the record whose guard passes and evaluates its mock on a *sandbox*: one ``copy.deepcopy``
(one memo, so aliasing is kept) of what the guard fetched and of the objects the mock refers to
itself (the compiled module, module globals, cells), with the prints and logging it replays
silenced and the random generators put back afterwards. The real objects are never touched by
the mock. Then eager runs on the real objects, and the record's return value and the state the
mock left on the copies are compared with eager's return value and the state eager left on the
originals (tensors with a tolerance suited to the backend, structure, types, identity of outside
objects). The first difference is a *divergence*: it names the record, the value read from
outside whose guard should have failed (where the record's run read it, file:line), and what
differed. See :func:`evaluate` and :func:`compare`.
"""
from __future__ import annotations

import collections
import copy
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from . import effects
from .cache import UNHELD, Record
from .compiled_module import CompiledCallable
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


def _preseed(x: Any, memo: dict, keep: list, deep: bool = False) -> None:
    """Tensors ``deepcopy`` refuses (non-leaf tensors: the call's arguments often are), copied by
    value: in the arguments, or (``deep``) anywhere in the state."""
    todo, seen = [x], set()
    while todo:
        t = todo.pop()
        if id(t) in seen or id(t) in memo or isinstance(t, _ATOMIC):
            continue
        seen.add(id(t))
        if isinstance(t, torch.Tensor):
            if t.is_leaf or type(t) is not torch.Tensor:
                continue   # (a subclass's copy could run its __torch_function__ on state that is not copied)
            c = t.detach().clone()
            if t.requires_grad:
                c.requires_grad_(True)
            memo[id(t)] = c
            keep.append(t)
        elif type(t) in (tuple, list):
            todo.extend(t)
        elif type(t) is dict:
            todo.extend(t.values())
        elif deep and type(getattr(t, "__dict__", None)) is dict and not isinstance(t, types.ModuleType):
            todo.extend(t.__dict__.values())


def evaluate(record: Record, fetched: Any) -> Evaluation:
    """Run ``record``'s mock on a sandbox copy of what it reads and writes; the real state is not touched."""
    ev = Evaluation(record)
    if record.split is not None:
        ev.skipped = ("the record is split at a dynamic operation and its continuation runs the program's own "
                      "code: only its guard was checked")
        return ev
    mock = record.mock
    g = mock.__globals__
    names = sorted(set(re.findall(r"\bK\d+\b", record.mock_source)))
    memo: dict = {}
    compiled = CompiledCallable
    gens = g.get("_G")
    for gen in gens or ():
        # The generators the mock draws from stay shared (a copy of one and a draw from the other
        # would part ways): their states are put back after the sandbox run.
        memo[id(gen)] = gen
    shared = dict(memo)
    for deep in (False, True):
        # (a tensor deepcopy refuses deep in the state: once more, with every such tensor copied by value)
        memo, keep, ns, ev.notes = dict(shared), [], dict(g), []
        memo[id(memo)] = keep   # (deepcopy's keep-alive list: every original that was copied)
        try:
            for name in names:
                v = g[name]
                if isinstance(v, compiled):
                    memo[id(v)] = v   # (a compiled callable is MagPy's, not the program's state)
            with torch._C.DisableTorchFunctionSubclass():   # (copying is MagPy's, not the program's)
                _preseed([fetched] + [g[n] for n in names] if deep else fetched, memo, keep, deep)
                new_fetched, deferred, dicts = _copy_state(g, ns, names, fetched, memo, keep, ev, compiled)
            break
        except Exception as e:
            if not deep and isinstance(e, RuntimeError) and "deepcopy" in str(e):
                continue
            ev.skipped = (f"the state the record reads could not be copied ({type(e).__name__}: {e}): only its "
                          "guard was checked")
            return ev
    sandbox = types.FunctionType(mock.__code__, ns, mock.__name__, mock.__defaults__, mock.__closure__)
    state = rng_and_grad_state()
    gen_states = save_states(gens) if gens else None
    try:
        out = sandbox(new_fetched)
        if out is UNHELD:
            ev.unheld = True
        else:
            ev.out = out
    except Exception as e:
        ev.raised = e
    finally:
        set_rng_and_grad_state(state)
        if gens:
            restore_states(gens, gen_states)
    ev.memo, ev.originals = memo, _reachable(keep, memo, [fetched] + [g[n] for n in names])
    return ev


def _copy_state(g: dict, ns: dict, names: list, fetched: Any, memo: dict, keep: list, ev: Evaluation,
                compiled: type) -> tuple:
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
        elif isinstance(v, _ATOMIC) or isinstance(v, compiled):
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
    return new_fetched, deferred, dicts


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
            d = getattr(o, "__dict__", None)
            if type(d) is dict:
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
        de, dm = getattr(e, "__dict__", None), getattr(m, "__dict__", None)
        if type(de) is dict and type(dm) is dict and not isinstance(e, (type, types.ModuleType, types.FunctionType)):
            return self.contents(de, dm, f"{path} (attributes)", depth + 1)
        try:
            if type(e).__eq__ is object.__eq__:
                # (equal only to itself: compare what pickling it would keep, e.g. a bit generator's state)
                re_, rm = e.__reduce_ex__(4), m.__reduce_ex__(4)
                if type(re_) is tuple and type(rm) is tuple:
                    return self.contents(tuple(re_[1:3]), tuple(rm[1:3]), path, depth + 1)
            else:
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
            if a.is_floating_point() or a.is_complex():
                rtol, atol = tolerance(a.dtype, self.backend)
                ok = torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            else:
                ok = torch.equal(a, b)
            if ok:
                return None
            try:
                diff = f" (largest difference {(a.double() - b.double()).abs().nan_to_num(float('inf')).max().item():.4g})"
            except Exception:
                diff = ""
        return f"{path}: tensor values differ{diff}"


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
        elif isinstance(getattr(obj, "__dict__", None), dict) and not isinstance(obj, torch.Tensor):
            todo.append((f"{name} (attributes)", obj.__dict__, name))
            for k, v in obj.__dict__.items():
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
