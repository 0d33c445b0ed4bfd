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

import operator
import types
from dataclasses import dataclass, field
from typing import Any

from .guards import (
    AbsentGuard,
    DictSnapshotGuard,
    IdGuard,
    ModuleCallGuard,
    TensorGuard,
    TypeGuard,
    ValueGuard,
)
from .source import AttrSource, ConstSource, GlobalSource, ItemSource, Source

_MISSING = object()
_MAPPINGS = (dict, types.MappingProxyType)


@dataclass
class HeldBatch:
    """Guards turned into entries of held containers; ``lines(ns)`` writes their checks."""

    id_items: list = field(default_factory=list)     # (container, key, expected object)
    id_attrs: list = field(default_factory=list)     # (object, name, expected object)
    value_items: list = field(default_factory=list)  # (container, key, expected value)
    absent: list = field(default_factory=list)       # (container, key)
    dict_pins: list = field(default_factory=list)    # (object, its __dict__ / module table)
    described: list = field(default_factory=list)
    pinned: list = field(default_factory=list)       # (source, object) fixed by a batched identity check
    types: list = field(default_factory=list)        # (object, expected exact type)
    hook_tables: list = field(default_factory=list)  # (module __dict__, hook table name): must stay empty
    tensors: list = field(default_factory=list)      # (container, key, source, example tensor)
    snapshots: list = field(default_factory=list)    # (held dict, snapshot, keys)

    def pinned_sources(self) -> list:
        return list(self.pinned)

    def __len__(self) -> int:
        return len(self.id_items) + len(self.id_attrs) + len(self.value_items) + len(self.absent)

    def lines(self, ns: dict[str, Any]) -> list[str]:
        """Check lines for the generated guard; constants go into ``ns``."""
        ns.update(_is_not=operator.is_not, _getitem=operator.getitem, _contains=operator.contains)
        out = []

        def ident(name: str, triples: list, getter: str) -> None:
            if not triples:
                return
            c, k, v = zip(*triples)
            ns[f"_{name}_C"], ns[f"_{name}_K"], ns[f"_{name}_V"] = c, k, v
            out.append(f"if any(map(_is_not, map({getter}, _{name}_C, _{name}_K), _{name}_V)): return None")

        pins = list({(id(o), id(d)): (o, via, d) for o, via, d in self.dict_pins}.values())
        ident("HP", [(o, via, d) for o, via, d in pins], "getattr")
        ident("HI", self.id_items, "_getitem")
        ident("HA", self.id_attrs, "getattr")
        if self.types:
            o, t = zip(*self.types)
            ns["_HT_O"], ns["_HT_T"] = o, t
            out.append("if any(map(_is_not, map(type, _HT_O), _HT_T)): return None")
        if self.snapshots:
            d, snap, keys = zip(*self.snapshots)
            ns["_HS_D"], ns["_HS_S"], ns["_HS_K"] = d, snap, tuple(keys)
            out.append("if _HS_D != _HS_S or tuple(map(list, _HS_D)) != _HS_K: return None")
        if self.hook_tables:
            c, k = zip(*self.hook_tables)
            ns["_HH_C"], ns["_HH_K"] = c, k
            out.append("if any(map(len, map(_getitem, _HH_C, _HH_K))): return None")
        if self.value_items:
            c, k, v = zip(*self.value_items)
            ns["_HV_C"], ns["_HV_K"], ns["_HV_V"] = c, k, v
            ns["_HV_T"] = tuple(type(x) for x in v)
            out.append("_hv = tuple(map(_getitem, _HV_C, _HV_K))")
            out.append("if _hv != _HV_V or tuple(map(type, _hv)) != _HV_T: return None")
        if self.absent:
            c, k = zip(*self.absent)
            ns["_HX_C"], ns["_HX_K"] = c, k
            out.append("if any(map(_contains, _HX_C, _HX_K)): return None")
        return out


def _identity_only(obj: Any) -> bool:
    """Objects whose guard compares identity (no ``__eq__`` that could say yes for another object)."""
    return isinstance(obj, (types.CodeType, types.FunctionType, types.BuiltinFunctionType, type,
                            types.ModuleType)) or type(obj).__eq__ is object.__eq__


def _batchable_value(v: Any) -> bool:
    if isinstance(v, float) and v != v:
        return False
    return type(v) in (int, float, bool, str, bytes, type(None)) or (
        type(v) is tuple and all(type(e) in (int, float, bool, str, type(None)) for e in v))


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
        if isinstance(src, ConstSource):
            return src.value
        if isinstance(src, AttrSource) and src.name == "__dict__" and src.via == "":
            c = const(src.base)
            if isinstance(c, (type, types.ModuleType)):
                return c.__dict__   # a class's mapping proxy is a live view of its namespace
            return _MISSING
        return pins.get(src, _MISSING)

    def locate(src: Source) -> tuple | None:
        """(kind, holder, key) of the last step of ``src`` when its base is held."""
        if isinstance(src, GlobalSource) and isinstance(src.globals_dict, dict):
            return ("item", src.globals_dict, src.name)
        if isinstance(src, ItemSource):
            c = const(src.base)
            if type(c) in _MAPPINGS:
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
            return _table(c, src.via, src.name)
        return None

    def _table(c: Any, via: str, name: str) -> tuple | None:
        d = getattr(c, via, None) if via != "__dict__" else getattr(c, "__dict__", None)
        if not isinstance(d, _MAPPINGS):
            return None
        if not isinstance(c, (type, types.ModuleType)):
            batch.dict_pins.append((c, via, d))   # the instance still has that very table
        return ("item", d, name)

    rest = []
    for g in guards:
        loc = None
        c = const(g.source)
        if isinstance(g, ModuleCallGuard) and c is not _MISSING and isinstance(c.__dict__, dict):
            # type, the four hook tables (pinned, then empty) and no instance `forward`
            batch.types.append((c, g.cls))
            for table in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"):
                if not isinstance(c.__dict__.get(table), dict):
                    break
                batch.hook_tables.append((c.__dict__, table))
            else:
                batch.dict_pins.append((c, "__dict__", c.__dict__))
                batch.absent.append((c.__dict__, "forward"))
                batch.described.append(g.describe())
                continue
            del batch.types[-1]
            batch.hook_tables[len(batch.hook_tables) - sum(1 for d, _ in batch.hook_tables if d is c.__dict__):] = []
            rest.append(g)
            continue
        if isinstance(g, DictSnapshotGuard):
            loc = locate(g.source)
            if loc is not None and loc[0] == "item":
                d = loc[1][loc[2]]
                batch.id_items.append((loc[1], loc[2], d))   # that very dict, then its contents
                batch.snapshots.append((d, g.snapshot, g.keys))
                batch.pinned.append((g.source, d))
                pins[g.source] = d
                batch.described.append(g.describe())
                continue
            loc = None
        if isinstance(g, TypeGuard) and c is not _MISSING:
            batch.types.append((c, g.cls))
            batch.described.append(g.describe())
            continue
        if isinstance(g, TensorGuard):
            loc = locate(g.source)
            if loc is not None and loc[0] == "item":
                batch.tensors.append((loc[1], loc[2], g.source, g.tensor))
                batch.described.append(g.describe())
                continue
            loc = None
        if isinstance(g, IdGuard) and _identity_only(g.obj):
            loc = locate(g.source)
            if loc is not None:
                (batch.id_items if loc[0] == "item" else batch.id_attrs).append((loc[1], loc[2], g.obj))
                batch.pinned.append((g.source, g.obj))
        elif isinstance(g, ValueGuard) and _batchable_value(g.value):
            loc = locate(g.source)
            if loc is not None and loc[0] == "item":
                batch.value_items.append((loc[1], loc[2], g.value))
            else:
                loc = None
        elif isinstance(g, AbsentGuard):
            c = const(g.source)
            if c is not _MISSING:
                loc = _table(c, "__dict__", g.name)
                if loc is not None:
                    batch.absent.append((loc[1], loc[2]))
        if loc is None:
            rest.append(g)
        else:
            batch.described.append(g.describe())
    return rest, batch
