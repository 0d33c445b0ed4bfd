"""Batched checks of held state: many guards, a few C-level passes.

Most guards of a module-heavy program look at objects the record itself holds: a class's
``__dict__`` entry (``Linear.forward is K``), a function's ``__code__``, a module global
(``F`` in a file's globals), ``F.__dict__['relu']``, an attribute of an identity-guarded
submodule (``m.__dict__['eps'] == 1e-05``), a class attribute not shadowed on an instance.
Written one per line, each costs a fetch, a comparison and a jump in the interpreter. Because
the path to each of them starts at a held constant (or at an object pinned by an identity
guard), the container the last step reads from is itself known when the record is built, so
the check becomes "entry ``key`` of held container ``c`` is ``expected``", and all of them are
checked together with ``map`` over ``operator`` functions::

    if any(map(_is_not, map(_getitem, HELD_C, HELD_K), HELD_V)): return None

This is exactly as strong as the guards it replaces: each is still checked on every call on
the live container (held containers are the live ones: a module's ``__dict__``, a class's
mapping proxy, a globals dict; that an instance still has that very ``__dict__`` is checked
the same way), identity by ``is not`` and values by type and ``==`` as :class:`ValueGuard` does.
"""
from __future__ import annotations

import gc
import math
import operator
import types
from dataclasses import dataclass, field
from typing import Any

from ..guards import (
    AbsentGuard,
    AliasGuard,
    DictSnapshotGuard,
    IdGuard,
    KeyAbsentGuard,
    ModuleCallGuard,
    NoHooksGuard,
    TensorGuard,
    TypeGuard,
    ValueGuard,
)
from ..objmodel import MAPPINGS, exact_by_eq, exact_key
from ..realtype import class_lookup, class_namespace, instance_dict, is_instance, runs_lookup_hook
from ..source import PAST_HOOK, TYPE_FIELD, AttrSource, ConstSource, GlobalSource, ItemSource, Source

try:   # one C pass for the per-call class and instance-dict checks (magpy/_speedups.c)
    from .._speedups import check_funcs as _check_funcs
    from .._speedups import check_held as _check_held
except ImportError:   # pragma: no cover - no compiler at install time, or CPython 3.14+
    _check_held = _check_funcs = None

_MISSING = object()
_HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_FIXED_CLASS = (dict, list, tuple, set, frozenset)   # builtins whose __class__ cannot be reassigned


@dataclass
class HeldBatch:
    """Guards turned into entries of held containers; ``lines(ns)`` writes their checks."""

    id_items: list = field(default_factory=list)     # (container, key, expected object)
    id_attrs: list = field(default_factory=list)     # (object, name, expected object)
    value_items: list = field(default_factory=list)  # (container, key, expected value)
    absent: list = field(default_factory=list)       # (container, key)
    dict_pins: list = field(default_factory=list)    # (object, its __dict__ / module table)
    described: list = field(default_factory=list)   # the checks in words (Guard.description)
    pinned: list = field(default_factory=list)       # (source, object) fixed by a batched identity check
    types: list = field(default_factory=list)        # (object, expected exact type)
    hook_tables: list = field(default_factory=list)  # (module __dict__, hook table name): must stay empty
    tensors: list = field(default_factory=list)      # (container, key, source, example tensor)
    tensor_dims: list = field(default_factory=list)  # (sizes, strides) of each, as the call found them
    snapshots: list = field(default_factory=list)    # (held dict, snapshot, keys)
    tensors_versioned: bool = False                  # every table the tensors come from is versioned

    def pinned_sources(self) -> list:
        return list(self.pinned)

    def __len__(self) -> int:
        return len(self.id_items) + len(self.id_attrs) + len(self.value_items) + len(self.absent)

    def lines(self, ns: dict[str, Any]) -> tuple[list[str], list[str], list]:
        """(always, versioned, dicts): check lines for the generated guard (constants go into
        ``ns``). ``versioned`` lines only read the contents of the dicts in ``dicts``: while
        none of their version tags moved since they last passed, they need not run again."""
        ns.update(_is_not=operator.is_not, _getitem=operator.getitem, _contains=operator.contains)
        always: list[str] = []
        slow: list[str] = []
        vdicts: dict[int, dict] = {}

        real_of: dict[int, Any] = {}   # id(container) -> _real_dict(container) (rows share containers)

        def real(c) -> dict | None:
            r = real_of.get(id(c), _MISSING)
            if r is _MISSING:
                r = real_of[id(c)] = _real_dict(c)
            return r

        def watch_one(c) -> bool:
            """:func:`watch` of one container (most rows name one)."""
            r = real(c)
            if r is None:
                return False
            vdicts[id(r)] = r
            return True

        def watch(*containers) -> bool:
            """Are all of ``containers`` covered by a version tag? Then their dicts are watched."""
            reals = [real(c) for c in containers]
            if any(r is None for r in reals):
                return False
            for r in reals:
                vdicts[id(r)] = r
            return True

        def group(name: str, rows: list, line, covered) -> None:
            """Emit ``line`` for the rows covered by version tags (slow) and for the rest (always)."""
            flags = [covered(r) for r in rows]   # (once per row: covering it watches its dicts)
            s_rows = [r for r, f in zip(rows, flags) if f]
            a_rows = [r for r, f in zip(rows, flags) if not f]
            for suffix, chosen, out in (("S", s_rows, slow), ("A", a_rows, always)):
                if chosen:
                    out.extend(line(f"{name}{suffix}", chosen))

        def ident(getter: str):
            def line(name, rows):
                c, k, v = zip(*rows)
                ns[f"_{name}_C"], ns[f"_{name}_K"], ns[f"_{name}_V"] = c, k, v
                return [f"if any(map(_is_not, map({getter}, _{name}_C, _{name}_K), _{name}_V)): return _MISS"]
            return line

        pins = list({(id(o), id(d)): (o, via, d) for o, via, d in self.dict_pins}.values())
        types_ = list(self.types)
        if _check_held is not None:
            # Classes and instance __dict__s (what no version tag covers) checked in one C pass.
            per_obj: dict[int, list] = {}
            for o, t in types_:
                per_obj.setdefault(id(o), [o, None, None])[1] = t
            for o, via, d in pins:
                if via == "__dict__":
                    per_obj.setdefault(id(o), [o, None, None])[2] = d
            if per_obj:
                o, t, d = zip(*per_obj.values())
                ns["_check_held"], ns["_HO_O"], ns["_HO_T"], ns["_HO_D"] = _check_held, o, t, d
                always.append("if not _check_held(_HO_O, _HO_T, _HO_D): return _MISS")
            pins = [r for r in pins if r[1] != "__dict__"]
            types_ = []
        group("HP", pins, ident("getattr"),
              lambda r: r[1] != "__dict__" and isinstance(getattr(r[0], "__dict__", None), dict)
              and r[1] in r[0].__dict__ and watch_one(r[0].__dict__))
        group("HI", self.id_items, ident("_getitem"), lambda r: watch_one(r[0]))
        id_attrs = self.id_attrs
        if _check_funcs is not None:
            kinds = {"__code__": "c", "__defaults__": "d", "__kwdefaults__": "k"}
            fn_rows = [r for r in id_attrs if type(r[0]) is types.FunctionType and r[1] in kinds]
            if fn_rows:
                f, k, v = zip(*fn_rows)
                ns["_check_funcs"], ns["_HFN_F"], ns["_HFN_V"] = _check_funcs, f, v
                ns["_HFN_K"] = "".join(kinds[x] for x in k).encode()
                always.append("if not _check_funcs(_HFN_F, _HFN_K, _HFN_V): return _MISS")
                id_attrs = [r for r in id_attrs if not (type(r[0]) is types.FunctionType and r[1] in kinds)]
        group("HA", id_attrs, ident("getattr"), lambda r: False)
        if types_:
            o, t = zip(*types_)
            ns["_HT_O"], ns["_HT_T"] = o, t
            always.append("if any(map(_is_not, map(type, _HT_O), _HT_T)): return _MISS")

        def snapshots(name, rows):
            d, snap, keys = zip(*rows)
            ns[f"_{name}_D"], ns[f"_{name}_S"], ns[f"_{name}_K"] = d, snap, tuple(keys)
            lines = [f"if _{name}_D != _{name}_S or tuple(map(list, _{name}_D)) != _{name}_K: return _MISS"]
            if not all(type(k) is str for ks in keys for k in ks):   # (see guards.exact_keys_check)
                ns["_exact_key"], ns[f"_{name}_E"] = exact_key, exact_key(tuple(map(tuple, keys)))
                lines.append(f"if _exact_key(tuple(map(tuple, _{name}_D))) != _{name}_E: return _MISS")
            return lines
        group("HS", self.snapshots, snapshots, lambda r: watch_one(r[0]))

        def hooks(name, rows):
            c, k = zip(*rows)
            ns[f"_{name}_C"], ns[f"_{name}_K"] = c, k
            return [f"if any(map(len, map(_getitem, _{name}_C, _{name}_K))): return _MISS"]
        group("HH", self.hook_tables, hooks, lambda r: watch(r[0], r[0][r[1]]))

        def values(name, rows):
            c, k, v = zip(*rows)
            ns[f"_{name}_C"], ns[f"_{name}_K"], ns[f"_{name}_V"] = c, k, v
            ns[f"_{name}_T"] = tuple(type(x) for x in v)
            lines = [f"_hv = tuple(map(_getitem, _{name}_C, _{name}_K))",
                     # (types first: a value of another type may not compare to a bool, an array)
                     f"if tuple(map(type, _hv)) != _{name}_T or _hv != _{name}_V: return _MISS"]
            # What == leaves out, for the values where it is not exact (see objmodel.exact_key),
            # in C-level passes for the common kinds: a float zero's sign (`dropout = 0.0`), the
            # types of a tuple's items (`kernel_size = (3, 3)`); anything else by its exact key.
            zeros = [r for r in rows if type(r[2]) is float and r[2] == 0.0]
            flat = [r for r in rows if type(r[2]) is tuple and all(map(exact_by_eq, r[2]))]
            other = [r for r in rows if not exact_by_eq(r[2]) and not any(r is x for x in zeros + flat)]
            for kind, sub, fn, expected in (
                    ("Z", zeros, "map(_copysign, _{0}_1, _{0}_F)", [math.copysign(1.0, r[2]) for r in zeros]),
                    ("Y", flat, "map(tuple, map(map, _{0}_1, _{0}_F))", [tuple(map(type, r[2])) for r in flat]),
                    ("X", other, "map(_exact_key, _{0}_F)", [exact_key(r[2]) for r in other])):
                if sub:
                    sn = f"{name}{kind}"
                    ns[f"_{sn}_C"], ns[f"_{sn}_K"] = tuple(r[0] for r in sub), tuple(r[1] for r in sub)
                    ns[f"_{sn}_1"] = (1.0,) * len(sub) if kind == "Z" else (type,) * len(sub)
                    ns[f"_{sn}_E"] = tuple(expected)
                    ns.update(_copysign=math.copysign, _exact_key=exact_key)
                    lines.append(f"_{sn}_F = tuple(map(_getitem, _{sn}_C, _{sn}_K))")
                    lines.append(f"if tuple({fn.format(sn)}) != _{sn}_E: return _MISS")
            return lines
        group("HV", self.value_items, values, lambda r: watch_one(r[0]))

        def absent(name, rows):
            c, k = zip(*rows)
            ns[f"_{name}_C"], ns[f"_{name}_K"] = c, k
            return [f"if any(map(_contains, _{name}_C, _{name}_K)): return _MISS"]
        group("HX", self.absent, absent, lambda r: watch_one(r[0]))
        self.tensors_versioned = bool(self.tensors) and all(watch_one(c) for c, _, _, _ in self.tensors)
        return always, slow, list(vdicts.values())


def _real_dict(c: Any) -> dict | None:
    """The dict whose version tag tells whether ``c`` changed: ``c`` itself, or the namespace
    behind a class's mapping proxy."""
    if isinstance(c, dict):
        return c
    if isinstance(c, types.MappingProxyType):
        refs = gc.get_referents(c)
        if len(refs) == 1 and isinstance(refs[0], dict):
            return refs[0]
    return None


def _identity_only(obj: Any) -> bool:
    """Objects whose guard compares identity (no ``__eq__`` that could say yes for another object)."""
    return is_instance(obj, (types.CodeType, types.FunctionType, types.BuiltinFunctionType, type,
                             types.ModuleType)) or class_lookup(type(obj), "__eq__") is object.__eq__


def _batchable_value(v: Any) -> bool:
    if any(e != e for e in (v if type(v) is tuple else (v,))):
        return False   # a NaN (of another object: == says no): ValueGuard compares its bits
    return type(v) in (int, float, bool, str, bytes, type(None)) or (
        type(v) is tuple and all(type(e) in (int, float, bool, str, type(None)) for e in v))


def _own_dict(obj: Any) -> Any:
    """``obj.__dict__`` (None where it has none), read past a ``__getattribute__`` of its class's
    (which ``obj.__dict__`` would run: a lookup of the program's, :mod:`magpy.realtype`)."""
    return instance_dict(obj) if runs_lookup_hook(obj) else getattr(obj, "__dict__", None)


def _held_value(src: Source, pins: dict) -> Any:
    """The object ``src`` is fixed to (a constant, a pinned object, a held class's namespace),
    or ``_MISSING``. (Module-level: a recursive local function would be a reference cycle.)"""
    if isinstance(src, ConstSource):
        return src.value
    if isinstance(src, AttrSource) and src.name == "__dict__" and src.via == "":
        c = _held_value(src.base, pins)
        if is_instance(c, type):
            return class_namespace(c)   # a class's mapping proxy is a live view of its namespace
        if isinstance(c, types.ModuleType):
            return c.__dict__
        return _MISSING
    return pins.get(src, _MISSING)


def batch_held(guards: list, pinned: dict[Any, Any]) -> tuple[list, HeldBatch]:
    """Split ``guards`` into those checked in a :class:`HeldBatch` and the rest.

    ``pinned`` maps sources to the object an identity guard (or a checked snapshot) fixes them to.
    """
    batch = HeldBatch()
    pins = dict(pinned)
    for g in guards:
        if isinstance(g, IdGuard):
            pins.setdefault(g.source, g.obj)

    def const(src: Source) -> Any:
        return _held_value(src, pins)

    def locate(src: Source) -> tuple | None:
        """(kind, holder, key) of the last step of ``src`` when its base is held."""
        if isinstance(src, GlobalSource) and isinstance(src.globals_dict, dict):
            return ("item", src.globals_dict, src.name)
        if isinstance(src, ItemSource):
            c = const(src.base)
            if type(c) in MAPPINGS:
                try:
                    hash(src.key)
                except TypeError:
                    return None
                return ("item", c, src.key)
            return None
        if isinstance(src, AttrSource):
            c = const(src.base)
            if c is _MISSING:
                return None
            if src.via == "":
                return ("attr", c, src.name)
            if src.via in (TYPE_FIELD, PAST_HOOK):
                return None   # (a class's own field, a read past the class's hook: checked as spelled)
            return _table(c, src.via, src.name)
        return None

    def _table(c: Any, via: str, name: str) -> tuple | None:
        if via == "__dict__":
            d = class_namespace(c) if is_instance(c, type) else _own_dict(c)
        else:
            d = getattr(c, via, None) if not runs_lookup_hook(c) else (_own_dict(c) or {}).get(via)
        if not isinstance(d, MAPPINGS):
            return None
        if not is_instance(c, (type, types.ModuleType)):
            batch.dict_pins.append((c, via, d))   # the instance still has that very table
        return ("item", d, name)

    # Dicts pinned by a snapshot first: guards listed before them (their exact type) use the pin.
    snap_at: dict[int, tuple] = {}
    for g in guards:
        if isinstance(g, DictSnapshotGuard):
            loc = locate(g.source)
            if loc is not None and loc[0] == "item":
                d = loc[1][loc[2]]
                snap_at[id(g)] = (loc, d)
                pins[g.source] = d
    rest = []
    for g in guards:
        # (dispatched on the exact kind: guard kinds are final classes, and a kind not named here
        # is checked as it is, unbatched)
        kind = type(g)
        if kind is AliasGuard and g.other in pins:
            g = IdGuard(g.source, pins[g.other])   # a second path to a pinned object: the same pin
            kind = IdGuard
        loc = None
        if kind is AbsentGuard:
            c = const(g.source)
            if c is not _MISSING:
                loc = _table(c, "__dict__", g.name)
                if loc is not None:
                    batch.absent.append((loc[1], loc[2]))
        elif kind is KeyAbsentGuard:
            c = const(g.source)
            if isinstance(c, dict):
                loc = ("item", c, g.key)
                batch.absent.append((c, g.key))
            else:
                # a table of a held object (`module.__dict__['_parameters']`, attribute precedence):
                # that very dict, pinned through its holder, then the key's absence
                at = locate(g.source)
                d = at[1].get(at[2], _MISSING) if at is not None and at[0] == "item" and type(at[1]) is dict \
                    else _MISSING
                if type(d) is dict:
                    batch.id_items.append((at[1], at[2], d))
                    batch.pinned.append((g.source, d))
                    batch.absent.append((d, g.key))
                    loc = ("item", d, g.key)
        elif kind is IdGuard:
            if _identity_only(g.obj):
                loc = locate(g.source)
                if loc is not None:
                    (batch.id_items if loc[0] == "item" else batch.id_attrs).append((loc[1], loc[2], g.obj))
                    batch.pinned.append((g.source, g.obj))
        elif kind is ValueGuard:
            if _batchable_value(g.value):
                loc = locate(g.source)
                if loc is not None and loc[0] == "item":
                    batch.value_items.append((loc[1], loc[2], g.value))
                else:
                    loc = None
        elif kind is TypeGuard:
            c = const(g.source)
            if c is not _MISSING:
                if not (type(c) is g.cls and type(c) in _FIXED_CLASS):
                    batch.types.append((c, g.cls))
                # (else implied by the identity pin: a dict keeps its class)
                batch.described.append(g.description())
                continue
        elif kind is ModuleCallGuard:
            c = const(g.source)
            d = _own_dict(c) if c is not _MISSING else None
            if isinstance(d, dict):
                # type, the four hook tables (pinned, then empty) and no instance `forward`
                tables = [d.get(table) for table in _HOOK_TABLES]
                if all(isinstance(t, dict) for t in tables):
                    batch.types.append((c, g.cls))
                    batch.hook_tables.extend((d, table) for table in _HOOK_TABLES)
                    batch.dict_pins.append((c, "__dict__", d))
                    batch.absent.append((d, "forward"))
                    batch.described.append(g.description())
                    continue
        elif kind is TensorGuard:
            loc = locate(g.source)
            if loc is not None and loc[0] == "item":
                batch.tensors.append((loc[1], loc[2], g.source, g.tensor))
                batch.tensor_dims.append((g.sizes(), g.strides()))
                batch.described.append(g.description())
                continue
            loc = None
        elif kind is DictSnapshotGuard:
            if id(g) in snap_at:
                loc, d = snap_at[id(g)]
                batch.id_items.append((loc[1], loc[2], d))   # that very dict, then its contents
                batch.snapshots.append((d, g.snapshot, g.keys))
                batch.pinned.append((g.source, d))
        elif kind is NoHooksGuard:
            c = const(g.source)
            d = _own_dict(c) if c is not _MISSING else None
            if isinstance(d, dict) and all(isinstance(d.get(t), dict) for t in _HOOK_TABLES):
                batch.hook_tables.extend((d, t) for t in _HOOK_TABLES)
                batch.dict_pins.append((c, "__dict__", d))
                batch.described.append(g.description())
                continue
        if loc is None:
            rest.append(g)
        else:
            batch.described.append(g.description())
    return rest, batch
