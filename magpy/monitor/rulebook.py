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

import functools
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


@functools.cache
def _given_to(run_class: type) -> tuple[tuple[int, str], ...]:
    """``(rule index, name)`` of each method a run of ``run_class`` takes from its rules: a rule's
    public method, unless the run's class or an earlier rule has that name (fixed per class)."""
    taken = set(dir(run_class))
    given = []
    for i, R in enumerate(RULE_CLASSES):
        for name in rule_methods(R):
            if name not in taken:
                taken.add(name)
                given.append((i, name))
    return tuple(given)


def make_rules(run: Any) -> list:
    """The rule objects of ``run``: each public method of one becomes the run's (:func:`_given_to`);
    then each rule gets what its ``USES`` names."""
    rules = [R(run) for R in RULE_CLASSES]
    for i, name in _given_to(type(run)):
        setattr(run, name, getattr(rules[i], name))
    for r in rules:
        for name in type(r).USES:
            setattr(r, name, getattr(run, name))
    return rules
