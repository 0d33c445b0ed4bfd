"""Guards in words: what ``explain``, ``records()`` and the ``guards`` log show of a record's checks.

A record keeps its checks' words as strings or as callables (:meth:`magpy.guards.Guard.description`)
that say them when the text is first read (:func:`guard_words`): a module tree has hundreds of
checks, and most records are never explained.
"""
from __future__ import annotations

import types
import weakref
from typing import Any

from .realtype import class_mro, class_namespace, class_qualname
from .source import Source


def guard_words(lines: list) -> str:
    """A record's ``guards_text``: its lines, each a string or a callable that says its words now."""
    return "\n".join(line if type(line) is str else line() for line in lines)


class LazyWords:
    """A record's ``guards_text`` as a log argument: said only where the log writes it."""

    def __init__(self, record: Any) -> None:
        self.record = record

    def __str__(self) -> str:
        return self.record.guards_text


def tensor_words(source: Source, entry: tuple, sizes: list, strides: list) -> str:
    """A :class:`TensorGuard` in words (``*`` for a lifted dimension and the strides it sets)."""
    _, _, dtype, device, requires_grad, _ = entry
    shape = tuple("*" if n is None else n for n in sizes)
    stride = tuple("*" if s is None else s for s in strides)
    return (f"{source.describe()}: Tensor dtype={dtype} device={device} shape={shape} "
            f"stride={stride} requires_grad={requires_grad}")


_NAME_ATTRS = ("__qualname__", "co_qualname", "co_name")
_NAMED_BY_TYPE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # class -> the name attributes its MRO defines


def object_name(obj: Any) -> str:
    """The name an object's repr would show: a function's or class's qualified name, a module's
    name, a code object's (qualified) name; empty for an instance (a Linear), whose type says it.
    Looked up as the type's ``__getattribute__`` finds them, never through a ``__getattr__`` (an
    ``nn.Module``'s searches its tables and formats an error for each name it lacks), and only
    where the type or the instance's own ``__dict__`` holds the name: a lookup that fails raises,
    and a record of a module tree describes hundreds of instances that have none of them."""
    cls = type(obj)
    if issubclass(cls, type):
        return class_qualname(obj)   # (past a metaclass's own `__getattribute__`: magpy.realtype)
    try:
        by_type = _NAMED_BY_TYPE[cls]
    except (KeyError, TypeError):
        by_type = frozenset(a for a in _NAME_ATTRS if any(a in class_namespace(k) for k in class_mro(cls)))
        try:
            _NAMED_BY_TYPE[cls] = by_type
        except TypeError:   # (a class that cannot be weakly referenced: not kept)
            pass
    own = _own_dict(obj)
    for attr in _NAME_ATTRS:
        if attr not in by_type and attr not in own:
            continue
        try:
            name = cls.__getattribute__(obj, attr)
        except Exception:  # (a property of the program's that raises)
            name = None
        if isinstance(name, str) and name:
            return name
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return ""


def _own_dict(obj: Any) -> Any:
    """An instance's ``__dict__`` as ``object.__getattribute__`` reads it, or an empty one."""
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:  # (no __dict__: slots or a builtin; or a property that raises)
        return {}
    return own if isinstance(own, dict) else {}


