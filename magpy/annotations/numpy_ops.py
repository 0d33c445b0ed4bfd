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


def is_numpy_function(fn: Any) -> bool:
    """A numpy ufunc or a callable from a numpy module that is pure (not random, I/O, testing)."""
    mod = getattr(fn, "__module__", None) or ""
    if type(fn).__name__ == "ufunc":
        return True
    return mod.startswith("numpy") and not mod.startswith(_NUMPY_IMPURE) and callable(fn)


def numpy_annotation(fn: Any) -> Annotation | None:
    """The annotation of a numpy function not in the registry; None if ``fn`` is not one."""
    if is_numpy_function(fn):
        return NUMPY
    if (getattr(fn, "__module__", None) or "").startswith("numpy.random"):
        return NUMPY_RANDOM
    return None
