"""What a monitor run is told before it starts, as one record (:class:`RunSwitches`).

The compiled callable decides these for each run (``magpy.pipeline.Runner.start`` builds them from
its :class:`~magpy.pipeline.RunPlan`); the run reads them and never changes them. Keeping them in
one frozen record says, in one place, every decision the run takes from outside.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunSwitches:
    """The decisions a monitor run takes from the compiled callable."""

    #: the target is a module (its forward is the top frame; submodule calls are module calls)
    uses_modules: bool = False
    #: the call shape, where a break at a call may split the call (magpy.splits); None: no splits
    split_shape: tuple | None = None
    #: stop the program at a split (``SplitHere``) and go on from the split's values
    abort_at_split: bool = False
    #: file:line of natives to split at rather than assume a number passed to them (magpy.splits)
    split_escapes: frozenset = frozenset()
    #: random draws may be graph inputs (the backend compiles for numbers that change)
    redraw_ok: bool = False
    #: ... floats among them (TorchInductor 2.13 on CPU computed wrong results from a float input
    #: read back with item() in a fused kernel: with it, float draws are pinned and floats that
    #: change between calls stay guarded)
    float_inputs_ok: bool = False
    #: the graph raises where eager raises (a tensor operation inside ``try``/``except`` is then
    #: speculated on: the record holds while the graph does not raise); the eager graph does, a
    #: compiled kernel need not check what eager's operator checks
    raising_ok: bool = False
    #: the graph runs op by op (backend "eager": the same grad_fns as the program's)
    eager_graph: bool = False
    #: the clean branch arms of earlier runs (magpy.dynamic.merging.ArmLibrary), or None
    branch_library: Any = None
    #: log where each value from outside was read (check mode names it when a record diverges)
    read_log: bool = False
    #: the watchers of dynamic behaviour the run makes, each as ``W(run, hooks)``: a loop watcher and
    #: a branch watcher (:data:`magpy.dynamic.WATCHERS`), which hear the run's events (magpy.monitor.watcher)
    watchers: tuple = ()
    #: takes the split at a break: ``take_split(run, fs, call, reason, split_shape)`` returns the split
    #: point or raises :class:`~magpy.breaks.NotSplit` (:func:`magpy.splits.take_split`); None: no splits
    take_split: Any = None
