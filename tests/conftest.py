"""Shared helpers: compile with the eager backend and compare with eager over several calls."""
from __future__ import annotations

from typing import Any

import pytest
import torch

import magpy
from experiments.compare import Comparison, Tolerance, compare


def same(a: Any, b: Any) -> Comparison:
    """Whether two results agree (the artifact's comparator): truthy when they do, and when they do
    not, ``assert same(...)`` shows where they depart."""
    return compare(b, a, Tolerance(rtol=1e-4, atol=1e-5))


@pytest.fixture(autouse=True)
def _fresh():
    magpy.reset()
    torch.manual_seed(0)
    yield
