"""``explain`` reports what ``compile`` records (magpy.pipeline: both run the same stages).

For every soundness program (tests/soundness), the target's first call is explained in one
fresh world, and compiled + called once in another fresh world; the graph count, the number of
splits and the dynamic flag must agree. (Programs that call their target through ``invoke``
or compile parts themselves are not called as ``target(*args)``: they are left out.)
"""
from __future__ import annotations

import contextlib
import pathlib
import sys

import pytest

import magpy

sys.path.insert(0, str(pathlib.Path(__file__).parent / "soundness"))
import harness  # noqa: E402

PROGRAMS = harness.load_all()


def _plain(prog) -> bool:
    src = prog.src
    return "def invoke(" not in src and "TOP_COMPILE = False" not in src


def _first_call(prog, use):
    """Build the target in a fresh world, apply step 0, and hand ``use`` the target and the
    first call's inputs (inside the program's context for call 0). Returns what ``use`` returns,
    or None if the program itself raised on that call."""
    base = harness.get_global_state()
    magpy.reset()
    w = harness.World(prog, "eager")
    try:
        w.build()
        ns = w.ns.__dict__
        if "step" in ns:
            ns["step"](0)
        args, kwargs = w.inputs(0)
        ctx = ns["context"](0) if "context" in ns else contextlib.nullcontext()
        with ctx:
            try:
                return use(w.target, args, kwargs)
            except Exception:  # noqa: BLE001 - the program's own exception (eager raises it too)
                return None
    finally:
        w.cleanup()
        harness.set_global_state(base)
        magpy.reset()


def _explained(target, args, kwargs):
    ex = magpy.explain(target)(*args, **kwargs)
    return ex.graph_count, sum(s.startswith("split at") for s in ex.splits), ex.dynamic


def _compiled(target, args, kwargs):
    cf = magpy.compile(target, backend="eager")
    cf(*args, **kwargs)
    st = magpy.stats(cf)
    return st.graph_count, st.splits, st.dynamic


@pytest.mark.parametrize("prog", [p for p in PROGRAMS if _plain(p)], ids=lambda p: p.id)
def test_explain_agrees_with_compile(prog):
    said = _first_call(prog, _explained)
    made = _first_call(prog, _compiled)
    assert (said is None) == (made is None), (said, made)
    assert said == made, f"explain says (graphs, splits, dynamic) = {said}, compile records {made}"


def test_most_programs_are_compared():
    assert sum(map(_plain, PROGRAMS)) > 0.8 * len(PROGRAMS)
