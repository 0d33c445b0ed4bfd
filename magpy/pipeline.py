"""The stages after a monitor run, shared by ``compile`` and ``explain`` (so they cannot disagree).

A monitor run (:mod:`magpy.monitor`) ends in one of three ways: it split the call at a dynamic
operation (:mod:`magpy.splits`: the record is the code before it), it broke (the call runs on
eagerly, with a reason), or it finished. A finished run goes through

    merge branches (magpy.dynamic.branches) -> roll loops (magpy.dynamic.loops) -> generate (magpy.codegen)

each of which may still break; a MagPy bug in any of them is an internal error
(:func:`magpy.breaks.internal_error`), never a crash of the user's call. :func:`finish_run` does
all of that and returns a :class:`RunOutcome`; the backend and the record cache stay with the
compiled callable (:mod:`magpy.api`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .breaks import BreakKind, BreakReason, internal_error, split_reason
from .codegen import generate
from .dynamic.merging import ArmLibrary, describe_branches, merge_branches
from .dynamic.rolling import roll_loops
from .graph import Unsupported
from .trace import Trace, run_reason


@dataclass
class RunOutcome:
    """What the stages after one monitor run made of it.

    Exactly one of: ``split`` (the run split at a dynamic operation; ``gen`` is the code before
    it), ``reason`` (a break: no record), or ``gen`` alone (a record of the whole call).
    ``internal``: the callable gives up at once, with a warning (a MagPy bug the next run would
    meet again). ``log``: lines for the recompiles log (branches merged, loops rolled).
    ``dynamic``: the run saw behaviour that follows tensor values. ``op_count``, ``assumptions``
    and ``branches`` are read from the run before its monitor is released (for ``explain``).
    ``trace``: the run as the stages after it saw it (:class:`magpy.trace.Trace`), what the record
    is built from."""

    gen: Any = None
    split: Any = None
    reason: BreakReason | None = None
    internal: bool = False
    dynamic: bool = False
    op_count: int = 0
    assumptions: list = field(default_factory=list)
    branches: list = field(default_factory=list)
    log: list = field(default_factory=list)
    trace: Trace | None = field(default=None, repr=False)

    @property
    def split_reason(self) -> BreakReason | None:
        return split_reason(self.split) if self.split is not None else None


def finish_run(mon: Any, shape: Any, arms: ArmLibrary) -> RunOutcome:
    """The stages after a monitor run (see the module docstring), with their error handling."""
    out = RunOutcome(dynamic=bool(mon.dynamic))
    if mon.split is not None:
        # (the run stopped at the split, or went on eagerly past it: the record is the code before it)
        out.split, out.gen = mon.split, mon.split.gen
        return _described(mon, out)
    reason = run_reason(mon)
    internal = bool(reason is not None and mon.internal_error)
    if reason is not None and mon.split_note is not None:
        reason = dataclasses.replace(reason, note=mon.split_note)
    if reason is None and (mon.branch_spans or mon.branch_notes):
        # Branches whose other side an earlier run saw become conditional nodes (magpy.dynamic.branches).
        try:
            out.log += merge_branches(mon, arms)
        except Exception as e:
            reason = internal_error(e, "merging a branch")
            internal = mon.internal_error = True
    if reason is None and mon.loops:
        # Counted loops whose iterations repeat become one loop node (magpy.dynamic.loops). A failure past
        # its checks is not a give-up: lifting is given up (magpy.api), and the next miss records
        # the loop unrolled, with its sizes guarded.
        try:
            out.log += roll_loops(mon)
        except Exception as e:
            reason = internal_error(e, "rolling a loop")
    if reason is None:
        try:
            out.trace = Trace.of(mon)   # (after the passes above, which rewrite the run)
            out.gen = generate(out.trace, shape, None)
        except Unsupported as e:
            reason = BreakReason(BreakKind.UNSUPPORTED, str(e))
        except Exception as e:
            reason = internal_error(e)
            internal = mon.internal_error = True
    out.reason, out.internal = reason, internal
    if reason is not None:
        out.gen = None
    return _described(mon, out)


def _described(mon: Any, out: RunOutcome) -> RunOutcome:
    if out.trace is None:
        out.trace = Trace.of(mon)
    trace = out.trace
    out.op_count = trace.graph.op_count
    out.assumptions = list(trace.assumption_lines)
    if trace.branch_report is not None:   # (merge_branches said what became of each branch)
        out.branches = list(trace.branch_report)
    elif mon.branch_spans or mon.branch_notes:
        out.branches = describe_branches(mon)
    return out
