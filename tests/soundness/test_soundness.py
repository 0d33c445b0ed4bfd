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
