"""numpy functions: pure and value-reading, except ``numpy.random`` and file or test helpers.

numpy is not in the registry (its functions are many and found by module), so the
monitor asks :func:`numpy_annotation` for a function the registry does not know.
"""
from __future__ import annotations

from typing import Any

from . import Annotation

NUMPY = Annotation(note="numpy function: pure, reads its inputs")
NUMPY_RANDOM = Annotation(pure_closure=False, note="numpy.random")
_NUMPY_IMPURE = ("numpy.random", "numpy.lib.npyio", "numpy.testing")


#: ndarray methods that change the array (or its flags) in place.
_MUTATING_METHODS = frozenset({"fill", "sort", "partition", "resize", "put", "itemset", "setfield", "setflags",
                               "byteswap", "__setitem__", "__setstate__", "__iadd__", "__isub__", "__imul__",
                               "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                               "__ixor__", "__ilshift__", "__irshift__", "__imatmul__", "dump", "tofile"})


def _numpy_owned(obj: Any) -> bool:
    return (getattr(type(obj), "__module__", None) or "").startswith("numpy")


def is_numpy_function(fn: Any) -> bool:
    """A numpy ufunc, a callable from a numpy module, or a method of a numpy object (``ufunc.reduce``,
    ``ndarray.astype``), that is pure (not random, I/O, testing, nor an in-place method)."""
    mod = getattr(fn, "__module__", None) or ""
    if type(fn).__name__ == "ufunc":
        return True
    kind = None
    if type(fn).__name__ == "builtin_function_or_method" and _numpy_owned(getattr(fn, "__self__", None)):
        kind = type(fn.__self__)                            # np.add.reduce
    elif type(fn).__name__ == "method_descriptor":
        kind = getattr(fn, "__objclass__", None)            # ufunc.reduce, ndarray.astype (self in args)
    if kind is not None:
        return (getattr(kind, "__module__", None) or "").startswith("numpy") \
            and not kind.__module__.startswith(_NUMPY_IMPURE) and getattr(fn, "__name__", "") not in _MUTATING_METHODS
    return mod.startswith("numpy") and not mod.startswith(_NUMPY_IMPURE) and callable(fn)


#: ndarray methods that change the array (or its flags) in place (public name).
NUMPY_MUTATING_METHODS = _MUTATING_METHODS


def numpy_annotation(fn: Any) -> Annotation | None:
    """The annotation of a numpy function not in the registry; None if ``fn`` is not one."""
    if is_numpy_function(fn):
        return NUMPY
    if (getattr(fn, "__module__", None) or "").startswith("numpy.random"):
        return NUMPY_RANDOM
    return None
