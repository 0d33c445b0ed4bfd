"""Comparing what a compiled program returned with what eager returned: the one comparator of the
artifact (the timing experiments, ParityBench's Table 3, ``models.timing``, the soundness suite with
its fuzzer and benchmarks/soundness_vs_dynamo.py, and the tests all use it; MagPy's check mode,
``magpy/check.py``, compares tensor values with its :func:`tensor_gap`).

Outputs are nested: tensors in tuples, lists, dicts, named tuples, ``ModelOutput`` objects, plus
plain numbers, strings and user objects. :func:`compare` walks two outputs in step with
``torch.utils._pytree`` (so every container torch or a library registered is understood), compares
tensor leaves with ``torch.isclose`` (chunk by chunk) and names the first place the outputs depart::

    >>> import torch
    >>> compare({"y": torch.ones(2)}, {"y": torch.ones(2)}).mismatch is None
    True
    >>> difference((1, torch.zeros(2)), (1, torch.ones(2)))
    'output[1]: values differ (max abs diff 1)'

A :class:`Tolerance` gives rtol/atol, either one pair for every dtype or one pair per dtype (the
experiments' ``tolerance`` config block). :func:`snapshot` freezes an output right after a call,
since a later call may update a returned buffer in place.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

__all__ = ["EXACT", "Comparison", "Tolerance", "compare", "difference", "snapshot", "tensor_gap"]

#: How deep :func:`compare` follows user objects' ``__dict__`` (cycles end here).
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Tolerance:
    """When two floating-point values count as the same: ``|actual - expected| <= atol' + rtol * |expected|``.

    ``per_dtype`` (dtype name -> ``{"rtol", "atol"}``) replaces the single pair for tensors of the
    named dtypes; a floating dtype it does not name is a configuration error. With ``scale_atol``,
    ``atol' = atol * max(1, max|expected|)`` per tensor, which keeps deep random-weight models
    (whose outputs can be large) to the same relative bar; otherwise ``atol' = atol``.

        >>> Tolerance.from_config({"float32": {"rtol": 1e-3, "atol": 1e-3}}).pair(torch.float32)
        (0.001, 0.001)
    """

    rtol: float = 1e-4
    atol: float = 1e-4
    per_dtype: Mapping[str, Mapping[str, float]] | None = None
    scale_atol: bool = False
    #: Python numbers must be of the same type and equal (NaN equals NaN), not only close: the
    #: soundness suite's bar, where what a program computes outside tensors is replayed, not recomputed.
    exact_scalars: bool = False

    @classmethod
    def from_config(cls, block: Mapping[str, Mapping[str, float]]) -> Tolerance:
        """The experiments' ``tolerance`` block: one pair per dtype, atol scaled by the output's magnitude."""
        return cls(per_dtype={str(k): dict(v) for k, v in block.items()}, scale_atol=True)

    def pair(self, dtype: torch.dtype) -> tuple[float, float]:
        """``(rtol, atol)`` for tensors of ``dtype`` (before scaling)."""
        if self.per_dtype is None:
            return self.rtol, self.atol
        tol = self.per_dtype.get(str(dtype).removeprefix("torch."))
        if tol is None:
            raise ValueError(f"no tolerance configured for dtype {dtype} (config key `tolerance`)")
        return float(tol["rtol"]), float(tol["atol"])


#: Bit-for-bit equality (NaN still equals NaN).
EXACT = Tolerance(rtol=0.0, atol=0.0)


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`: truthy when the outputs agree.

    ``mismatch`` names where and how they first depart (``None`` when they agree); ``max_abs_err``
    is the largest ``|actual - expected|`` over every floating-point tensor compared (NaN when the
    structures differ, so nothing comparable was paired).
    """

    mismatch: str | None
    max_abs_err: float = 0.0

    def __bool__(self) -> bool:
        return self.mismatch is None


def compare(expected: Any, actual: Any, tolerance: Tolerance = Tolerance(), where: str = "output",
            max_depth: int = _MAX_DEPTH) -> Comparison:
    """Compare ``actual`` with ``expected`` leaf by leaf; see the module docstring.

    Containers match when they have the same type and keys (or length); tensors when shape, dtype
    and values agree within ``tolerance`` (NaN equals NaN; integer and boolean tensors exactly);
    Python numbers within the float64 tolerance (or exactly, :attr:`Tolerance.exact_scalars`);
    other objects by ``==``, or by their attributes when ``==`` is identity (plain user classes).
    Modules match by type. Nesting deeper than ``max_depth`` (user objects' cycles) is not compared:
    an acyclic value such as a snapshot can pass a larger one.
    """
    walk = _Walk(tolerance, max_depth)
    walk.visit(expected, actual, where, 0)
    return Comparison(walk.first, math.nan if walk.structural else walk.worst)


def difference(expected: Any, actual: Any, rtol: float = 1e-4, atol: float = 1e-4, where: str = "output") -> str | None:
    """``None`` when ``actual`` matches ``expected`` within ``rtol``/``atol``; else where they first differ."""
    return compare(expected, actual, Tolerance(rtol, atol), where).mismatch


def snapshot(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` that later in-place updates cannot change (tensors cloned)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(snapshot(v, depth + 1) for v in value))
    if isinstance(value, (list, tuple)):
        items = [snapshot(v, depth + 1) for v in value]
        return items if type(value) is list else tuple(items)
    if isinstance(value, dict):
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    if isinstance(value, torch.nn.Module):
        return value  # compared by type only
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an uncopyable object is compared as it is
        return value


class _Walk:
    """One comparison: the first mismatch found, the worst float error seen, whether structure differed."""

    def __init__(self, tolerance: Tolerance, max_depth: int = _MAX_DEPTH) -> None:
        self.tolerance = tolerance
        self.max_depth = max_depth
        self.first: str | None = None
        self.worst = 0.0
        self.structural = False

    def fail(self, message: str, structural: bool = False) -> None:
        if self.first is None:
            self.first = message
            self.structural = structural

    def visit(self, e: Any, a: Any, where: str, depth: int) -> None:
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            if not (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)):
                return self.fail(f"{where}: {type(e).__name__} vs {type(a).__name__}", structural=True)
            return self.tensor(e, a, where)
        if depth > self.max_depth:
            return None
        e_node, a_node = not pytree.tree_is_leaf(e), not pytree.tree_is_leaf(a)
        if e_node or a_node:
            return self.container(e, a, where, depth)
        return self.plain(e, a, where, depth)

    def container(self, e: Any, a: Any, where: str, depth: int) -> None:
        if type(e) is not type(a):
            return self.fail(f"{where}: {type(e).__name__} vs {type(a).__name__}", structural=True)
        e_children, a_children = _children(e), _children(a)
        e_keys, a_keys = [k for k, _ in e_children], [k for k, _ in a_children]
        if e_keys != a_keys:
            if all(isinstance(k, pytree.SequenceKey) for k in e_keys + a_keys):
                return self.fail(f"{where}: length {len(e_keys)} vs {len(a_keys)}", structural=True)
            names = [_key_name(k) for k in e_keys][:8], [_key_name(k) for k in a_keys][:8]
            return self.fail(f"{where}: keys {names[0]} vs {names[1]}", structural=True)
        for (key, x), (_, y) in zip(e_children, a_children):
            self.visit(x, y, where + pytree.keystr((key,)), depth + 1)

    def plain(self, e: Any, a: Any, where: str, depth: int) -> None:
        if type(e) is not type(a):
            numbers = (int, float)
            if isinstance(e, numbers) and isinstance(a, numbers) and not isinstance(e, bool) and not isinstance(a, bool) \
                    and not self.tolerance.exact_scalars:
                if not self.close(float(e), float(a)):
                    self.fail(f"{where}: {e!r} vs {a!r}")
                return None
            return self.fail(f"{where}: {type(e).__name__} vs {type(a).__name__}", structural=True)
        if isinstance(e, float):
            if not self.close(e, a):
                self.fail(f"{where}: {e!r} vs {a!r}")
            return None
        if isinstance(e, (bool, int, str, bytes, type(None), complex, torch.dtype, torch.device, torch.Size)):
            if e != a:
                self.fail(f"{where}: {e!r} vs {a!r}")
            return None
        if isinstance(e, torch.nn.Module):
            return None
        if type(e).__eq__ is not object.__eq__:
            try:
                same = e == a
            except Exception:  # noqa: BLE001 - an == that raises tells nothing; compare attributes
                same = None
            if isinstance(same, bool):
                if not same:
                    self.fail(f"{where}: {type(e).__name__} objects differ")
                return None
        e_attrs, a_attrs = getattr(e, "__dict__", None), getattr(a, "__dict__", None)
        if isinstance(e_attrs, dict) and isinstance(a_attrs, dict):
            self.visit(e_attrs, a_attrs, f"{where}.__dict__", depth + 1)
        return None  # opaque objects of the same type: nothing comparable

    def tensor(self, e: torch.Tensor, a: torch.Tensor, where: str) -> None:
        if e.shape != a.shape:
            return self.fail(f"{where}: shape {tuple(e.shape)} vs {tuple(a.shape)}", structural=True)
        if e.dtype != a.dtype:
            return self.fail(f"{where}: dtype {e.dtype} vs {a.dtype}", structural=True)
        e, a = _plain_tensor(e), _plain_tensor(a)
        if e.numel() == 0:
            return None
        if not (e.is_floating_point() or e.is_complex()):
            if not torch.equal(e, a):
                self.fail(f"{where}: values differ")
            return None
        rtol, atol = self.tolerance.pair(e.dtype)
        if self.tolerance.scale_atol:
            atol *= max(1.0, _chunked_max(e, lambda c: c.abs().double().nan_to_num(0.0)))
        # Chunk by chunk: a double copy of a large activation (several of them at once) could
        # exceed the worker's memory cap while the program itself fits.
        worst, bad = tensor_gap(e, a, rtol, atol)
        self.worst = max(self.worst, worst)
        if bad:
            self.fail(f"{where}: values differ (max abs diff {worst:.3g})")
        return None

    def close(self, x: float, y: float) -> bool:
        if math.isnan(x) and math.isnan(y):
            return True
        if self.tolerance.exact_scalars:
            return x == y
        try:
            rtol, atol = self.tolerance.pair(torch.float64)
        except ValueError:  # a per-dtype tolerance without float64: Python floats must be equal
            rtol, atol = 0.0, 0.0
        return math.isclose(x, y, rel_tol=rtol, abs_tol=atol)


def _children(node: Any) -> list[tuple[Any, Any]]:
    """The direct children of a pytree node with their keys (one level of ``tree_flatten_with_path``)."""
    pairs, _ = pytree.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)
    return [(path[0], child) for path, child in pairs]


def _key_name(key: Any) -> Any:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return getattr(key, attr)
    return key


#: Elements compared at once (a few MiB of doubles per temporary).
_CHUNK = 1 << 20


def _chunks(t: torch.Tensor):
    flat = t.reshape(-1)
    for i in range(0, flat.numel(), _CHUNK):
        yield flat[i:i + _CHUNK]


def _chunked_max(t: torch.Tensor, fn) -> float:
    return max(fn(c).max().item() for c in _chunks(t))


def tensor_gap(e: torch.Tensor, a: torch.Tensor, rtol: float, atol: float) -> tuple[float, bool]:
    """``(max |a - e|, whether any element is outside atol + rtol * |e|)`` for floating-point or
    complex tensors ``e`` (expected) and ``a`` (actual) of one shape, dtype and device; NaNs match
    NaNs, infinities match infinities of the same sign (``torch.isclose`` with ``equal_nan``), and
    a NaN facing a number adds nothing to the max. The one closeness rule on tensor values:
    :func:`compare` and MagPy's check mode (``magpy/check.py``) both call it.

        >>> tensor_gap(torch.tensor([1.0, float("nan")]), torch.tensor([1.5, float("nan")]), 0.0, 0.1)
        (0.5, True)
    """
    worst, bad = 0.0, False
    for ce, ca in zip(_chunks(e), _chunks(a)):
        gap = (ca - ce).abs().double() if ce.is_complex() else (ca.double() - ce.double()).abs()
        worst = max(worst, torch.nan_to_num(gap, nan=0.0).max().item())
        if not bad:
            bad = not bool(torch.isclose(ca, ce, rtol=rtol, atol=atol, equal_nan=True).all())
    return worst, bad


def _plain_tensor(t: torch.Tensor) -> torch.Tensor:
    """A dense, dequantized, detached CPU tensor with the values of ``t``."""
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    if t.is_quantized:
        t = t.dequantize()
    return t.cpu()
