"""What a stretch of the monitor run wrote: the one place the dynamic watchers ask it.

A loop is rolled (:mod:`magpy.dynamic.loops`) and a branch's arm is kept
(:mod:`magpy.dynamic.branches`) only if nothing inside it writes an object. The RefGraph
records every write of the run (:attr:`~magpy.refgraph.RefGraph.writes`, one
:class:`~magpy.refgraph.Write` each): the writes to objects from outside are its versions (what the
record's mock replays); the update rules add the writes to objects made in the call, which no
mock replays but whose state between iterations, or between the sides of a branch, no watcher
compares (an attribute of an object the loop made, an item of a list it built, a cell of a
closure made in the call, a native given an object it changes), and the two events that hand
control to state nobody compares (a ``yield`` to its consumer, an ``import``). A watcher takes a
mark (:func:`write_mark`) where its stretch starts and asks what was written since
(:func:`loop_write`, :func:`arm_write`); :func:`write_counters` adds what is no object write
(effects, draws, in-place tensor changes in the graph, context variables).
"""
from __future__ import annotations

from typing import Any

from ..refgraph import Write


def write_mark(mon: Any) -> int:
    """Where a stretch of the run starts, for :func:`loop_write` and :func:`arm_write`."""
    return len(mon.rg.writes)


def loop_write(mon: Any, mark: int, watched: dict) -> Write | None:
    """The first write since ``mark`` that an iteration of a rolled loop may not make, or None.
    A comprehension adding to the list it builds is no such write (the list is made and dropped
    within the iteration, or is a local whose structure the iteration's abstraction compares),
    nor is the growth of a watched accumulator (``acc.append(x)``, ``acc += [x]``: ``watched``,
    the loop watcher's table, checks how it grows and who reads it)."""
    for w in mon.rg.writes_since(mark):
        if w.change.kind == "build":
            continue
        acc = watched.get(w.obj_id)
        if acc is not None and acc[1] == "acc" and w.change.kind == "call" and w.change.key in ("list.append", "+="):
            continue
        return w
    return None


def arm_write(mon: Any, mark: int) -> Write | None:
    """The first write since ``mark``, or None: a branch's arm may make none (conservatively, a
    container the arm builds is not compared either)."""
    writes = mon.rg.writes_since(mark)
    return writes[0] if writes else None


def write_counters(mon: Any) -> tuple:
    """The monitor's counters of what is no object write: equal before and after a stretch of
    the run when it folded no logged calls, changed no tensor in place, replayed no effect, drew
    no number, ran no speculative operation and set no context variable."""
    return (mon.rg.outside_changes, len(mon.mutated), len(mon.effects), len(mon.draws), mon.graph_mutates,
            len(mon.speculative_ops), mon.mutates_outside, len(mon.contextvars))
