"""Sources: where a pre-existing object lives, as a path from the external state (SN #0).

Every object that a monitor run reads from outside the compiled call is reached from
SN #0 (arguments, globals, closure cells, defaults) through a chain of reference
relations (attribute, item, cell contents...). A :class:`Source` is that chain; the
guard and the mock turn it into Python code that fetches the object again::

    >>> src = AttrSource(ArgSource(0, "self"), "scale")
    >>> src.expr()
    'args[0].scale'
    >>> src.describe()
    'self.scale'

Constants that cannot be spelled as literals (dict keys of odd types, the globals
dict of a module) go through a :class:`ConstPool` and appear as ``K3`` in the code.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

from .objmodel import instance_dict
from .realtype import class_lookup, class_qualname, is_instance


class ConstPool:
    """Objects that generated code refers to by name (``K0``, ``K1``, ...)."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[int, int] = {}

    def ref(self, value: Any) -> str:
        """Name under which generated code sees ``value`` (identity-deduplicated)."""
        i = self._index.get(id(value))
        if i is None:
            i = len(self.values)
            self.values.append(value)
            self._index[id(value)] = i
        return f"K{i}"

    def namespace(self) -> dict[str, Any]:
        return {f"K{i}": v for i, v in enumerate(self.values)}


_LITERAL_TYPES = (int, float, str, bool, type(None), bytes)


def _spells_itself(value: Any) -> bool:
    """Is ``repr(value)`` Python code for ``value``? (Not for NaN and the infinities: ``inf``.)"""
    return type(value) in _LITERAL_TYPES and not (
        type(value) is float and (value != value or value in (float("inf"), float("-inf"))))


def literal(value: Any, pool: ConstPool) -> str:
    """Python code that evaluates to ``value``: a literal when safe, else a pool name."""
    if _spells_itself(value) or (type(value) is tuple and all(_spells_itself(v) for v in value)):
        return repr(value)
    return pool.ref(value)


def memo(src: Any, slot: str, compute: Any) -> Any:
    """``compute()`` once per source, kept in the (frozen) source's ``slot``: a path's hash, its
    readable name and its code-generation key are built from every step of it, and code generation
    asks for them of the same deep paths many times (sources are immutable, so none ever changes)."""
    v = src.__dict__.get(slot)
    if v is None:
        v = compute()
        object.__setattr__(src, slot, v)
    return v


def _memo_hash(src: Any, compute: Any) -> int:
    return memo(src, "_memo_hash", compute)


def _memo_describe(src: Any, compute: Any) -> str:
    return memo(src, "_memo_describe", compute)


class Source:
    """A path from SN #0 to an object present at function entry."""

    def expr(self, pool: ConstPool | None = None) -> str:
        raise NotImplementedError

    def describe(self) -> str:
        """Readable name for break reasons and guard listings."""
        return self.expr(ConstPool())

    def depth(self) -> int:
        return 0


@dataclass(frozen=True)
class ArgSource(Source):
    """A parameter of the compiled function, as passed by the caller.

    ``kind`` is ``"pos"`` (``args[index]``), ``"kw"`` (``kwargs[name]``), ``"varpos"``
    (``args[index:]``, the ``*args`` tuple) or ``"varkw"`` (the ``**kwargs`` dict).
    """

    index: int
    name: str
    kind: str = "pos"
    exclude: tuple = ()   # for "varkw": the named parameters passed by keyword

    def expr(self, pool=None) -> str:
        if self.kind == "kw":
            return f"kwargs[{self.name!r}]"
        if self.kind == "varpos":
            return f"args[{self.index}:]"
        if self.kind == "varkw":
            if self.exclude:
                return f"{{k: v for k, v in kwargs.items() if k not in {self.exclude!r}}}"
            return "kwargs"
        return f"args[{self.index}]"

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True)
class GlobalSource(Source):
    """A name in a module's globals dict."""

    globals_dict: Any
    name: str

    def expr(self, pool=None) -> str:
        pool = pool if pool is not None else ConstPool()
        return f"{pool.ref(self.globals_dict)}[{self.name!r}]"

    def describe(self) -> str:
        mod = self.globals_dict.get("__name__", "?") if isinstance(self.globals_dict, dict) else "?"
        return f"{mod}.{self.name}"

    def __hash__(self) -> int:
        return hash((id(self.globals_dict), self.name))

    def __eq__(self, other) -> bool:
        return isinstance(other, GlobalSource) and other.globals_dict is self.globals_dict and other.name == self.name


@dataclass(frozen=True)
class ConstSource(Source):
    """An object the compiled function holds itself (the module being compiled, a cell)."""

    value: Any
    label: str

    def expr(self, pool=None) -> str:
        pool = pool if pool is not None else ConstPool()
        return pool.ref(self.value)

    def describe(self) -> str:
        return self.label

    def __hash__(self) -> int:
        return hash(id(self.value))

    def __eq__(self, other) -> bool:
        return isinstance(other, ConstSource) and other.value is self.value


@dataclass(frozen=True)
class AttrSource(Source):
    """``base.name``; ``via`` selects another spelling: a table (``__dict__`` or an nn.Module
    table), ``type``: a class's own field (``__mro__``) read through ``type``'s descriptor, past
    the ``__getattribute__`` of a metaclass of the program's (:data:`TYPE_FIELD`), or ``object``:
    ``object.__getattribute__(base, name)``, past the class's own ``__getattribute__``
    (:data:`PAST_HOOK`)."""

    base: Source
    name: str
    via: str = ""  # "" | "__dict__" | "_modules" | "_parameters" | "_buffers" | "type" | "object"

    def expr(self, pool=None) -> str:
        b = self.base.expr(pool)
        if self.via == TYPE_FIELD:
            return f"type.__dict__[{self.name!r}].__get__({b})"
        if self.via == PAST_HOOK:
            return f"object.__getattribute__({b}, {self.name!r})"
        if self.via:
            return f"{b}.{self.via}[{self.name!r}]" if self.via != "__dict__" else f"{b}.__dict__[{self.name!r}]"
        if self.name.isidentifier():
            return f"{b}.{self.name}"
        return f"getattr({b}, {self.name!r})"

    def describe(self) -> str:
        return _memo_describe(self, lambda: f"{self.base.describe()}.{self.name}")

    def depth(self) -> int:
        return self.base.depth() + 1

    def __hash__(self) -> int:
        try:
            return self.__dict__["_memo_hash"]   # (asked for on every dict lookup of a source)
        except KeyError:
            return _memo_hash(self, lambda: hash((self.base, self.name, self.via)))


@dataclass(frozen=True)
class ItemSource(Source):
    """``base[key]`` for containers (list index, dict key)."""

    base: Source
    key: Any

    def expr(self, pool=None) -> str:
        return f"{self.base.expr(pool)}[{literal(self.key, pool if pool is not None else ConstPool())}]"

    def describe(self) -> str:
        return _memo_describe(self, lambda: f"{self.base.describe()}[{self.key!r}]")

    def depth(self) -> int:
        return self.base.depth() + 1

    def __hash__(self) -> int:
        try:
            return self.__dict__["_memo_hash"]
        except KeyError:
            return _memo_hash(self, self._hash)

    def _hash(self) -> int:
        try:
            return hash((self.base, self.key))
        except TypeError:
            return hash((self.base, id(self.key)))


@dataclass(frozen=True)
class CellSource(Source):
    """The contents of a closure cell (``cell.cell_contents``)."""

    base: Source

    def expr(self, pool=None) -> str:
        return f"{self.base.expr(pool)}.cell_contents"

    def describe(self) -> str:
        return f"{self.base.describe()}.cell_contents"

    def depth(self) -> int:
        return self.base.depth() + 1


@dataclass(frozen=True)
class DerefSource(Source):
    """The target of a weak reference (``ref()``); None once the target is gone."""

    base: Source

    def expr(self, pool=None) -> str:
        return f"{self.base.expr(pool)}()"

    def describe(self) -> str:
        return f"{self.base.describe()}()"

    def depth(self) -> int:
        return self.base.depth() + 1


@dataclass(frozen=True)
class SelfArgsSource(Source):
    """The ``*args`` tuple of a bound wrapper ``f(*args, **kwargs)``: ``self`` followed by the arguments."""

    self_obj: Any

    def expr(self, pool=None) -> str:
        pool = pool if pool is not None else ConstPool()
        return f"({pool.ref(self.self_obj)},) + args"

    def describe(self) -> str:
        return "*args (self first)"

    def __hash__(self) -> int:
        return hash(id(self.self_obj))

    def __eq__(self, other) -> bool:
        return isinstance(other, SelfArgsSource) and other.self_obj is self.self_obj


def class_dict_source(cls: type) -> AttrSource:
    """Where ``cls.__dict__`` is read from: the namespace view of that very class, which the
    record holds (guards on it read the live namespace)."""
    return AttrSource(ConstSource(cls, class_qualname(cls)), "__dict__")


#: The ``via`` of an :class:`AttrSource` that reads a class's own field the way
#: :func:`magpy.realtype.class_mro` does (``type.__dict__[name].__get__(cls)``).
TYPE_FIELD = "type"
#: The ``via`` of an :class:`AttrSource` read as the program's ``object.__getattribute__(obj, name)``
#: (``super().__getattribute__(name)`` in a class's own ``__getattribute__``) reads it: past that
#: hook, which ``obj.name`` would run again.
PAST_HOOK = "object"


def class_field_source(cls: type, name: str) -> AttrSource:
    """Where ``cls.<name>`` (``__mro__``: a field of the type object) is read from: through
    ``type``'s descriptor where a metaclass of the program has its own ``__getattribute__`` (which
    ``cls.__mro__`` would run, a lookup eager does not make), else the plain spelling."""
    meta_hook = type(class_lookup(type(cls), "__getattribute__")) is types.FunctionType
    return AttrSource(ConstSource(cls, class_qualname(cls)), name, TYPE_FIELD if meta_hook else "")


#: What :func:`peek_value` gives for a source it cannot read without running the program's code.
UNREAD = object()


def peek_value(source: Source, params: dict, depth: int = 0) -> Any:
    """The value ``source`` names for a call whose parameters are ``params`` (name -> value), read
    through instance dicts, an nn.Module's tables, list/tuple/dict items and globals only, so no
    code of the program runs (no property, no ``__getattr__``, no ``__getitem__`` of its own).
    :data:`UNREAD` where that is not enough."""
    if depth > 16:
        return UNREAD
    if isinstance(source, ArgSource):
        return params.get(source.name, UNREAD) if source.kind in ("pos", "kw") else UNREAD
    if isinstance(source, ConstSource):
        return source.value
    if isinstance(source, GlobalSource):
        return source.globals_dict.get(source.name, UNREAD) if type(source.globals_dict) is dict else UNREAD
    if isinstance(source, AttrSource):
        base = peek_value(source.base, params, depth + 1)
        if source.via == TYPE_FIELD:
            return type.__dict__[source.name].__get__(base) if is_instance(base, type) else UNREAD
        table = instance_dict(base) if base is not UNREAD else None
        if source.via == PAST_HOOK:
            cls_attr = class_lookup(type(base), source.name) if base is not UNREAD else None
            if type(table) is not dict or cls_attr is not None:
                return UNREAD   # (a class attribute or descriptor: not read here)
            return table.get(source.name, UNREAD)
        if type(table) is not dict:
            return UNREAD
        if source.via and source.via != "__dict__":
            table = table.get(source.via)
            if type(table) is not dict:
                return UNREAD
        return table.get(source.name, UNREAD)
    if isinstance(source, ItemSource):
        base = peek_value(source.base, params, depth + 1)
        if type(base) in (list, tuple) and type(source.key) is int and -len(base) <= source.key < len(base):
            return base[source.key]
        if type(base) is dict:
            try:
                return base.get(source.key, UNREAD)
            except TypeError:
                return UNREAD
    return UNREAD
