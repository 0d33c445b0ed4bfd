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
    for klass in type(v).__mro__:
        slot = klass.__dict__.get("__dict__")
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
    for klass in tp.__mro__:
        ns = klass.__dict__
        if name in ns:
            return ns[name]
    return default


def class_owner(tp: type, name: str) -> type | None:
    """The first class of ``tp.__mro__`` whose namespace has ``name``, else None."""
    for klass in tp.__mro__:
        if name in klass.__dict__:
            return klass
    return None


#: the definitions above, which the C ones must agree with (tests/test_realtype.py)
PYTHON = types.SimpleNamespace(is_instance=is_instance, instance_dict=instance_dict, class_lookup=class_lookup,
                               class_owner=class_owner)

try:   # the same four in C (magpy/_realtype.c): the monitor asks them on nearly every event
    from ._realtype import init as _c_init
except ImportError:   # pragma: no cover - built without a compiler: the definitions above
    pass
else:
    from ._realtype import class_lookup, class_owner, instance_dict, is_instance  # noqa: F811
    _c_init(torch.Tensor)
