"""CPython 3.13 capture backend: the ``sys.monitoring`` engine of :mod:`._py312`.

3.13 hooks execution exactly as 3.12 does (legacy opcode tracing still delivers no
events when enabled from a trace function, ``INSTRUCTION`` events do not save the stack
pointer), and its ``_PyInterpreterFrame`` keeps the offsets the engine reads:
``f_executable`` (was ``f_code``) first, ``instr_ptr`` (was ``prev_instr``) eighth, then
``int stacktop``, ``uint16 return_offset``, ``char owner`` and ``localsplus[]``.
``PyFrameObject`` gained ``f_extra_locals`` and ``f_locals_cache`` after ``f_frame``,
which does not move ``f_frame``. What changed in the bytecode (``LOAD_GLOBAL`` pushes
``callable, NULL`` instead of ``NULL, callable``, ``END_FOR`` pops one value,
``RETURN_GENERATOR`` reports its effect) is handled by :mod:`._stackdepth` through
``dis.stack_effect``; the layout is checked below at import.
"""
from __future__ import annotations

import sys

from . import _py312
from ._py312 import (
    check_layout,
    frame_function,
    frame_locals,
    nlocalsplus,
    read_stack,
    stack_slot_ids,
    start,
    stop,
    top_address,
)

__all__ = ["frame_function", "frame_locals", "nlocalsplus", "read_stack", "stack_slot_ids", "start", "stop", "top_address"]

if sys.version_info[:2] != (3, 13):
    raise ImportError("the 3.13 capture backend runs on CPython 3.13 only")
check_layout()


def __getattr__(name: str):
    """Forward other attributes (``last_error``, ...) to the live engine module."""
    return getattr(_py312, name)
