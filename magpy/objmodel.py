"""The Python object model as the monitor sees it: which values are immutable, where an
attribute is found, which calls run Python code, which modules have hooks.

These are questions about objects, not about bytecode: the monitor asks them to decide
what to guard (an immutable value is guarded by value, an object by type or identity),
which source spells an attribute read (``x.__dict__['a']``, ``m._parameters['w']``, a
class attribute behind a descriptor) and whether a call is inlined (its frames run
monitored) or must be annotated::

    >>> attr_location(torch.nn.Linear(2, 2), "weight")
    ('module_table', '_parameters')
    >>> is_immutable((1, "a", torch.float32)), is_immutable([1])
    (True, False)
"""
from __future__ import annotations

import collections
import copy
import datetime
import decimal
import enum
import struct
import types
import weakref
from typing import Any

import torch

from .bytecode.flow import only_reads
from .lifted import LiftedInt
from .realtype import (
    MODULE_TABLES,
    class_flags,
    class_lookup,
    class_mro,
    class_namespace,
    class_owner,
    class_qualname,
    instance_dict,
    is_instance,
    made_by_class_statement,
)

try:
    import numpy as _np

    _np_generic = _np.generic
except ImportError:   # pragma: no cover
    _np = None
    _np_generic = None

# Marks "no value" where None is a value (a missing local, an unset context variable).
NO_VALUE = object()

IMMUTABLE_TYPES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis), type(NotImplemented),
                   torch.dtype, torch.device, torch.layout, torch.memory_format, range)
CONTAINER_TYPES = (list, tuple, dict, set, frozenset)
#: Bound methods, whose object the method reads (a builtin one too: ``lookup = TABLE.__getitem__``).
BOUND_METHODS = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)
#: Mappings read like dicts: a class's ``__dict__`` is a read-only view (``mappingproxy``).
MAPPINGS = (dict, types.MappingProxyType)
# Objects that get no ShadowNode when they appear as results: they are held, not tracked.
NO_NODE_TYPES = (types.ModuleType, types.BuiltinFunctionType, type, types.CodeType)


def is_immutable(v: Any) -> bool:
    """Values with no identity worth tracking: guarded and rebuilt by value."""
    t = type(v)
    if t in IMMUTABLE_TYPES:
        return True
    if _np_generic is not None and issubclass(t, _np_generic):
        return True   # numpy scalars: values, compared with their exact type
    if t is tuple or t is torch.Size or t is frozenset:
        return all(is_immutable(e) for e in v)
    if t is slice:
        return is_immutable(v.start) and is_immutable(v.stop) and is_immutable(v.step)
    return False


_pack_double = struct.Struct("<d").pack


def is_identity_key(key: Any) -> bool:
    """A dict key compared by identity: a function, class or module whose type keeps object's
    ``==`` and hash, or a tuple of them and constants (``_KL_REGISTRY[Normal, Normal]``, a
    registry keyed by pairs of types). A keys guard and a rebuilt dict hold the very objects."""
    parts = key if type(key) is tuple and key else (key,)
    return any(not is_immutable(k) for k in parts) and all(
        is_immutable(k) or (isinstance(k, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type))
                            and type(k).__eq__ is object.__eq__ and type(k).__hash__ is object.__hash__)
        or _plain_enum_member(k)
        for k in parts)


def _plain_enum_member(k: Any) -> bool:
    """A member of an ``Enum`` or ``Flag`` without a mixin: compared by identity, hashed by its
    fixed name (``Enum.__hash__``), so a dict keyed by members finds them as a keys guard holds them.
    (An ``IntEnum`` member equals its int: not an identity key.)"""
    return isinstance(k, enum.Enum) and type(k).__eq__ is object.__eq__ and type(k).__hash__ is enum.Enum.__hash__


def exact_key(v: Any) -> Any:
    """What tells an immutable value apart from every other a program could see in its place.
    ``==`` does not: ``0.0 == -0.0 == 0 == False`` (``str``, ``math.copysign``, ``1/x``, ``type``
    tell them apart) and ``nan != nan``. The key holds the exact type of every part, a float's
    bits, a set's items in its iteration order; two values with equal keys are the same value.
    A NaN is also its identity: ``in``, ``list.index``, ``==`` of containers and dict lookups find
    a NaN only as the very object (the caller keeps ``v`` alive while the key is compared)."""
    t = type(v)
    if t is float:
        return (t, _pack_double(v)) if v == v else (t, _pack_double(v), id(v))
    if t is complex:
        return t, _pack_double(v.real), _pack_double(v.imag)
    if t is tuple or t is frozenset or t is set or t is torch.Size:
        return t, tuple(map(exact_key, v))
    if t is slice:
        return t, exact_key(v.start), exact_key(v.stop), exact_key(v.step)
    if isinstance(v, (set, frozenset)):   # (a subclass: its items now, not the live object)
        return t, tuple(map(exact_key, v))
    if _np_generic is not None and isinstance(v, _np_generic) and not isinstance(v, (_np.str_, _np.bytes_)):
        return t, v.dtype.str, v.tobytes()
    return t, v


#: Immutable C value types whose value natives read without running Python code (date and time
#: arithmetic, decimal numbers): an instance from outside is guarded by its value, as numbers are.
VALUE_TYPES = (decimal.Decimal, datetime.timedelta, datetime.datetime, datetime.date, datetime.time)
_VALUE_BASES = (int, float, complex, str, bytes)


def value_base(v: Any) -> type | None:
    """The built-in value type whose value C code reads from ``v`` where ``v`` is an instance of a
    subclass of one (``class Width(int)``: ``x * n``, ``range(n)``, ``d[name]`` read the int or str
    inside, not its attributes) or of a C value type (:data:`VALUE_TYPES`); None for any other
    object (exact ints, strs... are values already: :func:`is_immutable`)."""
    t = type(v)
    if t in IMMUTABLE_TYPES or t is LiftedInt:   # (a size the run follows: the lifting guards it)
        return None
    for base in _VALUE_BASES + VALUE_TYPES:
        if issubclass(t, base):   # (the real type: see is_instance)
            return base
    return None


def base_value(v: Any, base: type) -> Any:
    """The value of ``v`` as its ``base`` (:func:`value_base`) sees it, read by ``base``'s own C
    methods (never an override of the subclass), as a key :func:`exact_key` compares exactly."""
    if base is int:
        return int.__add__(v, 0)
    if base is float:
        return exact_key(float.__mul__(v, 1.0))
    if base is complex:
        return exact_key(complex(complex.real.__get__(v), complex.imag.__get__(v)))
    if base is str:
        return str.__str__(v)
    if base is bytes:
        return bytes(memoryview(v))
    return base.__reduce__(v)[1]   # (Decimal, timedelta, datetime: their constructor arguments)


def exact_by_eq(v: Any) -> bool:
    """Is ``type(x) is type(v) and x == v`` already exact for ``v`` (see :func:`exact_key`)? Not
    for a float zero (its sign), a NaN, a container (the types of its items)."""
    t = type(v)
    return t in (int, bool, str, bytes, type(None)) or (t is float and v == v and v != 0.0)


#: Containers whose items the monitor guards itself: one by one through item sources, or whole
#: (``full_read``: length and every item, keys, set contents).
GUARDED_CONTAINERS = (list, tuple, dict, types.MappingProxyType, set, frozenset, collections.deque)


def items_unguarded(v: Any) -> bool:
    """A container whose items are read by native code (``__getitem__``/``__iter__`` found on its
    class is not a Python function) and that MagPy has no item guard for: ``array.array``,
    ``bytearray``, ``memoryview``, a ``str`` subclass instance (guarded by type only), any
    extension container. Its items read from outside have no source: the read is dynamic.
    Python containers (``UserList``) run their ``__getitem__`` monitored, and reach their
    items through attributes and items the monitor guards."""
    t = type(v)
    if t in IMMUTABLE_TYPES or isinstance(v, (*GUARDED_CONTAINERS, torch.Tensor, type, types.ModuleType)) \
            or is_immutable(v):
        return False
    if _np is not None and isinstance(v, (_np.ndarray, _np.dtype)):
        # numpy arrays: read through numpy operations (their values are guarded); a dtype's
        # items are its fields, fixed when it was made (`bool_dt` passed to `ufunc.reduce`)
        return False
    if isinstance(v, enum.Enum):
        return False   # a member is guarded by identity: its value cannot change
    for klass in t.__mro__:
        d = klass.__dict__
        if "__next__" in d:
            return False   # an iterator: stateful, handled where it is advanced
        for name in ("__getitem__", "__iter__"):
            if name in d:
                return not isinstance(d[name], (types.FunctionType, staticmethod, classmethod)) \
                    and d[name] is not None
    return False


def is_numpy_number(v: Any) -> bool:
    """A numpy scalar that torch reads as a Python number (not a numpy string or bytes)."""
    return _np_generic is not None and isinstance(v, _np_generic) and not isinstance(v, (_np.str_, _np.bytes_))


def is_python_class(fn: Any) -> bool:
    """A class whose instantiation runs only Python ``__new__``/``__init__`` (inlined, monitored)."""
    if not isinstance(fn, type):
        return False
    init = getattr(fn, "__init__", None)
    new = getattr(fn, "__new__", None)
    py_init = isinstance(init, types.FunctionType) or init is object.__init__
    py_new = isinstance(new, types.FunctionType) or new is object.__new__ or isinstance(new, staticmethod) \
        or any(new is b.__new__ for b in (dict, list, tuple, set, collections.OrderedDict))
    return py_init and py_new and not issubclass(fn, torch.Tensor)


_HEAPTYPE = 1 << 9        # Py_TPFLAGS_HEAPTYPE: made by a class statement or type(...)
_IMMUTABLETYPE = 1 << 8   # Py_TPFLAGS_IMMUTABLETYPE (3.10+): its attributes cannot be set


def builtin_made_exception(cls: type) -> bool:
    """An exception class of the program (``class Missing(Exception): pass``) that builtin code
    makes: no class statement of it defines ``__new__`` or ``__init__``, and its metaclass is
    ``type``. Making one runs no Python; the object is new, its ``args`` the arguments."""
    return isinstance(cls, type) and issubclass(cls, BaseException) and type(cls) is type and not any(
        "__new__" in k.__dict__ or "__init__" in k.__dict__ for k in cls.__mro__ if k.__flags__ & _HEAPTYPE)


def is_mutable_class(cls: type) -> bool:
    """A class whose attributes a program can replace (``C.__add__ = f``): a class statement's,
    not a builtin or extension type (``object``, ``int``, ``torch._C`` types cannot change; C
    modules' heap types, ``re.Match`` since 3.10, are immutable types too, with state in C fields)."""
    flags = class_flags(cls)
    return bool(flags & _HEAPTYPE) and not flags & _IMMUTABLETYPE


#: Operator symbol -> (dunder tried on the left operand, reflected dunder tried on the right one).
OPERATOR_DUNDERS = {
    "<": ("__lt__", "__gt__"), "<=": ("__le__", "__ge__"), "==": ("__eq__", "__eq__"),
    "!=": ("__ne__", "__ne__"), ">": ("__gt__", "__lt__"), ">=": ("__ge__", "__le__"),
    "+": ("__add__", "__radd__"), "-": ("__sub__", "__rsub__"), "*": ("__mul__", "__rmul__"),
    "/": ("__truediv__", "__rtruediv__"), "//": ("__floordiv__", "__rfloordiv__"),
    "%": ("__mod__", "__rmod__"), "**": ("__pow__", "__rpow__"), "@": ("__matmul__", "__rmatmul__"),
    "&": ("__and__", "__rand__"), "|": ("__or__", "__ror__"), "^": ("__xor__", "__rxor__"),
    "<<": ("__lshift__", "__rlshift__"), ">>": ("__rshift__", "__rrshift__"),
}
_COMPARISONS = frozenset({"<", "<=", "==", "!=", ">", ">="})
_ITERATION = ("__iter__", "__getitem__")
# Event -> (stack position of the operand, dunders the interpreter looks up on its type).
_PROTOCOLS = {
    "UNARY_NEGATIVE": (-1, ("__neg__",)), "UNARY_POSITIVE": (-1, ("__pos__",)),
    "UNARY_INVERT": (-1, ("__invert__",)), "TRUTH": (-1, ("__bool__", "__len__")),
    "BINARY_SUBSCR": (-2, ("__getitem__",)), "STORE_SUBSCR": (-2, ("__setitem__",)),
    "DELETE_SUBSCR": (-2, ("__delitem__",)), "BINARY_SLICE": (-3, ("__getitem__",)),
    "STORE_SLICE": (-3, ("__setitem__",)), "CONTAINS_OP": (-1, ("__contains__", *_ITERATION)),
    "GET_ITER": (-1, _ITERATION), "GET_YIELD_FROM_ITER": (-1, _ITERATION), "FOR_ITER": (-1, ("__next__",)),
    "UNPACK_SEQUENCE": (-1, _ITERATION), "UNPACK_EX": (-1, _ITERATION), "LIST_EXTEND": (-1, _ITERATION),
    "SET_UPDATE": (-1, _ITERATION), "BEFORE_WITH": (-1, ("__enter__", "__exit__")),
    "SETUP_WITH": (-1, ("__enter__", "__exit__")),
}
#: Events (and real opcodes, for ``with``) whose operands are looked up by :func:`protocol_lookups`.
PROTOCOL_EVENTS = frozenset({"BINARY_OP", "COMPARE_OP", *_PROTOCOLS})


def operator_lookups(symbol: str, a: Any, b: Any) -> list[tuple[Any, tuple[str, ...]]]:
    """``a <symbol> b``: the dunders looked up on ``type(a)`` (``__iadd__`` first for ``+=``) and
    the reflected one on ``type(b)``, as ``[(a, names), (b, names)]``; empty for no such operator."""
    inplace = symbol.endswith("=") and symbol not in _COMPARISONS
    left, right = OPERATOR_DUNDERS.get(symbol[:-1] if inplace else symbol, (None, None))
    if left is None:
        return []
    return [(a, ("__i" + left[2:], left) if inplace else (left,)), (b, (right,))]


def protocol_lookups(event: str, symbol: str, stack: list) -> list[tuple[Any, tuple[str, ...]]]:
    """What an instruction about to run looks up on its operands' types: ``(operand, dunders)``
    for each operand of a mutable class (:func:`is_mutable_class`). ``a + b`` asks ``type(a)``
    for ``__add__`` and ``type(b)`` for ``__radd__``; ``if a`` asks for ``__bool__`` then
    ``__len__``. A dunder the class lacks counts as much as one it has: adding ``__bool__`` to a
    class changes what ``if a`` does. ``symbol`` is the operator of ``BINARY_OP``/``COMPARE_OP``."""
    if event in ("BINARY_OP", "COMPARE_OP"):
        pairs = operator_lookups(symbol, stack[-2], stack[-1])
    else:
        at, names = _PROTOCOLS[event]
        if len(stack) < -at:
            return []
        pairs = [(stack[at], names)]
    return [(v, names) for v, names in pairs
            if is_mutable_class(type(v)) and not isinstance(v, (torch.Tensor, type))]


def dunder_index(cls: type) -> dict[int, list[str]]:
    """``cls``'s dunders by what they hold: ``id(value) -> names`` under which the lookup from
    ``cls`` finds that value (the first class on the MRO that defines a name; a lambda set as
    ``__ge__`` is named ``<lambda>``, so functions are found by identity, not by their names)."""
    found: dict[int, list[str]] = {}
    seen: set = set()
    for klass in class_mro(cls):
        for name, value in class_namespace(klass).items():
            if name not in seen and name[:2] == "__" == name[-2:]:
                seen.add(name)
                found.setdefault(id(value), []).append(name)
    return found


def has_python_call(fn: Any) -> bool:
    """An instance whose class defines ``__call__`` in Python (calling it runs monitored frames)."""
    return isinstance(class_lookup(type(fn), "__call__"), types.FunctionType)


def module_has_hooks(m: torch.nn.Module) -> bool:
    """Does ``m`` have forward or backward (pre-)hooks of its own?"""
    d = instance_dict(m) or {}   # (read as Module.__call__ reads them, with no hook of the class)
    return any(d.get(k) for k in _MODULE_HOOK_TABLES)


_MODULE_HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def has_instance_dict(obj: Any) -> bool:
    """An instance with a ``__dict__`` in which an attribute could shadow its class's."""
    return not is_instance(obj, (type, types.ModuleType)) and instance_dict(obj) is not None


def relation_present(obj: Any, rel: tuple) -> bool:
    """Does ``obj`` have the item or attribute named by ``rel`` (``("item", k)``/``("attr", n)``)?"""
    if rel[0] == "item":
        try:
            return rel[1] in obj
        except TypeError:
            return False
    return hasattr(obj, rel[1])


_MODULE_GETATTR = torch.nn.Module.__getattr__


def write_hook(obj: Any, name: str, delete: bool = False) -> str | None:
    """The Python code ``obj.name = v`` (``del obj.name`` with ``delete``) runs, if any: the class's
    own ``__setattr__``/``__delattr__`` or a data descriptor's ``__set__``/``__delete__`` written in
    Python, named for a break reason; None where the write only stores (``object``'s slot, a
    module's ``__setattr__``, whose tables the mock's ``setattr`` fills again)."""
    cls = type(obj)
    if not is_mutable_class(cls) or is_instance(obj, torch.Tensor):
        return None
    dunder = "__delattr__" if delete else "__setattr__"
    hook = class_lookup(cls, dunder)
    if isinstance(hook, types.FunctionType) and hook is not getattr(torch.nn.Module, dunder):
        return dunder
    owner = class_owner(cls, name)
    if owner is not None:
        method = getattr(type(class_namespace(owner)[name]), "__delete__" if delete else "__set__", None)
        if isinstance(method, types.FunctionType):
            return "__delete__" if delete else "__set__"
    return None


def lookup_effects(obj: Any, made: bool = False) -> str | None:
    """Why every attribute lookup on ``obj`` is an effect of its own, or None: its class (for a
    class, its metaclass) has a Python ``__getattribute__`` that does more than read (a counter, a
    log of the names read: :func:`magpy.bytecode.flow.only_reads`). Eager runs it once per lookup
    the program makes; a record's guard reads such an attribute once however often the program
    does, a builtin (``hasattr``, ``vars``, ``copy``) runs it unmonitored, and a failing guard
    has run it for a call that then runs again: no record replays it as eager does, so calls
    that use the object run eagerly. A hook that only reads (a config remapping names) may run
    any number of times, and is compiled through. ``made``: ``obj`` is a class the program makes
    an instance of (the hook is the class's own)."""
    tp = obj if made else type(obj)
    if not made_by_class_statement(tp) or tp is torch.Tensor or tp is torch.nn.Parameter:
        return None
    owner = class_owner(tp, "__getattribute__")
    hook = class_namespace(owner)["__getattribute__"] if owner is not None else None
    if type(hook) is not types.FunctionType or only_reads(hook.__code__):
        return None
    what = "a class" if is_instance(obj, type) and not made else "an object"
    return (f"{'makes' if made else 'is'} {what} whose `{class_qualname(owner)}.__getattribute__` does more than read on every "
            "lookup (an effect per read that a record cannot replay as eager does)")


def attr_location(obj: Any, name: str) -> tuple[str, str]:
    """Where ``obj.name`` is found: instance dict, nn.Module tables, a class function, a property,
    a descriptor with a Python ``__get__``...

    Returns (where, via) with ``via`` the spelling generated code uses to fetch it fast.
    """
    if is_instance(obj, types.ModuleType):
        # A module's own names are in its __dict__; a module class with __getattr__ (torch._VF)
        # computes the others, so those are fetched with getattr.
        return ("module", "__dict__") if name in obj.__dict__ else ("module", "")
    cls_attr = class_lookup(type(obj), name)
    is_data_descr = cls_attr is not None and (hasattr(type(cls_attr), "__set__") or hasattr(type(cls_attr), "__delete__"))
    if isinstance(cls_attr, property):
        return "property", ""
    is_class = is_instance(obj, type)
    d = None if is_class else instance_dict(obj)   # (a class's namespace is a read-only view, no dict)
    if not is_data_descr and isinstance(d, dict) and name in d:
        return "instance", "__dict__" if not is_class else ""
    if cls_attr is None and not is_class:
        hook = class_lookup(type(obj), "__getattr__")
        if isinstance(hook, types.FunctionType) and hook is not _MODULE_GETATTR:
            # not found by the normal lookup: the class's own Python `__getattr__` computes it
            # (it runs monitored, as a property's getter does)
            return "getattr_hook", ""
    if is_instance(obj, torch.nn.Module) and cls_attr is None:
        for table in MODULE_TABLES:
            t = d.get(table) if isinstance(d, dict) else None
            if t is not None and name in t:
                return "module_table", table
    if isinstance(cls_attr, (types.FunctionType, staticmethod, classmethod)):
        return "class_fn", ""
    if cls_attr is not None and isinstance(getattr(type(cls_attr), "__get__", None), types.FunctionType):
        return "descriptor", ""   # a Python __get__ (lazy_property, cached_property) runs monitored
    if cls_attr is not None and not is_data_descr:
        return "class_value", ""
    return "other", ""


#: Iterators over a list or tuple (forward or reversed): what they give is the sequence's order.
SEQUENCE_ITERATORS = frozenset({type(iter(())), type(iter([])), type(reversed([]))})
#: Views of a dict's values or keys (plain or ordered dict).
DICT_VIEWS = frozenset({type({}.values()), type({}.keys()), type(collections.OrderedDict().values()),
                        type(collections.OrderedDict().keys())})
_REITERABLE = (range, set, frozenset, dict, str, bytes, collections.deque, type({}.keys()),
               type({}.values()), type({}.items()))
_COPYABLE_ITERATORS = SEQUENCE_ITERATORS | {type(iter(x)) for x in (range(0), range(2**70), "", b"", {}, set())} \
    | {type(reversed(range(0))), type(reversed(()))}


def peek_items(iterable: Any) -> list | None:
    """The items iterating ``iterable`` would give, without consuming it: containers and native
    iterators whose position can be copied. None for others (generators, ``map``...)."""
    if isinstance(iterable, (list, tuple)) or type(iterable) in _REITERABLE:
        return list(iterable)
    if type(iterable) in _COPYABLE_ITERATORS:
        return list(copy.copy(iterable))
    return None


def storage_key(t: torch.Tensor) -> int:
    """Which memory ``t`` lives in: tensors that may share memory (views of one storage) have the
    same key. A tensor with a storage (CPU, CUDA): the storage's data pointer. One without (torch_xla's
    lazy tensors: their data lives in the XLA runtime, and reading their storage's pointer raises):
    the tensor it is a view of (a view's ``_base`` is the root tensor), else itself, by a negative
    id, which no data pointer equals."""
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return -id(t._base if t._base is not None else t)


def finalizer_reason(fn, args: list, kwargs: dict) -> str | None:
    """What ``fn(*args)`` sets to run when an object dies, or None: a class with a Python ``__del__``
    instantiated, ``weakref.finalize``, a weak reference with a callback. Eager runs that code
    when the object goes (for a temporary, as the call ends), every call; a record never makes
    the object, so never runs it: such a call runs eagerly."""
    if is_instance(fn, type):
        if issubclass(fn, weakref.finalize):
            return "registers a finalizer (`weakref.finalize`)"
        if issubclass(fn, weakref.ref) and (len(args) > 1 or "callback" in kwargs) \
                and (args[1] if len(args) > 1 else kwargs.get("callback")) is not None:
            return "makes a weak reference with a callback (run when its object dies)"
        hook = getattr(fn, "__del__", None)
        if isinstance(hook, types.FunctionType) and is_python_class(fn):
            return f"makes a `{fn.__qualname__}`, whose class has `__del__` (run when it is dropped)"
    return None


def mentions_number(value: Any, numbers: set[int] | frozenset[int], depth: int = 0) -> bool:
    """Does ``value`` (a guard, a source, a tuple of them, a number) hold one of ``numbers``?"""
    if depth > 12:
        return False
    if type(value) is int:
        return value in numbers
    if isinstance(value, (tuple, list, frozenset)):
        return any(mentions_number(v, numbers, depth + 1) for v in value)
    fields = getattr(type(value), "__dataclass_fields__", None)
    if fields is not None:
        return any(mentions_number(getattr(value, name, None), numbers, depth + 1) for name in fields)
    return False


def has_nan(v: Any, depth: int = 0) -> bool:
    """Is there a float NaN in ``v`` (a number, or a tuple/frozenset of them)? Its hash is the
    object's, so a dict or a cache finds a NaN key only as that very object."""
    if type(v) is float or type(v) is complex:
        return v != v
    if depth < 4 and isinstance(v, (tuple, frozenset)):
        return any(has_nan(e, depth + 1) for e in v)
    return False


def set_reduction(args: list) -> bool:
    """Is ``object.__reduce_ex__(s, protocol)`` the reduction of a plain ``set`` or ``frozenset``
    of immutable values (``copy.deepcopy`` of a configuration holding one)? It is the type's own
    ``__reduce__``: ``(type(s), (list(s),), None)``, the values in the set's iteration order."""
    return len(args) == 2 and type(args[1]) is int and args[1] >= 2 and type(args[0]) in (set, frozenset) \
        and all(is_immutable(v) for v in args[0])


def default_reduction(args: list) -> bool:
    """Is ``object.__reduce_ex__(obj, protocol)`` the plain reduction of an object that keeps its
    state in its instance dict (``copy.deepcopy``, ``copy.copy`` and pickle ask for it)? Its result
    is then ``(copyreg.__newobj__, (type(obj),), obj.__dict__, None, None)``, made of things the
    monitor can name: the class, and the very dict of the object."""
    if len(args) != 2 or type(args[1]) is not int or args[1] < 2:
        return False
    obj, cls = args[0], type(args[0])
    if isinstance(obj, (type, types.ModuleType, list, dict, tuple, set)) or not has_instance_dict(obj):
        return False
    if cls.__reduce__ is not object.__reduce__ or getattr(cls, "__getstate__", None) is not getattr(object, "__getstate__", None):
        return False
    if getattr(cls, "__getnewargs_ex__", None) is not None or getattr(cls, "__getnewargs__", None) is not None:
        return False
    import copyreg

    return not copyreg._slotnames(cls)
