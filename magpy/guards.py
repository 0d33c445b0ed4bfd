"""Guard kinds (paper §4.2): one class per kind of check on an object read from outside.

The monitor run creates a guard for everything it reads through a :class:`~magpy.source.Source`
(the type of an object, the value of a scalar, the keys of a dict, the metadata of a tensor,
the identity of a module or function...). Code generation asks each guard for the Python
condition that checks it and for a line of text that says what it checks::

    >>> from magpy.source import ArgSource, ConstPool
    >>> g = LenGuard(ArgSource(0, "xs"), 3)
    >>> g.check_expr("v0", None, ConstPool())
    'len(v0) == 3'
    >>> g.describe()
    'len(xs) == 3'

Adding a kind of guard means adding one class here: its fields, ``check_expr`` and
``describe`` (and ``dedup_payload`` when one source may carry several guards of the kind).
"""
from __future__ import annotations

import enum
import functools
import math
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import torch

from .guard_text import object_name, tensor_words
from .objmodel import base_value, exact_by_eq, exact_key, is_immutable, is_instance, value_base
from .realtype import class_module, class_name, class_qualname, instance_dict, runs_lookup_hook
from .redraw import same_draw
from .source import ConstPool, ConstSource, Source, literal


class GuardLocals(Protocol):
    """The locals of a generated guard (``codegen``): one per source, fetched once."""

    def get(self, src: Source, emit: bool = True) -> str:
        """The name of the local that holds ``src`` (its fetch emitted before the next check)."""

# Types whose instances never alias mutable state: two guarded objects of these types need no
# distinctness check.
#: Types whose objects' identity means nothing (immutable: a lifted int equal to another may be the same object).
_NO_ALIAS_TYPES = (tuple, frozenset, torch.Size, range, slice, str, bytes, int, float, bool, complex)


@dataclass(eq=False)
class Guard:
    """One check on ``source``; subclasses add what is checked.

    ``kind`` names the guard in dedup keys and listings. Two guards with equal
    :meth:`dedup_key` are the same guard: the monitor keeps the first.
    """

    source: Source
    kind: ClassVar[str] = "guard"

    def dedup_payload(self) -> Any:
        """What, besides source and kind, tells two guards of this kind apart (None: nothing)."""
        return None

    def dedup_key(self) -> tuple:
        """Key under which the monitor deduplicates guards."""
        payload = self.dedup_payload()
        if payload is None:
            return (self.source, self.kind)
        return (self.source, self.kind, repr(payload))

    def fetch(self, vars_: GuardLocals) -> str:
        """The local of the generated guard that holds the object checked."""
        return vars_.get(self.source)

    def check_expr(self, var: str, vars_: GuardLocals, pool: ConstPool) -> str | None:
        """A Python condition on ``var`` (the fetched object) that holds when the guard passes.

        None when no line of its own checks the guard (tensors: one batched call checks them all).
        """
        return None

    def check_line(self, var: str, vars_: GuardLocals, pool: ConstPool) -> str | None:
        """The line of the generated guard that returns None when the check fails."""
        chk = self.check_expr(var, vars_, pool)
        return None if chk is None else f"if not ({chk}): return _MISS"

    def describe(self) -> str:
        """The check in words, for ``explain`` and the ``guards`` log."""
        return f"{self.source.describe()}: {self.kind}"

    #: Does the guard's check itself hold everything :meth:`describe` reads (the object it names,
    #: its class, its snapshot)? Then a record may keep the guard to say its words later.
    WORDS_HELD_BY_CHECK: ClassVar[bool] = False

    def description(self) -> str | Callable[[], str]:
        """What a record keeps of :meth:`describe` for its ``guards_text``: the words, or (for
        the kinds a module tree has hundreds of, whose check holds what the words name) a
        callable that says them when someone first reads the text, which most records never do."""
        return self.describe if self.WORDS_HELD_BY_CHECK else self.describe()

    @property
    def batched_tensor(self) -> torch.Tensor | None:
        """A tensor whose metadata the one batched tensor check compares (None for other kinds)."""
        return None

    @property
    def distinct_object(self) -> bool:
        """A mutable object guarded by type only: with writes, it must stay distinct from the others."""
        return False


@dataclass(eq=False)
class TypeGuard(Guard):
    """``type(x) is cls``: objects whose attributes and items are guarded where they are read."""

    cls: type
    kind: ClassVar[str] = "type"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def check_expr(self, var, vars_, pool):
        return f"type({var}) is {pool.ref(self.cls)}"

    def describe(self):
        return f"type({self.source.describe()}) is {class_qualname(self.cls)}"

    @property
    def distinct_object(self) -> bool:
        return self.cls not in _NO_ALIAS_TYPES and not isinstance(self.source, ConstSource)


@dataclass(eq=False)
class BaseValueGuard(Guard):
    """``type(x) is cls`` and the value C code reads from ``x`` (an instance of a subclass of
    ``int``/``float``/``str``..., a ``Decimal``, a ``timedelta``: :func:`~magpy.objmodel.value_base`)
    is the run's: ``x * n`` or ``range(n)`` read it without any attribute read MagPy could guard."""

    cls: type
    base: type
    key: Any
    kind: ClassVar[str] = "base_value"

    def check_expr(self, var, vars_, pool):
        return (f"type({var}) is {pool.ref(self.cls)} and "
                f"{pool.ref(base_value)}({var}, {pool.ref(self.base)}) == {pool.ref(self.key)}")

    def describe(self):
        return f"type({self.source.describe()}) is {self.cls.__qualname__} and its {self.base.__name__} value is {self.key!r}"


def array_snapshot(a: Any) -> tuple:
    """dtype, shape and contents of the numpy array ``a``: its bytes, or for an array of Python
    objects the objects themselves (held: compared by identity, see :func:`is_guarded_array`)."""
    return (a.dtype, a.shape, tuple(a.ravel().tolist()) if a.dtype.hasobject else a.tobytes())


def array_same(a: Any, snapshot: tuple) -> bool:
    """Has the numpy array ``a`` the dtype, shape and contents of ``snapshot``?"""
    dtype, shape, data = snapshot
    if not (a.dtype == dtype and a.shape == shape):
        return False
    if dtype.hasobject:
        return all(map(_is, a.ravel().tolist(), data))
    return a.tobytes() == data


def _is(a: Any, b: Any) -> bool:
    return a is b


@dataclass(eq=False)
class ArrayGuard(Guard):
    """``type(x) is ndarray`` with the dtype, shape and contents seen: a numpy array read from
    outside is a value the program computes with in Python (numpy functions, indexing), so
    an in-place change (``arr[0] = 5``) must fail the guard (:func:`is_guarded_array` says which
    arrays get it)."""

    snapshot: tuple
    cls: type
    kind: ClassVar[str] = "array"

    @classmethod
    def of(cls, source: Source, value: Any) -> ArrayGuard:
        return cls(source, array_snapshot(value), type(value))

    def dedup_payload(self):
        return (self.snapshot[0], self.snapshot[1], hash(self.snapshot[2]))

    def check_expr(self, var, vars_, pool):
        return f"type({var}) is {pool.ref(self.cls)} and {pool.ref(array_same)}({var}, {pool.ref(self.snapshot)})"

    def describe(self):
        return f"{self.source.describe()} is a {self.snapshot[0]} array of shape {self.snapshot[1]} with the contents seen"

    @property
    def distinct_object(self) -> bool:
        return not isinstance(self.source, ConstSource)


@dataclass(eq=False)
class IdGuard(Guard):
    """``x is obj``: modules, functions, classes, enum members, singletons, and objects whose identity was read."""

    obj: Any
    kind: ClassVar[str] = "id"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def check_expr(self, var, vars_, pool):
        return f"{var} is {pool.ref(self.obj)}"

    def describe(self):
        p = self.obj
        name = object_name(p)
        return f"{self.source.describe()} is <{type(p).__name__}{' ' + name if name else ''} at {id(p):#x}>"


@dataclass(eq=False)
class ValueGuard(Guard):
    """``x == value`` with the exact type: immutable scalars, strings, tuples of them, sets."""

    value: Any
    kind: ClassVar[str] = "value"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    #: The value's :func:`~magpy.objmodel.exact_key` where the guard was made from a copy (a set
    #: read from outside: a copy need not iterate in the order the program saw).
    exact: Any = None

    def check_expr(self, var, vars_, pool):
        # Exact: a record made with 0.0 is not one for -0.0, nor one for 0 or False (== says
        # yes); one made with a NaN is one for that very NaN (`in`, `list.index`, dict keys find
        # a NaN only by identity). The common cases stay one `==`.
        p = self.value
        t = type(p)
        if p is None or t is bool:
            return f"{var} is {p!r}"
        if t is float and p != p:
            return f"{var} is {pool.ref(p)}"
        if t is float and not exact_by_eq(p):   # a zero: its sign, which == does not see
            return f"type({var}) is float and {var} == 0.0 and {pool.ref(math.copysign)}(1.0, {var}) == {math.copysign(1.0, p)!r}"
        if exact_by_eq(p):
            return f"type({var}) is {pool.ref(t)} and {var} == {literal(p, pool)}"
        if t is tuple and all(map(exact_by_eq, p)):
            # (the items' types: (1, 2) == (True, 2.0))
            return (f"type({var}) is tuple and {var} == {literal(p, pool)} "
                    f"and tuple(map(type, {var})) == {pool.ref(tuple(map(type, p)))}")
        key = self.exact if self.exact is not None else exact_key(p)
        return f"{pool.ref(exact_key)}({var}) == {pool.ref(key)}"

    def describe(self):
        return f"{self.source.describe()} == {self.value!r}"


@dataclass(eq=False)
class LenGuard(Guard):
    """``len(x) == length``: the structure of a list, tuple or deque that was read whole."""

    length: int
    kind: ClassVar[str] = "len"

    def check_expr(self, var, vars_, pool):
        return f"len({var}) == {self.length}"

    def describe(self):
        return f"len({self.source.describe()}) == {self.length}"


def exact_keys_check(var: str, keys: list, pool: ConstPool) -> str:
    """What ``list(var) == keys`` leaves out, as ``" and ..."``: the keys' exact types and a float
    zero's sign (``{1: a}`` and ``{True: a}`` have equal key lists). Nothing for string keys."""
    if all(type(k) is str for k in keys):
        return ""   # (the common case: attribute names, module names)
    return f" and {pool.ref(exact_key)}(tuple({var})) == {pool.ref(exact_key(tuple(keys)))}"


@dataclass(eq=False)
class KeysGuard(Guard):
    """``list(x) == keys``: the keys, in order, of a dict that was read whole."""

    keys: list
    kind: ClassVar[str] = "keys"

    def check_expr(self, var, vars_, pool):
        return f"list({var}) == {pool.ref(self.keys)}" + exact_keys_check(var, self.keys, pool)

    def describe(self):
        return f"keys({self.source.describe()}) == {self.keys!r}"


@dataclass(eq=False)
class DictSnapshotGuard(Guard):
    """``x == snapshot and list(x) == keys``: a dict whose values are compared by identity (a
    module's ``_modules``), checked whole in C; stands for a :class:`KeysGuard` plus an
    :class:`IdGuard` per item."""

    snapshot: dict
    keys: list
    kind: ClassVar[str] = "dict_snapshot"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def check_expr(self, var, vars_, pool):
        return f"{var} == {pool.ref(self.snapshot)} and list({var}) == {pool.ref(self.keys)}" \
            + exact_keys_check(var, self.keys, pool)

    def describe(self):
        return (f"{self.source.describe()} holds exactly "
                + ", ".join(f"{k!r}: <{type(v).__name__} at {id(v):#x}>" for k, v in self.snapshot.items()))


@dataclass(eq=False)
class ContainsGuard(Guard):
    """``(needle in x) is present``: one membership test of a set or dict, not its whole contents."""

    needle: Any
    present: bool
    kind: ClassVar[str] = "contains"

    def dedup_payload(self):
        return (self.needle, self.present)

    def check_expr(self, var, vars_, pool):
        return f"({literal(self.needle, pool)} in {var}) is {self.present!r}"


@dataclass(eq=False)
class TensorGuard(Guard):
    """Python type, dtype, device, shape, strides and requires_grad of a tensor (not its values).

    All tensor guards of a record are checked by one batched call (see ``codegen``).
    """

    tensor: torch.Tensor
    kind: ClassVar[str] = "tensor"
    dynamic_dims: frozenset = frozenset()   # lifted dimensions (magpy.monitor.scalars): any size

    def __post_init__(self):
        # The metadata the program saw when it read the tensor: the run may change it in place
        # (`b.t_()`, `x.unsqueeze_(0)`, `u.data = v`), and the guard checks the call's entry.
        t = self.tensor
        with torch._C.DisableTorchFunctionSubclass():   # (a subclass's __torch_function__ must not see MagPy's reads)
            self.entry = (tuple(t.shape), tuple(t.stride()), t.dtype, t.device, t.requires_grad, type(t))

    def changed_in_place(self) -> str | None:
        """What the run changed about the tensor that the batched check reads from the tensor
        itself (dtype, device, requires_grad, type), or None. Sizes and strides are passed
        from :attr:`entry`."""
        t = self.tensor
        with torch._C.DisableTorchFunctionSubclass():
            now = (t.dtype, t.device, t.requires_grad, type(t))
        for what, a, b in zip(("dtype", "device", "requires_grad", "type"), self.entry[2:], now):
            if a != b:
                return f"changes the {what} of tensor {self.source.describe()} from outside ({a} to {b})"
        return None

    def describe(self):
        return tensor_words(self.source, self.entry, self.sizes(), self.strides())

    def description(self):
        # (what the call found, not the tensor: an argument's must not outlive the call)
        return functools.partial(tensor_words, self.source, self.entry, self.sizes(), self.strides())

    def sizes(self) -> list:
        """Sizes to check (as the call found them), None for a lifted dimension."""
        return [None if d in self.dynamic_dims else n for d, n in enumerate(self.entry[0])]

    def strides(self) -> list:
        """Strides to check, None where a stride is the product of sizes that include a lifted one."""
        last = max(self.dynamic_dims, default=-1)
        return [None if d < last else s for d, s in enumerate(self.entry[1])]

    @property
    def batched_tensor(self) -> torch.Tensor:
        return self.tensor


@dataclass(eq=False)
class TensorValueGuard(Guard):
    """The values of a small CPU tensor the program read (NaN equal to NaN)."""

    dtype: torch.dtype
    values: Any
    kind: ClassVar[str] = "tensor_value"

    def check_expr(self, var, vars_, pool):
        return f"{var}.dtype is {pool.ref(self.dtype)} and _same_values({var}.tolist(), {pool.ref(self.values)})"

    def describe(self):
        return f"{self.source.describe()}.tolist() == {self.values!r}"


@dataclass(eq=False)
class MethodGuard(Guard):
    """A bound Python method: the same function bound to the same object."""

    func: Any
    self_obj: Any
    kind: ClassVar[str] = "method"

    def check_expr(self, var, vars_, pool):
        return f"{var}.__func__ is {pool.ref(self.func)} and {var}.__self__ is {pool.ref(self.self_obj)}"

    def describe(self):
        return f"{self.source.describe()} is method {getattr(self.func, '__qualname__', self.func)}"


@dataclass(eq=False)
class BuiltinMethodGuard(Guard):
    """A bound builtin method (``d.get``, a new object on every access): what it is bound to and its name."""

    self_obj: Any
    name: str
    kind: ClassVar[str] = "builtin_method"

    def check_expr(self, var, vars_, pool):
        return f"{var}.__self__ is {pool.ref(self.self_obj)} and {var}.__name__ == {self.name!r}"

    def describe(self):
        return f"{self.source.describe()} is {self.name} bound to <{type(self.self_obj).__name__} at {id(self.self_obj):#x}>"


@dataclass(eq=False)
class HasAttrGuard(Guard):
    """``hasattr(x, name) is present``: the answer of a ``hasattr`` call."""

    name: str
    present: bool
    kind: ClassVar[str] = "hasattr"

    def dedup_payload(self):
        return (self.name, self.present)

    def check_expr(self, var, vars_, pool):
        return f"hasattr({var}, {self.name!r}) is {self.present!r}"

    def describe(self):
        return f"hasattr({self.source.describe()}, {self.name!r}) is {self.present}"


@dataclass(eq=False)
class PresentGuard(Guard):
    """Whether ``source`` exists at all: an attribute or item read with a default, or one
    whose read raised (``try: self.x except AttributeError``).

    ``relation`` is ``("item", key)`` or ``("attr", name)``; the check runs on the source's base.
    """

    relation: tuple
    present: bool
    kind: ClassVar[str] = "present"

    def dedup_payload(self):
        return (self.relation, self.present)

    def fetch(self, vars_):
        return vars_.get(self.source.base)

    def _test(self, base_var: str, pool: ConstPool) -> str:
        if self.relation[0] == "item":
            return f"({literal(self.relation[1], pool)} in {base_var})"
        return f"hasattr({base_var}, {self.relation[1]!r})"

    def check_expr(self, var, vars_, pool):
        return f"{self._test(var, pool)} is {self.present!r}"

    def check_line(self, var, vars_, pool):
        return f"if {self._test(var, pool)} is not {self.present!r}: return _MISS"

    def describe(self):
        return f"{'has' if self.present else 'lacks'} {self.source.describe()}"


@dataclass(eq=False)
class AbsentGuard(Guard):
    """``name not in x.__dict__``: a class attribute found through the instance is not shadowed."""

    name: str
    #: the object's class has its own ``__getattribute__``: its dict is read past it
    #: (:func:`~magpy.realtype.instance_dict`), where ``x.__dict__`` would run it
    past_hook: bool = False
    kind: ClassVar[str] = "absent"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    @classmethod
    def of(cls, obj: Any, source: Source, name: str) -> AbsentGuard:
        """The guard that ``name`` stays out of ``obj.__dict__`` (read past its class's hook)."""
        return cls(source, name, runs_lookup_hook(obj))

    def dedup_payload(self):
        return self.name

    def check_expr(self, var, vars_, pool):
        if self.past_hook:
            return f"{self.name!r} not in {pool.ref(instance_dict)}({var})"
        return f"{self.name!r} not in {var}.__dict__"

    def describe(self):
        return f"{self.name!r} not in {self.source.describe()}.__dict__ (the class attribute is not shadowed)"


def cell_is_empty(cell: Any) -> bool:
    """Is a closure cell empty (``del`` emptied it, or it was never set)?"""
    try:
        _ = cell.cell_contents
    except ValueError:
        return True
    return False


@dataclass(eq=False)
class EmptyCellGuard(Guard):
    """A closure cell from outside that the call found empty (reading it raised ``NameError``)."""

    kind: ClassVar[str] = "empty_cell"

    def check_expr(self, var, vars_, pool):
        return f"{pool.ref(cell_is_empty)}({var})"

    def describe(self):
        return f"{self.source.describe()} is empty"


@dataclass(eq=False)
class KeyAbsentGuard(Guard):
    """``key not in d`` for a held dict: a builtin the program used is not shadowed by a global."""

    key: Any
    kind: ClassVar[str] = "key_absent"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def dedup_payload(self):
        return self.key

    def check_expr(self, var, vars_, pool):
        return f"{self.key!r} not in {var}"

    def describe(self):
        return f"{self.key!r} not in {self.source.describe()} (the builtin is not shadowed)"


_HOOKS = "{v}._forward_hooks or {v}._forward_pre_hooks or {v}._backward_hooks or {v}._backward_pre_hooks"


@dataclass(eq=False)
class NoHooksGuard(Guard):
    """An ``nn.Module`` still has no forward/backward (pre-)hooks."""

    kind: ClassVar[str] = "nohooks"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def check_expr(self, var, vars_, pool):
        return f"not ({_HOOKS.format(v=var)})"

    def describe(self):
        return f"{self.source.describe()} has no hooks"


@dataclass(eq=False)
class ModuleCallGuard(Guard):
    """``module(x)`` still runs ``cls.forward``: same class, no hooks, no ``forward`` set on the instance."""

    cls: type
    kind: ClassVar[str] = "module_call"
    WORDS_HELD_BY_CHECK: ClassVar[bool] = True   # (what describe reads, the check holds)

    def check_expr(self, var, vars_, pool):
        return f"type({var}) is {pool.ref(self.cls)} and not ({_HOOKS.format(v=var)} or 'forward' in {var}.__dict__)"

    def describe(self):
        return f"{self.source.describe()} has no hooks and no forward set on the instance"


@dataclass(eq=False)
class AliasGuard(Guard):
    """``x is other``: a second path to an object the run already reached through ``other``."""

    other: Source
    kind: ClassVar[str] = "alias"

    def check_expr(self, var, vars_, pool):
        return f"{var} is {vars_.get(self.other)}"

    def describe(self):
        return f"{self.source.describe()} is {self.other.describe()}"


def alias_guards(rg: Any) -> list[AliasGuard]:
    """One :class:`AliasGuard` per second path the run reached an object from outside by (the
    aliases the RefGraph ``rg`` noted on each node with a source)."""
    return [AliasGuard(a, n.source) for n in rg.sn[1:] if n.source is not None for a in n.aliases]


@dataclass(eq=False)
class SameGuard(Guard):
    """``(x is other) is expected``: an ``is`` test between tensors from outside."""

    other: Source
    expected: bool
    kind: ClassVar[str] = "same"

    def dedup_payload(self):
        return (self.other, self.expected)

    def check_expr(self, var, vars_, pool):
        return f"({var} is {vars_.get(self.other)}) is {self.expected!r}"

    def describe(self):
        return f"({self.source.describe()} is {self.other.describe()}) is {self.expected}"


@dataclass(eq=False)
class LeafGuard(Guard):
    """``x.is_leaf``, which the tensor metadata check does not compare."""

    is_leaf: bool
    kind: ClassVar[str] = "leaf"

    def check_expr(self, var, vars_, pool):
        return f"({var}.grad_fn is None) is {self.is_leaf!r}"

    def describe(self):
        return f"{self.source.describe()}.is_leaf is {self.is_leaf}"


def guard_for_object(value: Any, source: Source) -> Guard | None:
    """The guard for an object read from outside through ``source`` (None: nothing to check).

    Identity where the program can tell objects of one type apart without reading them
    (modules, functions, classes, enum members, singletons), the bound pair for methods, the
    metadata for tensors, else its exact type (its attributes and items are guarded where they
    are read).
    """
    if isinstance(source, ConstSource) and not is_instance(value, torch.Tensor):
        return None   # held by the compiled function itself: identity cannot change
    if is_instance(value, torch.Tensor):
        return TensorGuard(source, value)
    if is_instance(value, types.BuiltinMethodType) and value.__self__ is not None \
            and not is_instance(value.__self__, types.ModuleType):
        # `d.get` is a new object on every access: guard what it is bound to.
        return BuiltinMethodGuard(source, value.__self__, value.__name__)
    if is_instance(value, (torch.nn.Module, types.FunctionType, types.BuiltinFunctionType, type,
                           types.ModuleType, types.CodeType, enum.Enum, functools.partial)) \
            or value is Ellipsis or value is NotImplemented:
        return IdGuard(source, value)
    if is_instance(value, types.MethodType):
        return MethodGuard(source, value.__func__, value.__self__)
    if is_guarded_array(value):
        return ArrayGuard.of(source, value)
    base = value_base(value)
    if base is not None:
        return BaseValueGuard(source, type(value), base, base_value(value, base))
    return TypeGuard(source, type(value))


def is_guarded_array(value: Any) -> bool:
    """A numpy array whose contents a guard compares: any array of fixed-size values (numbers,
    text, records) by its bytes; an array of Python objects by the identity of its items where
    every item is an immutable value (a changed item is another object; a mutable item could
    change inside, unseen: such arrays get the type guard only)."""
    if not _is_ndarray(value):
        return False
    return not value.dtype.hasobject or (value.dtype.kind == "O" and all(map(is_immutable, value.ravel().tolist())))


def is_numeric_array(value: Any) -> bool:
    """A numpy array of numbers or booleans (not of Python objects)."""
    return _is_ndarray(value) and value.dtype.kind in "biufcmM"


def _is_ndarray(value: Any) -> bool:
    """Is ``value`` a numpy array (numpy need not be imported)? Its class's name read past the
    ``__getattribute__`` of a metaclass of the program's (:mod:`magpy.realtype`)."""
    t = type(value)
    return class_name(t) == "ndarray" and class_module(t) == "numpy"


@dataclass(eq=False)
class AbcTokenGuard(Guard):
    """``abc.get_cache_token() == token``: no ABC gained a registered subclass since the run
    (isinstance/issubclass against an ABC were answered from the registries as they were)."""

    token: int
    kind: ClassVar[str] = "abc_token"

    def check_expr(self, var, vars_, pool):
        return f"{var}.get_cache_token() == {self.token!r}"

    def describe(self):
        return f"abc.get_cache_token() == {self.token} (no ABC.register since)"


@dataclass(eq=False)
class CacheEntryGuard(Guard):
    """The cache of a ``functools.lru_cache`` function still answers the call with the run's
    result, without running the function's body: the program called it, and the record holds
    only while that call is a hit on the same result (:meth:`~magpy.objmodel.CacheEntry.answers`).
    ``source`` holds the cache's table; ``link`` and ``misses`` are the bounded cache's entry and
    miss count when the record was made (a fast check while neither moved)."""

    entry: Any
    result: Any
    link: Any
    misses: int
    kind: ClassVar[str] = "cache_entry"

    def dedup_payload(self):
        return self.entry.key

    def check_expr(self, var, vars_, pool):
        return (f"{pool.ref(self.entry.answers)}({pool.ref(self.result)}, {pool.ref(self.link)}, "
                f"{self.misses!r}, {pool.ref(same_draw)})")

    def describe(self):
        return f"{self.source.describe()} answers {self.entry.key!r} with {self.result!r}"[:200]


def raised_class(fn: Any, args: tuple) -> type | None:
    """The class of the exception ``fn(*args)`` raises, or None where it returns."""
    try:
        fn(*args)
    except Exception as e:   # noqa: BLE001 (the class is what is compared)
        return type(e)
    return None


@dataclass(eq=False)
class StateReadGuard(Guard):
    """``fn(*args) == value`` (same type): a torch getter of process-wide state that the global
    state guard does not cover (anomaly detection, backend flags, the initial seed...), whose
    answer the program went on with. ``source`` holds the function. ``raised``: the getter
    raised this exception class instead (``torch.cuda.is_current_stream_capturing()`` on a
    build without CUDA), and the program went on from its handler: it must raise it again."""

    args: tuple
    value: Any
    raised: type | None = None
    kind: ClassVar[str] = "state_read"

    def dedup_payload(self):
        return self.args

    def check_expr(self, var, vars_, pool):
        if self.raised is not None:
            args = "".join(f"{literal(a, pool)}, " for a in self.args)
            return f"{pool.ref(raised_class)}({var}, ({args})) is {pool.ref(self.raised)}"
        call = f"{var}({', '.join(literal(a, pool) for a in self.args)})"
        if self.value is None or type(self.value) is bool:
            return f"{call} is {self.value!r}"
        got = f"{var}_now"   # (the getter is called once per check)
        return f"type({got} := {call}) is {pool.ref(type(self.value))} and {got} == {literal(self.value, pool)}"

    def describe(self):
        call = f"{self.source.describe()}({', '.join(map(repr, self.args))})"
        return f"{call} raises {self.raised.__name__}" if self.raised is not None else f"{call} == {self.value!r}"


@dataclass(eq=False)
class ModuleHooksGuard(Guard):
    """``module(x)`` runs exactly these forward (pre-)hooks, in this order, and no backward hooks (or
    exactly these, for a record made with gradients off, which the global-state guard pins):
    a submodule that had hooks when the record was made (the hooks' own code was monitored)."""

    cls: type
    tables: dict
    kind: ClassVar[str] = "module_hooks"

    def check_expr(self, var, vars_, pool):
        parts = [f"type({var}) is {pool.ref(self.cls)}"]
        if "_backward_hooks" not in self.tables:   # (backward hooks, kept only with gradients off)
            parts.append(f"not ({var}._backward_hooks or {var}._backward_pre_hooks)")
        parts += [f"list({var}.{name}.items()) == {pool.ref(items)}" for name, items in self.tables.items()]
        return " and ".join(parts)

    def describe(self):
        n = sum(len(v) for v in self.tables.values())
        return f"{self.source.describe()} has exactly its {n} forward hook(s) of the monitor run"
