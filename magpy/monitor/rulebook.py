"""The rule objects that make up a monitor run, and how their methods become the run's.

A :class:`~magpy.monitor.run.Monitor` holds the run's state and dispatches its events; what each
event means is decided by rule objects, one per concern: reads from outside
(:class:`~.reads.Reads`, :class:`~.attrs.AttrReads`), the other events' update rules
(:class:`~.rules.UpdateRules`, :class:`~.patterns.PatternRules`), the call decision of Figure 12
(:class:`~magpy.monitor.calls.CallRules`, with the rules of natives :class:`~magpy.monitor.natives.NativeRules`,
of annotated callees :class:`~magpy.monitor.annotated.AnnotatedRules` and of callbacks run from C
:class:`~.callbacks.CallbackRules`), the recording of tensor operations
(:class:`~.ops.OpRecorder`) and the numbers read from tensor values
(:class:`~magpy.monitor.scalars.ScalarFlow`).

Each rule class is made with the run (``R(run)``) and reads and writes the run's state there
(``self.run.frames``). Its public methods become the run's: the dispatch finds ``op_<EVENT>`` on
the run, the stages after the run call ``mon.decide_call``. What a rule calls of the others it
names in ``USES``; those are bound on the rule object once every rule is made (the rules call
each other both ways: a read may follow a number read from a tensor, which reads again).
"""
from __future__ import annotations

import types
from typing import Any

from .annotated import AnnotatedRules
from .attrs import AttrReads
from .callbacks import CallbackRules
from .calls import CallRules
from .natives import NativeRules
from .ops import OpRecorder
from .patterns import PatternRules
from .reads import Reads
from .rules import UpdateRules
from .scalars import ScalarFlow

#: The rule objects of a run, in the order their methods are found by name (the first wins).
RULE_CLASSES = (Reads, AttrReads, UpdateRules, CallRules, NativeRules, AnnotatedRules, OpRecorder, ScalarFlow,
                PatternRules, CallbackRules)


def rule_methods(rule_class: type) -> list[str]:
    """The names a rule class gives the run: its public functions (update rules ``op_<EVENT>`` and
    their aliases included), in the order the class defines them."""
    return [name for name, v in rule_class.__dict__.items()
            if not name.startswith("_") and isinstance(v, types.FunctionType)]


def rule_function(name: str) -> Any:
    """The function ``name`` of the first rule class that defines it (private ones too), or None."""
    return next((R.__dict__[name] for R in RULE_CLASSES if name in R.__dict__), None)


def make_rules(run: Any) -> list:
    """The rule objects of ``run``: each public method of one becomes the run's, unless the run's
    class or an earlier rule has that name; then each rule gets what its ``USES`` names."""
    rules = [R(run) for R in RULE_CLASSES]
    taken = set(dir(type(run)))
    for r in rules:
        for name in rule_methods(type(r)):
            if name not in taken:
                taken.add(name)
                setattr(run, name, getattr(r, name))
    for r in rules:
        for name in type(r).USES:
            setattr(r, name, getattr(run, name))
    return rules
