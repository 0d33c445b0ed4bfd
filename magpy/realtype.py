"""Type tests and instance dicts of the program's objects read from their real type, with no
attribute lookup on the object (see :func:`is_instance`)::

    >>> class Proxy:
    ...     @property
    ...     def __class__(self): return int
    >>> isinstance(Proxy(), int), is_instance(Proxy(), int)
    (True, False)
"""
from __future__ import annotations

import types
from typing import Any

import torch

#: A class's own fields read through ``type``'s descriptors (``class_mro(C)`` is ``C.__mro__``):
#: no ``__getattribute__`` of a metaclass of the program's runs, as ``C.__mro__`` would run it
#: (the C definitions below read the type object's slots, as these do).
class_mro = type.__dict__["__mro__"].__get__
class_namespace = type.__dict__["__dict__"].__get__   # (the read-only view ``C.__dict__`` is)
class_flags = type.__dict__["__flags__"].__get__
class_name = type.__dict__["__name__"].__get__
class_qualname = type.__dict__["__qualname__"].__get__
class_module = type.__dict__["__module__"].__get__


def is_instance(v: Any, cls: type | tuple) -> bool:
    """``isinstance(v, cls)`` decided by ``v``'s real type, with no attribute lookup on ``v``.

    Where the type test fails (and for an ABC, always), ``isinstance`` looks up ``v.__class__``
    through ``v``'s type: a Python ``__getattribute__`` or a ``__class__`` property of the program's
    class runs, user code that eager never runs at that point (a counter, a warn-once, a lazy proxy
    loading its target). MagPy's own type tests on objects of the program ask here instead.
    ``issubclass`` on the type keeps what matters: subclasses and an ABC's registered virtual
    subclasses; tensors keep torch's metaclass checks (a plain tensor marked ``_is_param`` is an
    ``nn.Parameter``). An object that spoofs ``__class__`` (a proxy) is taken for what it really
    is, which is what MagPy reasons about: the lookups of its real type run when the program uses
    it."""
    t = type(v)
    if issubclass(t, torch.Tensor):
        return isinstance(v, cls)
    return issubclass(t, cls)


def instance_dict(v: Any) -> dict | None:
    """``v.__dict__`` read through the slot its class made for it (no Python ``__getattribute__``
    of the class, no ``__dict__`` property of a proxy runs: see :func:`is_instance`); None where
    ``v`` has no such dict (``__slots__``, a builtin value)."""
    for klass in class_mro(type(v)):
        slot = class_namespace(klass).get("__dict__")
        if slot is not None:
            if type(slot) in _DICT_SLOTS:
                d = slot.__get__(v, type(v))
                return d if isinstance(d, dict) else None
            return None
    return None


_DICT_SLOTS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def class_lookup(tp: type, name: str, default: Any = None) -> Any:
    """The value of ``name`` in the first class of ``tp.__mro__`` whose namespace has it (what
    the normal lookup finds on the class side), else ``default``; no descriptor is called."""
    for klass in class_mro(tp):
        ns = class_namespace(klass)
        if name in ns:
            return ns[name]
    return default


def class_owner(tp: type, name: str) -> type | None:
    """The first class of ``tp.__mro__`` whose namespace has ``name``, else None."""
    for klass in class_mro(tp):
        if name in class_namespace(klass):
            return klass
    return None


#: where ``nn.Module.__getattr__`` looks for a name its instance dict lacks, in its order
MODULE_TABLES = ("_parameters", "_buffers", "_modules")
_MODULE_GETATTR = torch.nn.Module.__getattr__
_OBJECT_GETATTRIBUTE = object.__getattribute__
_HEAP_TYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())


def callable_attr(obj: Any, name: str, default: Any = None) -> Any:
    """``getattr(obj, name, default)``, for the names the call checks probe on any callee
    (``__self__``, ``__name__``, ``__code__``...), with nn.Module's ``__getattr__`` done here: a
    module has none of them, and its own hook formats an error message for every miss, several
    times on every module call the monitor decides. Same answer: that hook looks only in the
    module's parameter, buffer and submodule tables. An instance of a class whose own Python
    ``__getattribute__`` or ``__getattr__`` computes attributes is asked by the normal lookup
    alone: those hooks are program code the probe must not run (:func:`is_instance`), and no
    callable keeps these names there. The class's hooks are found on its MRO (no hook of its
    metaclass runs)."""
    tp = type(obj)
    if _python_lookup(tp):
        try:
            return object.__getattribute__(obj, name)
        except AttributeError:
            return default
    if issubclass(tp, torch.nn.Module) and class_lookup(tp, "__getattr__") is _MODULE_GETATTR \
            and class_lookup(tp, "__getattribute__") is _OBJECT_GETATTRIBUTE and class_owner(tp, name) is None:
        # (looked up without raising: a miss in the normal lookup costs an AttributeError)
        d = obj.__dict__
        if name in d:
            return d[name]
        for table in MODULE_TABLES:
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        return default
    return getattr(obj, name, default)


def runs_lookup_hook(obj: Any) -> bool:
    """Does ``obj.name`` (``obj`` not a class) run a Python ``__getattribute__`` of its class (a
    counter, a name remapping config)? Then MagPy's own reads of it go past the hook
    (``object.__getattribute__``, :func:`instance_dict`), so the hook runs only where the program's
    reads run it."""
    tp = type(obj)
    return not issubclass(tp, type) and type(class_lookup(tp, "__getattribute__")) is types.FunctionType


def stored_attr(obj: Any, name: str, default: Any = None) -> Any:
    """``getattr(obj, name, default)`` read past a Python ``__getattribute__`` of ``obj``'s class
    (:func:`runs_lookup_hook`): what a store left there, with no run of the hook the program's own
    reads run."""
    try:
        return object.__getattribute__(obj, name) if runs_lookup_hook(obj) else getattr(obj, name, default)
    except AttributeError:
        return default


def has_stored_attr(obj: Any, name: str) -> bool:
    """``hasattr(obj, name)`` asked past a Python ``__getattribute__`` (:func:`stored_attr`)."""
    return stored_attr(obj, name, _ABSENT) is not _ABSENT


_ABSENT = object()


def made_by_class_statement(tp: type) -> bool:
    """Is ``tp`` a class made by a class statement (or ``type()``), the only kind that can hold
    Python methods (a builtin or extension type never does)?"""
    return bool(class_flags(tp) & _HEAP_TYPE)


def _python_lookup(tp: type) -> bool:
    """Does an attribute lookup on an instance of ``tp`` (not a class) run a Python
    ``__getattribute__`` of ``tp``, or a Python ``__getattr__`` (nn.Module's aside) on a miss?
    (Never for a builtin or extension type: only classes made by a class statement hold Python
    methods.)"""
    if not class_flags(tp) & _HEAP_TYPE or issubclass(tp, type):
        return False
    if type(class_lookup(tp, "__getattribute__")) is types.FunctionType:
        return True
    hook = class_lookup(tp, "__getattr__")
    return type(hook) is types.FunctionType and hook is not _MODULE_GETATTR


#: the definitions above, which the C ones must agree with (tests/test_realtype.py)
PYTHON = types.SimpleNamespace(is_instance=is_instance, instance_dict=instance_dict, class_lookup=class_lookup,
                               class_owner=class_owner, callable_attr=callable_attr)

try:   # the same five in C (magpy/_realtype.c): the monitor asks them on nearly every event
    from ._realtype import init as _c_init
except ImportError:   # pragma: no cover - built without a compiler: the definitions above
    pass
else:
    from ._realtype import callable_attr, class_lookup, class_owner, instance_dict, is_instance  # noqa: F811
    _c_init(torch.Tensor, torch.nn.Module, MODULE_TABLES)
