"""The monitor run (paper §3, §5.3): the user program runs once under monitoring.

=============  ===================================================================================
``run``        :class:`Monitor`: frames, event dispatch, pending updates, breaks
``frame``      :class:`FrameState` and which frames are monitored (no import of the run)
``reads``      the sources and guards of reads from outside: arguments, cells, globals, imports, items
``attrs``      attribute reads with CPython's lookup precedence; class-attribute and dunder guards
``rules``      the update rule of every other bytecode event
``ops``        tensor operations recorded as operator-graph nodes
``state``      :class:`RunSwitches`: what the compiled callable decides for a run, fixed before it starts
``rulebook``   the rule objects a run is made of, and how their methods become the run's
``watcher``    :class:`Watcher`, the protocol of the watchers of dynamic behaviour (events in, decisions out)
``writes``     what a stretch of the run wrote (the watchers ask it: may a loop roll, an arm merge?)
``calls``      Figure 12: what a call means; ``natives``, ``annotated``, ``callbacks``: its handlers
``scalars``    numbers read from tensor values, lifted into the graph or assumed
=============  ===================================================================================
"""
from .entry import bind_parameters, call_with_hooks, guard_entry
from .frame import FrameState
from .ops import RANDOM_OPS
from .run import Monitor
from .state import RunSwitches
from .watcher import RunHooks, Watcher
from .writes import arm_write, loop_write, write_counters, write_mark

__all__ = ["RANDOM_OPS", "FrameState", "Monitor", "RunHooks", "RunSwitches", "Watcher", "arm_write", "bind_parameters",
           "call_with_hooks", "guard_entry", "loop_write", "write_counters", "write_mark"]
