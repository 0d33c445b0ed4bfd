"""Operation property annotations (paper §5.2) and their registry.

Native functions (C builtins, torch kernels) hide what they do from the monitor, so
each carries an :class:`Annotation` with the paper's six properties:

* ``as_op_node`` — how to turn the call into an operator-graph node (``"function"`` for
  fx ``call_function``, ``"method"`` for ``call_method``), or None.
* ``pure_closure`` — same outputs for the same inputs and no hidden external effect.
* ``value_read`` — per input, whether the function reads the input's value
  (a container read this way has its whole structure guarded).
* ``inplace`` — indices of inputs the function may modify in place.
* ``out_inplace`` — the output is one of the inputs, modified in place.
* ``relation`` — the output is reached from an input by a reference relation
  (``getattr(o, n)`` is ``("attr", n)`` of input 0); used to give it a source.

Users extend the registry with :func:`annotate`::

    magpy.annotate(my_c_function, pure_closure=True, value_read=(True, False))

Unannotated native functions are treated as dynamic (Figure 12, step 1): the monitor
run stops compiling and says which function it was.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ALL = None  # value_read=ALL: every input is read


@dataclass(frozen=True)
class Annotation:
    """The properties of one operation (paper §5.2)."""

    as_op_node: str | None = None
    pure_closure: bool = True
    value_read: tuple | None = ALL
    inplace: tuple = ()
    out_inplace: bool = False
    relation: Callable[[list, dict], tuple | None] | None = None
    # How the result relates to tensor metadata: "meta" results are static values.
    meta: bool = False
    note: str = ""

    def reads(self, index: int) -> bool:
        if self.value_read is ALL:
            return True
        return index < len(self.value_read) and bool(self.value_read[index])


class Registry:
    """Annotations keyed by the callable object (identity), with user additions on top."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Any, Annotation]] = {}
        self._codes: tuple | None = None

    def add(self, fn: Any, ann: Annotation) -> None:
        self._by_id[id(fn)] = (fn, ann)
        self._codes = None

    def python_code_ids(self) -> frozenset:
        """The ids of the code objects of the annotated Python functions. By identity: a code
        object hashes its constants on every lookup, and equal code elsewhere (the same body
        written twice) is not the annotated function's. The codes are held with their ids, so
        an id stays theirs even if a function's ``__code__`` is replaced."""
        if self._codes is None:
            codes = tuple({id(c): c for fn, _ in self._by_id.values()
                           if (c := getattr(fn, "__code__", None)) is not None}.values())
            self._codes = (codes, frozenset(map(id, codes)))
        return self._codes[1]

    def get(self, fn: Any) -> Annotation | None:
        hit = self._by_id.get(id(fn))
        if hit is not None and hit[0] is fn:
            return hit[1]
        return None

    def __contains__(self, fn: Any) -> bool:
        return self.get(fn) is not None


REGISTRY = Registry()

PURE = Annotation()
DYNAMIC = Annotation(pure_closure=False)


def annotate(fn: Any = None, **properties: Any):
    """Register properties for ``fn``; usable as ``annotate(fn, ...)`` or ``@annotate(...)``.

    Unknown property names raise ``TypeError`` naming them.
    """
    allowed = set(Annotation.__dataclass_fields__)
    bad = set(properties) - allowed
    if bad:
        raise TypeError(f"magpy.annotate: unknown properties {sorted(bad)}; known: {sorted(allowed)}")
    if properties.get("as_op_node") not in (None, "function", "method"):
        raise TypeError(f"magpy.annotate: as_op_node must be None, 'function' or 'method', "
                        f"not {properties['as_op_node']!r}")
    if isinstance(properties.get("value_read"), list):
        properties["value_read"] = tuple(properties["value_read"])

    def register(f):
        REGISTRY.add(f, Annotation(**properties))
        return f

    if fn is None:
        return register
    return register(fn)


def lookup(fn: Any) -> Annotation | None:
    """The annotation of ``fn`` (loading the built-in tables on first use)."""
    ensure_loaded()
    return REGISTRY.get(fn)


_loaded = False


def ensure_loaded() -> None:
    """Register the built-in annotation tables (builtins, torch operators) once, on first use."""
    global _loaded
    if not _loaded:
        _loaded = True
        from . import builtins as _b  # noqa: F401
        from . import torch_ops as _t  # noqa: F401
