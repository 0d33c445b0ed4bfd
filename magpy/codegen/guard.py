"""The guard of a record (paper §4.2, GetGuardNodes) as Python source compiled once.

The guard checks that everything the monitor run read from outside is as it was: types and
values of scalars and strings, container structure, tensor metadata (not values), identity of
modules/functions/classes, hooks, aliasing. It fetches each source once into a local (:class:`Vars`),
so the path ``self._modules['conv']._parameters['weight']`` is walked once per call, and returns
the locals the mock needs (None on failure). State held across calls (module tables, parameters)
is checked in C, again only when a dict version tag moved (:mod:`magpy.codegen.guard_batch`);
all tensors are checked by one call of torch's ``TensorGuards``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..graph import Unsupported
from ..guards import DictSnapshotGuard, IdGuard, KeysGuard, TensorGuard
from ..objmodel import is_immutable, storage_key
from ..realtype import instance_dict, is_instance
from ..source import (
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
    Source,
    literal,
    memo,
)
from ..trace import Trace
from .guard_batch import HeldBatch
from .speculation import check_code

try:   # the guard fast path (dict version tags), built from magpy/_speedups.c where possible
    from .._speedups import dict_versions as _dict_versions
    from .._speedups import versions_same as _versions_same
except ImportError:   # pragma: no cover - no compiler at install time, or CPython 3.14+
    _dict_versions = _versions_same = None


@dataclass
class GuardCode:
    """The guard's source and what the mock and the matched path take from it."""

    checks: list[str]      # the checks, as lines of a ``try`` block: each returns ``_MISS`` where it fails
    source: str            # ``def guard(args, kwargs): ...`` (``_MISS`` is None there)
    readable: list         # one line per check, for people (``guards_text``; see guard_words)
    needed: list[str]      # the locals the guard returns to the mock, in order
    names: dict            # placeholder name -> local, for checks over the graph inputs' sizes


def storage_pattern(tensors) -> tuple:
    """Which tensors share a storage, as the index of the first tensor with the same storage."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(storage_key(t), i) for i, t in enumerate(tensors))


def guard_code(trace: Trace, call_shape: tuple, batched: list, held: HeldBatch, vars_: Vars, pool: ConstPool,
               mb: Any, shape_checks: list, draw_checks: list, ns: dict[str, Any]) -> GuardCode:
    """The guard of the record: the call shape, the process-wide switches, then ``batched`` (the
    run's guards after batching, the caller's arguments first), the held state ``held`` checked in
    C, all tensors in one call, distinctness, lifted sizes. ``mb`` (the mock's plan, made first)
    says which sources the mock needs fetched; ``ns`` gets the constants the lines name."""
    nargs, kwnames = call_shape
    body = ["try:"]
    body.append(f"    if len(args) != {nargs} or len(kwargs) != {len(kwnames)}: return _MISS")
    if kwnames:
        body.append(f"    if sorted(kwargs) != {list(kwnames)!r}: return _MISS")
    body.append("    " + trace.global_state.guard_line(ns))
    if trace.global_state.hook_tables is not None and trace.global_state.cpp is not None:
        held.hook_tables.extend(trace.global_state.hook_tables)   # "no global module hooks", batched
    readable: list[str] = [f"call shape: {nargs} positional, keywords {list(kwnames)}",
                           trace.global_state.description]
    tensor_vars: list[str] = []
    tensor_vals: list[torch.Tensor] = []
    tensor_dims: list[tuple] = []
    object_vars: list[str] = []   # mutable objects guarded by type only
    # The caller's arguments change most between calls: check them (and their tensors, in one
    # C++ call) before walking module trees, so a miss is found early.
    all_guards = batched
    held_ids = None   # the held tensors' locals, when they come from the cache (their ids: local `_hid`)
    arg_guards = [g for g in all_guards if _root(g.source) is ArgSource]
    other_guards = [g for g in all_guards if _root(g.source) is not ArgSource]
    for g in arg_guards + [None] + other_guards:
        if g is None:
            _flush(vars_, body)
            arg_tensor_count = len(tensor_vars)
            always, slow, vdicts = held.lines(ns)
            readable.extend(held.described)
            names = [vars_.define_emitted(src) for _, _, src, _ in held.tensors]
            if names:
                # Tensors held in pinned tables (parameters, buffers) fetched in one C-level pass.
                ns["_HF_C"] = tuple(c for c, _, _, _ in held.tensors)
                ns["_HF_K"] = tuple(k for _, k, _, _ in held.tensors)
                tensor_vars.extend(names)
                tensor_vals.extend(t for _, _, _, t in held.tensors)
                tensor_dims.extend(held.tensor_dims)
            fetch = f"{', '.join(names)}, = map(_getitem, _HF_C, _HF_K)" if names else None
            if slow and _dict_versions is not None:
                # Checks that only read dict contents run again only when a version tag moved.
                ns["_dict_versions"], ns["_VD"], ns["_STATE"] = _dict_versions, tuple(vdicts), [(None, ())]
                ns["_versions_same"] = _versions_same
                cache_tensors = fetch is not None and held.tensors_versioned
                body.append("    _st = _STATE[0]")
                body.append("    if not _versions_same(_VD, _st[0]):")
                body.append("        _vs = _dict_versions(_VD)   # read before the checks: a later change is seen next call")
                body.extend("        " + line for line in slow)
                if cache_tensors:
                    # The held tensors are the objects of the last refresh while no tag moved: they
                    # were distinct then (the ids are kept for the per-call distinctness check).
                    body.append("        " + fetch)
                    body.append(f"        _hid = frozenset(map(id, ({', '.join(names)},)))")
                    body.append(f"        if len(_hid) != {len(names)}: return _MISS")
                    body.append(f"        _STATE[0] = (_vs, ({', '.join(names)},), _hid)")
                    body.append("    else:")
                    body.append(f"        {', '.join(names)}, = _st[1]")
                    body.append("        _hid = _st[2]")
                    held_ids = set(names)
                else:
                    body.append("        _STATE[0] = (_vs, ())")
                    if fetch:
                        body.append("    " + fetch)
            else:
                body.extend("    " + line for line in slow)
                if fetch:
                    body.append("    " + fetch)
            body.extend("    " + line for line in always)
            continue
        v = g.fetch(vars_)
        _flush(vars_, body)
        line = g.check_line(v, vars_, pool)
        _flush(vars_, body)
        if line is not None:
            body.append("    " + line)
        readable.append(g.description())
        tensor = g.batched_tensor
        if tensor is not None and v not in tensor_vars:
            tensor_vars.append(v)
            tensor_vals.append(tensor)
            tensor_dims.append((g.sizes(), g.strides()) if isinstance(g, TensorGuard)
                               else (list(tensor.size()), list(tensor.stride())))
        if g.distinct_object and v not in object_vars:
            object_vars.append(v)
    vars_.emit_rest()
    _flush(vars_, body)
    if tensor_vars:
        ns["_TG"] = _tensor_checker(tensor_vals, tensor_dims)
        body.append(f"    if not _TG({', '.join(tensor_vars)}): return _MISS")
    # (tensor var, lifted dimension: a size the checker takes as any)
    lifted_min = [(v, d) for v, (sizes, _) in zip(tensor_vars, tensor_dims) for d, n in enumerate(sizes) if n is None]
    if lifted_min:
        # A lifted size holds for any size but 0 and 1, which the run did not see as such
        # (`squeeze()`, broadcasting): those calls make records of their own.
        body.append(f"    if min({', '.join(f'{v}.shape[{d}]' for v, d in lifted_min)}, 2) < 2: return _MISS")
        readable.append("lifted sizes >= 2: " + ", ".join(f"{v}.shape[{d}]" for v, d in lifted_min))
    # Distinctness: with writes in the record, two outside objects that were distinct must stay
    # distinct (the same list passed twice, `self.a is self.b` after a rebinding), and argument
    # tensors must alias each other's storage as they did (overlapping views).
    if trace.has_writes and len(object_vars) > 1:
        body.append(f"    if len({{id(o) for o in ({', '.join(object_vars)},)}}) != {len(object_vars)}: return _MISS")
        readable.append("distinct objects: " + ", ".join(object_vars))
    if tensor_vars:
        if (trace.mutated or trace.mutates_outside) and len(tensor_vars) > 1:
            # An outside tensor changed in place must not turn out to be another tensor the graph
            # reads. (Changes of tensors made in the call alone cannot reach an input.)
            body.extend(_distinct_tensors(tensor_vars, held_ids))
        if trace.mutates_outside and arg_tensor_count > 1:
            args_t = ", ".join(tensor_vars[:arg_tensor_count])
            pattern = storage_pattern(tensor_vals[:arg_tensor_count])
            body.append(f"    if _storage_pattern(({args_t},)) != {pattern!r}: return _MISS")
            readable.append(f"argument tensors share storage as {pattern}")
    names = {f"i{k}": mb.src(src) for k, (src, _) in enumerate(trace.graph.inputs)} \
        if shape_checks or draw_checks else {}
    for expr, expected, kind in shape_checks:
        # Lifted shapes: what the run assumed of its inputs' sizes, checked before anything runs.
        fails, said = check_code(expr, expected, kind, names, pool)
        body.append(f"    if {fails}: return _MISS")
        readable.append(f"lifted sizes: {said}")
    needed = list(dict.fromkeys(mb.needed))
    checks = body[1:]
    body.append(f"    return ({''.join(n + ', ' for n in needed)})")
    body += MISSED_PATHS + ["    return _MISS"]
    guard_src = "def guard(args, kwargs):\n" + "\n".join("    " + line for line in body) + "\n"
    return GuardCode(checks, guard_src, readable, needed, names)


#: The ``except`` clause after a guard's checks: a path that no longer exists is a miss, so is a
#: value that no longer compares (a dict that held numbers now holds a numpy array: ``!=`` raises
#: ValueError; a lifted size's expression on a number it cannot take, ``int(inf)``:
#: ArithmeticError); any other exception is a MagPy bug that the caller reports instead of
#: treating it as a miss forever (the matched path's clause after this one, codegen.matched_path).
MISSED_PATHS = ["except (LookupError, AttributeError, TypeError, ValueError, ArithmeticError):"]


def _distinct_tensors(tensor_vars: list[str], held: set | None) -> list[str]:
    """The check that the tensors the guard fetched are distinct objects. Held tensors served from
    the version-tagged cache (``held``) were checked distinct when it was filled (their ids are the
    local ``_hid``): the call checks only the others, among themselves and against those ids."""
    if held is not None:
        others = [v for v in tensor_vars if v not in held]
        if not others:
            return []
        one = f"({', '.join(others)},)"
        among = f"len({{id(t) for t in {one}}}) != {len(others)} or " if len(others) > 1 else ""
        return [f"    if {among}not _hid.isdisjoint(map(id, {one})): return _MISS"]
    return [f"    if len({{id(t) for t in ({', '.join(tensor_vars)},)}}) != {len(tensor_vars)}: return _MISS"]


def _tensor_checker(tensors: list[torch.Tensor], dims: list[tuple[list, list]]) -> Callable:
    """One call that checks Python type, dtype, device, shape, strides, requires_grad of all inputs.
    ``dims``: per tensor, the sizes and strides to check (None: any, a lifted dimension).

    torch's C++ ``TensorGuards`` does it at about 0.1 us a tensor; a Python loop is the fallback.
    """
    assert len(dims) == len(tensors)
    try:
        from torch._C._dynamo.guards import TensorGuards

        with torch._C.DisableTorchFunctionSubclass():   # no user __torch_function__ for MagPy's reads
            tg = TensorGuards(*tensors, dynamic_dims_sizes=[d[0] for d in dims],
                              dynamic_dims_strides=[d[1] for d in dims])
            if tg.check(*tensors) and not tg.check(*[_retyped(t) for t in tensors]):
                return tg.check
    except Exception:   # pragma: no cover - fallback when the torch helper changes
        pass
    meta = [(type(t), t.dtype, t.device, d[0], d[1], t.requires_grad) for t, d in zip(tensors, dims)]

    def same(actual, expected) -> bool:
        return len(actual) == len(expected) and all(e is None or a == e for a, e in zip(actual, expected))

    def check(*ts):
        for t, (ty, dt, dev, shape, stride, rg) in zip(ts, meta):
            if type(t) is not ty or t.dtype != dt or t.device != dev or not same(t.shape, shape) \
                    or not same(t.stride(), stride) or t.requires_grad != rg:
                return False
        return True

    return check


class _OtherTensor(torch.Tensor):
    """Only used to confirm that the C++ checker compares Python types."""


def _retyped(t: torch.Tensor) -> torch.Tensor:
    return t.as_subclass(_OtherTensor)


class Vars:
    """Locals of the generated guard: one per source, computed from its base's local.

    A local is defined when first asked for, but its line is only emitted when a check needs
    it (``get``) or at the end (``emit_rest``, for what only the mock uses), so the checks that
    fail most often are not preceded by fetches of everything the mock needs.
    """

    def __init__(self, pool: ConstPool):
        self.pool = pool
        self.var_of: dict = {}
        self._defs: dict[str, tuple[str, str | None]] = {}   # var -> (expression, base var)
        self._emitted: set[str] = set()
        self.lines: list[str] = []

    def get(self, src: Source, emit: bool = True) -> str:
        v = self._define(src)
        if emit:
            self._emit(v)
        return v

    def emit_rest(self) -> None:
        for v in self._defs:
            self._emit(v)

    def _emit(self, v: str) -> None:
        if v in self._emitted or v not in self._defs:
            return
        expr, base = self._defs[v]
        if base is not None:
            self._emit(base)
        self._emitted.add(v)
        self.lines.append(f"{v} = {expr}")

    def define_emitted(self, src: Source) -> str:
        """The local for ``src``, assigned by a line the caller writes itself."""
        v = self._define(src)
        self._emitted.add(v)
        return v

    def bind_const(self, src: Source, value: Any) -> None:
        """``src`` is known to hold ``value`` once an earlier check passed: refer to the constant."""
        self.var_of[_key(src)] = self.pool.ref(value)

    def _define(self, src: Source) -> str:
        key = _key(src)
        v = self.var_of.get(key)
        if v is not None:
            return v
        base = None
        if isinstance(src, AttrSource):
            base = b = self._define(src.base)
            if src.via == TYPE_FIELD:
                e = f"{self.pool.ref(type.__dict__[src.name].__get__)}({b})"
            elif src.via == PAST_HOOK:
                e = f"{self.pool.ref(object.__getattribute__)}({b}, {src.name!r})"
            elif src.via == "__dict__":
                e = f"{b}.__dict__[{src.name!r}]"
            elif src.via:
                e = f"{b}.{src.via}[{src.name!r}]"
            elif src.name.isidentifier():
                e = f"{b}.{src.name}"
            else:
                e = f"getattr({b}, {src.name!r})"
        elif isinstance(src, ItemSource):
            base = self._define(src.base)
            e = f"{base}[{literal(src.key, self.pool)}]"
        elif isinstance(src, CellSource):
            base = self._define(src.base)
            e = f"{base}.cell_contents"
        elif isinstance(src, DerefSource):
            base = self._define(src.base)
            e = f"{base}()"
        elif isinstance(src, ConstSource):
            e = self.pool.ref(src.value)
            self.var_of[key] = e
            return e
        elif isinstance(src, (ArgSource, GlobalSource, SelfArgsSource)):
            e = src.expr(self.pool)
        else:
            raise Unsupported(f"unknown source {src!r}")
        v = f"v{len(self.var_of)}"
        self.var_of[key] = v
        self._defs[v] = (e, base if base in self._defs else None)
        return v


def _key(src: Source):
    """What identifies ``src`` for sharing one local: the path, with held objects by identity.
    (Worked out once per source object: a deep path is asked for once per step below it.)"""
    if isinstance(src, (AttrSource, ItemSource, CellSource, DerefSource)):
        try:
            return src.__dict__["_memo_key"]
        except KeyError:
            return memo(src, "_memo_key", lambda: _path_key(src))
    return _path_key(src)


def _path_key(src: Source):
    if isinstance(src, ConstSource):
        return ("const", id(src.value))
    if isinstance(src, GlobalSource):
        return ("global", id(src.globals_dict), src.name)
    if isinstance(src, AttrSource):
        return ("attr", _key(src.base), src.name)
    if isinstance(src, ItemSource):
        try:
            hash(src.key)
            return ("item", _key(src.base), type(src.key), src.key)
        except TypeError:
            return ("item", _key(src.base), id(src.key))
    if isinstance(src, CellSource):
        return ("cell", _key(src.base))
    if isinstance(src, DerefSource):
        return ("deref", _key(src.base))
    if isinstance(src, SelfArgsSource):
        return ("selfargs", id(src.self_obj))
    return src


_MODULE_TABLES = ("_parameters", "_buffers", "_modules")


def direct_module_write(trace: Trace, held: HeldBatch, held_objs: set, node, name: str) -> bool:
    """Can the mock replay ``module.name = v`` as ``module.__dict__[name] = v``?

    ``nn.Module.__setattr__`` is Python code that checks the value's type against Parameter,
    Module and Buffer (a metaclass ``__instancecheck__``) and the name against three tables:
    several microseconds on every matched call. For a plain value (a number, a string, a tuple,
    a tensor made in the call) on a held module it ends in ``object.__setattr__``, i.e. a write
    of the instance dict, as long as: the module keeps its class, the class still resolves
    ``__setattr__`` to ``Module.__setattr__`` and has no data descriptor of that name, the module
    keeps its ``__dict__`` and its three tables, and none of the tables holds the name. Those
    conditions become held-state checks (dict version tags cover all but the class and the
    instance dict, which the per-call C pass checks).
    """
    obj = node.obj
    if not is_instance(obj, torch.nn.Module) or node.source is None or not (
            isinstance(node.source, ConstSource) or id(obj) in held_objs):
        return False
    d = instance_dict(obj)
    if not isinstance(d, dict) or name not in d:
        return False
    v = d[name]
    if isinstance(v, torch.Tensor):
        if type(v) is not torch.Tensor or trace.node(v) is not None or trace.graph.node_of(v) is None:
            return False   # only a plain tensor the graph makes (never a Parameter or an outside tensor)
    elif not is_immutable(v):
        return False
    cls = type(obj)
    tables = [d.get(t) for t in _MODULE_TABLES]
    if any(type(t) is not dict or name in t for t in tables):
        return False
    id_rows, absent_rows = [], []
    for attr in ("__setattr__", name):
        for klass in cls.__mro__:
            kd = klass.__dict__
            if attr in kd:
                found = kd[attr]
                if attr == "__setattr__" and found is not torch.nn.Module.__setattr__:
                    return False
                if attr == name and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
                    return False   # a property or other data descriptor: object.__setattr__ calls it
                id_rows.append((kd, attr, found))
                break
            absent_rows.append((kd, attr))
    held.types.append((obj, cls))
    held.dict_pins.append((obj, "__dict__", d))
    held.id_items.extend(id_rows + [(d, t, tbl) for t, tbl in zip(_MODULE_TABLES, tables)])
    held.absent.extend(absent_rows + [(tbl, name) for tbl in tables])
    held.described.append(f"{node.source.describe()}.{name} is written as a plain instance attribute: "
                          f"same class, Module.__setattr__, no descriptor or parameter/buffer/submodule {name!r}")
    return True


def batch_identity_items(guards: list, vars_: Vars) -> tuple[list, dict]:
    """A dict read whole whose values are all identity-guarded objects compared by identity
    (an nn.Module's ``_modules``) is checked by one snapshot comparison in C instead of a fetch
    and an ``is`` per item; the items are then the snapshot's constants."""
    ids = {g.source: g for g in guards if isinstance(g, IdGuard)}
    out, dropped, pinned = [], set(), {}
    for g in guards:
        if isinstance(g, KeysGuard) and g.keys:
            items = [ids.get(ItemSource(g.source, k)) for k in g.keys]
            if all(i is not None and type(i.obj).__eq__ is object.__eq__ for i in items):
                snap = {k: i.obj for k, i in zip(g.keys, items)}
                out.append(DictSnapshotGuard(g.source, snap, g.keys))
                for i in items:
                    dropped.add(id(i))
                    vars_.bind_const(i.source, i.obj)
                    pinned[i.source] = i.obj
                continue
        if id(g) not in dropped:
            out.append(g)
    return [g for g in out if id(g) not in dropped], pinned


def _root(src: Source) -> type:
    while hasattr(src, "base"):
        src = src.base
    return type(src)


def _flush(vars_: Vars, body: list[str]) -> None:
    for line in vars_.lines:
        body.append("    " + line)
    vars_.lines.clear()

