"""Comparing what a compiled program returned with what eager returned.

User programs return tensors, but also tuples, dicts, named tuples, dataclass-like objects,
plain numbers and strings. :func:`snapshot` freezes such a value right after a call (a later
call may update a returned buffer in place); :func:`difference` walks two snapshots in step
and names the first place they disagree, or returns ``None`` when they agree.

    >>> import torch
    >>> difference({"y": torch.ones(2)}, {"y": torch.ones(2)}) is None
    True
    >>> difference((1, torch.zeros(2)), (1, torch.ones(2)))
    'output[1]: values differ (max abs diff 1)'
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch

__all__ = ["difference", "snapshot"]

_MAX_DEPTH = 8


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


def difference(expected: Any, actual: Any, rtol: float = 1e-4, atol: float = 1e-4, where: str = "output") -> str | None:
    """``None`` when ``actual`` matches ``expected``; else where and how they first differ.

    Tensors match when shape and dtype agree and values are close (NaN equals NaN);
    containers match element by element; other objects by ``==`` (or by their attributes
    when ``==`` is identity, as for plain user classes).
    """
    return _diff(expected, actual, rtol, atol, where, 0)


def _diff(a: Any, b: Any, rtol: float, atol: float, where: str, depth: int) -> str | None:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return f"{where}: {type(a).__name__} vs {type(b).__name__}"
        return _tensor_diff(a, b, rtol, atol, where)
    if depth > _MAX_DEPTH:
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if type(a) is not type(b):
            return f"{where}: {type(a).__name__} vs {type(b).__name__}"
        if len(a) != len(b):
            return f"{where}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _diff(x, y, rtol, atol, f"{where}[{i}]", depth + 1)
            if found:
                return found
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a.keys()) != list(b.keys()):
            return f"{where}: keys {list(a.keys())[:8]} vs {list(b.keys())[:8]}"
        for k in a:
            found = _diff(a[k], b[k], rtol, atol, f"{where}[{k!r}]", depth + 1)
            if found:
                return found
        return None
    if type(a) is not type(b):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            return None if _close(float(a), float(b), rtol, atol) else f"{where}: {a!r} vs {b!r}"
        return f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, float):
        return None if _close(a, b, rtol, atol) else f"{where}: {a!r} vs {b!r}"
    if isinstance(a, (bool, int, str, bytes, type(None), complex)):
        return None if a == b else f"{where}: {a!r} vs {b!r}"
    if isinstance(a, torch.nn.Module):
        return None
    if _has_own_eq(a):
        try:
            same = a == b
            if isinstance(same, bool):
                return None if same else f"{where}: {type(a).__name__} objects differ"
        except Exception:  # noqa: BLE001 - an == that raises tells nothing; fall through
            pass
    attrs_a, attrs_b = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    if isinstance(attrs_a, dict) and isinstance(attrs_b, dict):
        return _diff(attrs_a, attrs_b, rtol, atol, f"{where}.__dict__", depth + 1)
    return None  # opaque objects of the same type: nothing comparable


def _tensor_diff(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float, where: str) -> str | None:
    if a.shape != b.shape:
        return f"{where}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    if a.dtype != b.dtype:
        return f"{where}: dtype {a.dtype} vs {b.dtype}"
    if a.is_sparse or b.is_sparse:
        a, b = a.to_dense(), b.to_dense()
    if a.is_quantized:
        a, b = a.dequantize(), b.dequantize()
    if a.numel() == 0:
        return None
    if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
        return None if torch.equal(a, b) else f"{where}: values differ"
    if torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
        return None
    gap = (a.double() - b.double()).abs() if not a.is_complex() else (a - b).abs().double()
    gap = torch.where(torch.isnan(gap), torch.zeros_like(gap), gap)
    return f"{where}: values differ (max abs diff {gap.max().item():.3g})"


def _close(x: float, y: float, rtol: float, atol: float) -> bool:
    if math.isnan(x) and math.isnan(y):
        return True
    return math.isclose(x, y, rel_tol=rtol, abs_tol=atol)


def _has_own_eq(obj: Any) -> bool:
    return type(obj).__eq__ is not object.__eq__
