"""The protocol between a monitor run and the watchers of its dynamic behaviour.

A *watcher* follows one kind of dynamic behaviour while the monitor (:mod:`magpy.monitor`) runs
the program once: counted loops (:class:`~magpy.dynamic.loops.LoopWatcher`), branches on tensor
values (:class:`~magpy.dynamic.branches.BranchWatcher`). Events go in, decisions come out:

=======================================  ==========================================================
event (the monitor calls)                 decision (the watcher returns)
=======================================  ==========================================================
``on_instruction(fs, ins, offset, st)``  nothing: it notes what the instruction does (a use of a
                                          watched object, an arm reaching its merge point)
``take_call(fs, fn, args, kwargs)``      True if the watcher takes the call's result over
                                          (``len(xs)``, ``range(n)`` of a tracked count): the
                                          monitor then does nothing else for it
``on_get_iter(fs, v)``                   True if ``iter(v)`` starts a loop the watcher follows
``on_loop_back(fs, it)``                 True if the ``FOR_ITER`` (a loop's back edge, and its
                                          exit) is a followed loop's: the watcher handles it
``holds_by_construction(node)``          True if an assumption on ``node`` need not be made
``on_assume(kind, node, expected)``      nothing: the run assumed a value (a conditional jump on
                                          it starts a branch's arm; inside a loop, it is checked
                                          per iteration)
``on_frame_left(fs, value)``             nothing: a monitored frame returned or raised
``on_finish()``                          what the run leaves for the watcher's pass (the loops that
                                          may be rolled, the arms that are clean)
=======================================  ==========================================================

What a stretch of the run *wrote* is no event: a watcher asks the RefGraph, which records every
write (:mod:`magpy.monitor.writes`), from a mark taken where the stretch began.

``active`` says whether the watcher wants ``on_instruction`` at all: the monitor tests it before
calling (the common case, no loop or arm open, costs one test per instruction).

A watcher reads the run through its *host*, the monitor, by the monitor's public names
(``graph``, ``guards``, ``assumptions``, ``node``, ``where``, ``assume``, ... listed in each
watcher's docstring), and acts on the run through :class:`RunHooks`: the few operations the
monitor keeps private (pend a callback after the instruction, the instruction's position).

The monitor makes the watchers its :class:`~magpy.monitor.RunSwitches` name in its constructor,
each as ``W(run, hooks)``, and holds each as its attribute of the watcher's ``name``
(``loop_watcher``, ``branch_watcher``; all of them in ``watchers``): its dispatch tests their tables
(one test per instruction while nothing is open) and calls the watcher's event; the rules call the
watcher they need by name (``run.loop_watcher.take_range``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunHooks:
    """What a watcher may do to the monitor run beyond reading its public facts."""

    pend: Callable        # pend(fs, post, data, opaque=False): call post(fs, stack, data) once the instruction ran
    post_new: Callable    # a post: the instruction's top ``data`` results are objects made in the call
    scalar_arg: Callable  # scalar_arg(v): the graph value of a number (its node, or the number)
    at: Callable          # at(): (frame state, offset) of the instruction being monitored, or None
    cell_of: Callable     # cell_of(fs, k): the cell of fs's k-th free variable if it outlives the call, or None


class Watcher:
    """The protocol (see the module docstring); every event does nothing by default."""

    #: the run's attribute that holds it (the run's ``watchers`` list holds them in the order made)
    name = "watcher"

    def __init__(self, host: Any, hooks: RunHooks) -> None:
        self.host = host
        self.hooks = hooks

    @property
    def active(self) -> bool:
        return False

    def on_instruction(self, fs: Any, ins: Any, offset: int, stack: list) -> None:
        pass

    def take_call(self, fs: Any, fn: Any, args: list, kwargs: dict) -> bool:
        return False

    def on_get_iter(self, fs: Any, v: Any) -> bool:
        return False

    def on_loop_back(self, fs: Any, it: Any) -> bool:
        return False

    def holds_by_construction(self, node: Any) -> bool:
        return False

    def on_assume(self, kind: str, node: Any, expected: Any) -> None:
        pass

    def on_frame_left(self, fs: Any, value: Any) -> None:
        pass

    def on_finish(self) -> list:
        return []
