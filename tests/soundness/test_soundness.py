"""Soundness suite: every registered user program, run eagerly and through MagPy side by side,
must give the same outputs, outside state, identities and gradients on every call (or raise the
same exception type where eager raises). See harness.py for the program format."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

PROGRAMS = harness.load_all()


def _check_outcome(prog, res):
    assert res.outcome == prog.expect, (
        f"{prog.id}: declares EXPECT = {prog.expect!r} but MagPy's outcome was {res.outcome!r} "
        f"({res.compiled_hits} calls of {res.calls} answered by a record)")


def test_expect_declarations():
    bad = [(p.id, p.expect) for p in PROGRAMS if p.expect not in harness.OUTCOMES]
    bad += [(p.id, v) for p in PROGRAMS for v in ((p._constant("EXPECT_BY_VERSION") or {}).values())
            if v not in harness.OUTCOMES]
    assert not bad, f"EXPECT must be one of {harness.OUTCOMES}: {bad}"


def test_registry_size():
    assert len(PROGRAMS) >= 150
    assert len({p.family for p in PROGRAMS}) >= 15


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.id for p in PROGRAMS])
def test_magpy_matches_eager(prog):
    res = harness.run_program(prog, "magpy")
    assert res.verdict == "correct", f"{prog.id}: MagPy {res.verdict}: {res.detail}"
    _check_outcome(prog, res)


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.id for p in PROGRAMS])
def test_magpy_matches_eager_without_the_guard_fast_path(prog, monkeypatch):
    """The same programs with every guard evaluated on every call (no dict version tags: what a
    machine without the C extension, or CPython 3.14+, runs)."""
    from magpy.codegen import guard, guard_batch

    monkeypatch.setattr(guard, "_dict_versions", None)
    monkeypatch.setattr(guard_batch, "_check_held", None)
    monkeypatch.setattr(guard_batch, "_check_funcs", None)
    res = harness.run_program(prog, "magpy")
    assert res.verdict == "correct", f"{prog.id}: MagPy {res.verdict}: {res.detail}"
    _check_outcome(prog, res)


def test_the_suite_compares_with_the_artifacts_comparator_at_its_own_bar():
    """One comparator (experiments/compare.py) for the suite, the experiments and ParityBench; the
    suite keeps its bar: Python numbers exactly, snapshots compared at every depth."""
    import torch

    from experiments.compare import Tolerance, compare

    assert harness.TOLERANCE == Tolerance(per_dtype=harness.TOLERANCE.per_dtype, exact_scalars=True)
    assert harness.diff(1, 1.0, "out") == "out: int vs float"
    assert harness.diff(0.1 + 0.2, 0.3, "out") == "out: 0.30000000000000004 vs 0.3"
    assert compare(0.1 + 0.2, 0.3) and compare(1, 1.0)  # the experiments' bar: close numbers pass
    assert harness.diff(("T", 0, torch.ones(2)), ("T", 0, torch.ones(2) + 1e-5), "out") is None
    assert harness.diff(torch.ones(2), torch.ones(2) + 1e-3, "out") == "out: values differ (max abs diff 0.001)"
    half = torch.ones(2, dtype=torch.float16)
    assert harness.diff(half, half + 5e-3, "out") is None
    deep, other = 1, 2
    for _ in range(20):
        deep, other = ("obj", [deep]), ("obj", [other])
    assert harness.diff(deep, other, "state").startswith("state[1][0][1][0]")
