"""Why compilation of (part of) a call stops: the exception that ends a monitor run, and the
typed reason users read (a break, paper §3).

:class:`BreakCompile` is raised anywhere in the monitor run (:mod:`magpy.monitor`,
:mod:`magpy.monitor.calls`, :mod:`magpy.monitor.ops`); the run catches it, adds the user's file and line,
and the call completes eagerly. :class:`BreakReason` is what the run, the stages after it
(:mod:`magpy.pipeline`) and the compiled callable (:mod:`magpy.api`) hand on: one ``__str__``
is the text of every break reason printed (``explain``, ``stats(...).break_reasons``, logs and
warnings), and :func:`internal_error` is the one place a MagPy bug becomes a reason.

A break at a call or a subscript may *split* the call instead (:mod:`magpy.splits`, which the
compiled callable hands the run): :class:`NotSplit` says why it cannot, :class:`SplitHere` is what
the run raises into the program at the split.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class BreakCompile(Exception):
    """Compilation of this call stops here; ``reason`` is shown to users."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BreakKind(enum.Enum):
    """What kind of thing stopped compilation."""

    UNSUPPORTED = "unsupported"   # a Python feature or operation MagPy cannot put in a record
    DYNAMIC = "dynamic"           # behaviour that follows tensor values (the run saw it: mon.dynamic)
    SPLIT = "split"               # a dynamic operation at a call: the call is split there (magpy.splits)
    HOOKS = "hooks"               # hooks that only the real call runs
    BACKEND = "backend"           # the backend failed to compile the graph
    LIMIT = "limit"               # the recompile limit was reached
    INTERNAL = "internal"         # a MagPy bug: the call runs eagerly, with one warning


@dataclass(frozen=True)
class BreakReason:
    """One break: its kind, what happened (``message``), where in the user's program
    (``where`` = file:line, ``function``), the operation it happened at (when known), and a
    ``note`` (why the call could not be split there, for instance)."""

    kind: BreakKind
    message: str
    function: str | None = None
    where: str | None = None
    operation: str | None = None
    note: str | None = None

    @property
    def internal(self) -> bool:
        """Does the callable give up at once, with a warning (a MagPy bug or a backend failure)?"""
        return self.kind in (BreakKind.INTERNAL, BreakKind.BACKEND)

    def _location(self) -> str:
        if self.where is None:
            return ""
        return f" ({self.where} in {self.function})" if self.function else f" ({self.where})"

    def __str__(self) -> str:
        if self.kind is BreakKind.SPLIT:
            text = f"split at `{self.operation}`{self._location()}: {self.message}; " \
                   "the code after it is compiled on its own"
        else:
            text = self.message + self._location()
        return f"{text}; {self.note}" if self.note else text


def internal_error(exc: BaseException, stage: str | None = None, where: str | None = None,
                   function: str | None = None) -> BreakReason:
    """The reason for a MagPy bug met while ``stage`` (e.g. "merging a branch") ran."""
    during = f" while {stage}" if stage else ""
    return BreakReason(BreakKind.INTERNAL, f"internal MagPy error{during}: {type(exc).__name__}: {exc}",
                       function=function, where=where)


def split_reason(split) -> BreakReason:
    """The reason of a split (a :class:`magpy.splits.SplitPoint`): its text is the split's own."""
    where, _, function = split.where.rpartition(" in ")
    if not where:
        where, function = split.where, None
    return BreakReason(BreakKind.SPLIT, split.reason, function=function, where=where, operation=split.op)


#: Events besides calls at which a break may split the call (``xs[t]``, ``xs[a:b]``, magpy.splits).
SUBSCRIPT_EVENTS = frozenset({"BINARY_SUBSCR", "BINARY_SLICE"})


class SplitHere(BaseException):
    """Raised into the program at D by the monitor run that split it: the frames unwind (no
    handler covers D or the calls that led to it, which the split checked) and the run goes on
    with D and the continuation, from the values the frames held (``Monitor.split_values``). So
    the continuation's own monitor run happens in the same call, and so does the next split's:
    a program with several dynamic operations is compiled in one call, not one per call.
    A BaseException: ``except Exception`` in code around the call does not see it."""


class NotSplit(Exception):
    """This dynamic operation cannot split the call (the reason is added to the break's)."""
