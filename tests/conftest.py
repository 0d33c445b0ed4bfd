"""Shared helpers: compile with the eager backend and compare with eager over several calls."""
from __future__ import annotations

import pytest
import torch

import magpy


def same(a, b) -> bool:
    """Structural equality of results: tensors by value (and dtype/shape), the rest by ==."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.allclose(a, b, atol=1e-5, rtol=1e-4))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__") and not isinstance(a, torch.nn.Module):
        return same(vars(a), vars(b))
    return a == b


@pytest.fixture(autouse=True)
def _fresh():
    magpy.reset()
    torch.manual_seed(0)
    yield
