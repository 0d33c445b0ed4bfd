"""Numbers the operator graph computes from its inputs' sizes alone, as Python source.

A number the program read from a tensor's shape and used in Python (``if x.size(0) > 4``) is an
assumption of the record. When it is computed from the sizes of the graph's inputs alone (a lifted
size, :mod:`magpy.monitor.scalars`), the assumption can be checked *before* the graph runs, as a
guard over the inputs; otherwise only after it (a speculative graph, :mod:`magpy.codegen.speculation`).
The monitor asks which it is (:func:`checked_before_the_mock`: whether what the mock does before the
graph is speculative); code generation writes the check (:func:`size_expr`).
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import torch

from .graph import loop_index, range_len
from .source import ConstPool, literal

#: Python functions of numbers a lifted-size guard may apply (what magpy.monitor.scalars records on sizes).
SIZE_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                              operator.truediv, operator.pow, operator.neg, int, float, max, min, abs,
                              math.ceil, math.floor, math.trunc, operator.lt, operator.le, operator.gt,
                              operator.ge, operator.eq, operator.ne, range_len})


#: The kinds of assumption that can be a guard when what they assume is computed from input sizes.
SIZE_CHECK_KINDS = ("scalar", "truth", "atleast")


def checked_before_the_mock(kind: str, node: Any) -> bool:
    """Is the assumption ``(kind, node)`` a guard (a number computed from the inputs' sizes alone),
    rather than a check after the graph ran (:func:`magpy.codegen.speculation.assumption_checks`)?"""
    return kind in SIZE_CHECK_KINDS and size_expr(node, ConstPool()) is not None


def size_expr(node: Any, pool: ConstPool, depth: int = 0, draws: bool = False) -> Callable | None:
    """``names -> source`` of ``node`` as Python over the graph inputs' variables, if ``node`` is
    a number computed only from input sizes (``i0.size(1) * 4``), and with ``draws`` also from
    numbers the mock draws (``i3 < 0.5``, magpy.redraw); else None."""
    import torch.fx as fx

    if depth > 20:
        return None
    if not isinstance(node, fx.Node):
        if type(node) in (int, float, bool) or node is None:
            code = literal(node, pool)   # (a pool name for NaN and the infinities)
            return lambda names: code
        return None
    if node.op == "placeholder" and node.meta.get("magpy_scalar") and (draws or not node.meta.get("magpy_draw")):
        name = node.name
        return lambda names: names[name]
    if node.op == "call_function" and node.target is loop_index:
        k = node.args[0]   # (an unrolled iteration's index: a constant of the record)
        return lambda names: repr(k)
    if node.op == "call_method" and node.target in ("size", "numel") and node.args \
            and isinstance(node.args[0], fx.Node) and node.args[0].op == "placeholder" \
            and all(type(a) is int for a in node.args[1:]) and not node.kwargs:
        base, rest = node.args[0].name, "".join(repr(a) for a in node.args[1:])
        return lambda names: f"{names[base]}.{node.target}({rest})"
    if node.op == "call_function" and node.target is len and len(node.args) == 1 and not node.kwargs \
            and isinstance(node.args[0], fx.Node):
        # how many rows iterating an input gave (`for x_t in x.unbind(0)`, an LSTM's time loop):
        # the input's size along that dimension
        rows = node.args[0]
        if ((rows.op == "call_method" and rows.target == "unbind") or (rows.op == "call_function"
                                                                      and rows.target is torch.unbind)) \
                and rows.args and isinstance(rows.args[0], fx.Node) and rows.args[0].op == "placeholder" \
                and not rows.args[0].meta.get("magpy_scalar"):
            dim = rows.args[1] if len(rows.args) > 1 else rows.kwargs.get("dim", 0)
            if type(dim) is int:
                base = rows.args[0].name
                return lambda names: f"{names[base]}.size({dim})"
        return None
    if node.op == "call_function" and node.target in SIZE_ARITHMETIC and not node.kwargs:
        parts = [size_expr(a, pool, depth + 1, draws) for a in node.args]
        if any(p is None for p in parts):
            return None
        fn = pool.ref(node.target)
        return lambda names: f"{fn}(" + ", ".join(p(names) for p in parts) + ")"
    return None
