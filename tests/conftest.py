"""Shared helpers: compile with the eager backend and compare with eager over several calls."""
from __future__ import annotations

import os
from typing import Any

import pytest
import torch

import magpy
from experiments.compare import Comparison, Tolerance, compare

# test_xla.py runs in its own stage, `./reproduce.sh test-xla` (.venv-xla, torch_xla), which fails when it
# cannot run; the default suite leaves it out instead of skipping it (tests/test_xla_stage.py).
collect_ignore = [] if os.environ.get("MAGPY_XLA_STAGE") else ["test_xla.py"]


def pytest_collection_modifyitems(config, items):
    """The tests marked slow (tens of seconds to minutes each) run first, the rest in file order:
    spread over pytest-xdist workers (./reproduce.sh test), a long test that starts last keeps one
    worker busy after the others ran out of tests."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def same(a: Any, b: Any) -> Comparison:
    """Whether two results agree (the artifact's comparator): truthy when they do, and when they do
    not, ``assert same(...)`` shows where they depart."""
    return compare(b, a, Tolerance(rtol=1e-4, atol=1e-5))


# torch.testing._internal (which ParityBench's helper module imports: tests/test_paritybench.py
# loads it in this process) freezes torch.backends' global flags on import; a test after it on the
# same worker could then not set `torch.backends.mkldnn.enabled` as its program does.
_BACKEND_FLAGS = torch.backends.flags_frozen.__globals__
_FLAGS_FROZEN_AT_START = torch.backends.flags_frozen()


@pytest.fixture(autouse=True)
def _fresh():
    magpy.reset()
    torch.manual_seed(0)
    yield
    if torch.backends.flags_frozen() and not _FLAGS_FROZEN_AT_START:
        _BACKEND_FLAGS["__allow_nonbracketed_mutation_flag"] = True
