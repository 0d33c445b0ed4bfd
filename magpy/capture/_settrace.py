"""The ``sys.settrace`` driver shared by the 3.10 and 3.11 backends.

Both versions deliver an ``opcode`` event before each instruction of a frame whose
``f_trace_opcodes`` is set; only the way the value stack is read differs, so each
backend passes its own ``read_stack`` to :func:`driver`.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def driver(read_stack: Callable[[Any], list]) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """``(start, stop)`` for a backend whose stack reader is ``read_stack``."""
    state: dict[str, Any] = {"hooks": None, "previous": None}

    def local(frame, event, arg):
        hooks = state["hooks"]
        if hooks is None:
            return None
        if event == "opcode":
            hooks.instruction(frame, frame.f_lasti, read_stack(frame))
        elif event == "return":
            hooks.leave_frame(frame, arg)
        elif event == "exception":
            hooks.exception(frame, arg[1])
        return local

    def global_(frame, event, arg):
        hooks = state["hooks"]
        if hooks is None or event != "call":
            return None
        if hooks.enter_frame(frame):
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local
        return None

    def start(hooks) -> None:
        """Install the tracer on this thread (a debugger's or coverage tool's tracer is put back by stop)."""
        state["previous"] = sys.gettrace()
        state["hooks"] = hooks
        sys.settrace(global_)

    def stop() -> None:
        """Remove the tracer from this thread and restore the one that was there before."""
        if state["hooks"] is None:
            return
        sys.settrace(state["previous"])
        state["previous"] = None
        state["hooks"] = None

    return start, stop
