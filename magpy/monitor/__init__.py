"""The monitor run (paper §3, §5.3): the user program runs once under monitoring.

=============  ===================================================================================
``run``        :class:`Monitor`: frames, event dispatch, pending updates, breaks
``frame``      :class:`FrameState` and which frames are monitored (no import of the run)
``reads``      the sources and guards of reads from outside: arguments, cells, globals, imports, items
``attrs``      attribute reads with CPython's lookup precedence; class-attribute and dunder guards
``rules``      the update rule of every other bytecode event
``ops``        tensor operations recorded as operator-graph nodes
``state``      :class:`RunSwitches`: what the compiled callable decides for a run, fixed before it starts
=============  ===================================================================================
"""
from .entry import bind_parameters, call_with_hooks, guard_entry
from .frame import FrameState
from .ops import RANDOM_OPS
from .run import Monitor
from .state import RunSwitches

__all__ = ["RANDOM_OPS", "FrameState", "Monitor", "RunSwitches", "bind_parameters", "call_with_hooks", "guard_entry"]
