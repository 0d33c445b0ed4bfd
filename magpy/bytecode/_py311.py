"""CPython 3.11 bytecode: the events and stack layouts of the 3.11 decoder.

* Calls are ``PRECALL n`` + ``CALL n`` with the keyword names set by a ``KW_NAMES`` before
  them; the stack is ``[NULL, callable, args...]`` or ``[method, self, args...]`` (PRECALL has
  already unpacked a bound method into the second form when the monitor sees ``CALL``).
* ``LOAD_METHOD`` leaves ``[method, self]`` or ``[NULL, value]``; ``LOAD_GLOBAL`` with
  ``arg & 1`` pushes NULL *below* the value.
* ``CALL_FUNCTION_EX``: ``[NULL, callable, args, kwargs?]``.
* Conditional jumps are ``POP_JUMP_FORWARD/BACKWARD_IF_*`` and ``JUMP_IF_*_OR_POP``.
* Exceptions: the exception table (``co_exceptiontable``); a handler starts with
  ``PUSH_EXC_INFO`` and tests the exception with ``CHECK_EXC_MATCH``.
"""
from __future__ import annotations

import types
from typing import Any

from ..capture import NULL
from ..capture._stackdepth import exception_table
from ._decoder import Decoder, Instr

# Opcodes no 3.11 program in forward needs and whose reads MagPy cannot guard (`match` reads
# lengths and keys, async code, `except*`, deleting a closure cell): not in the tables, so they
# break with their name.


class Py311(Decoder):
    """The 3.11 decoder; 3.12's and 3.13's start from it."""

    version = (3, 11)
    HIDDEN_AFTER_EXTENDED_ARG = True
    EVENTS = {
        "LOAD_METHOD": "LOAD_ATTR",
        "KW_NAMES": "KW_NAMES",
        "CALL": "CALL",
        "PRECALL": "PASS",
        "ASYNC_GEN_WRAP": "PASS",
        **{op: "TRUTH" for op in (
            "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
            "POP_JUMP_BACKWARD_IF_FALSE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")},
        **{op: "PASS" for op in (
            "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE",
            "POP_JUMP_BACKWARD_IF_NOT_NONE")},
    }

    def normalise(self, ins, out: Instr) -> Instr:
        if ins.opname == "LOAD_METHOD":
            out.method = True
        return out

    def call_operands(self, ins: Instr, stack: list, kw_names: tuple) -> tuple[Any, list, tuple]:
        argc = ins.arg
        n = len(stack)
        if stack[n - argc - 2] is NULL:
            return stack[n - argc - 1], stack[n - argc:], kw_names
        return stack[n - argc - 2], stack[n - argc - 1:], kw_names

    def call_slots(self, ins: Instr) -> int:
        """How many value-stack slots a call instruction consumes (callable, self or NULL,
        arguments; 3.13's ``CALL_KW`` also its keyword names): the stack below them is what
        the frame goes on with after the call (:mod:`magpy.splits`)."""
        if ins.real == "CALL_FUNCTION_EX":
            return 3 + (ins.arg & 1)
        return ins.arg + 2 + (ins.real == "CALL_KW")

    def call_ex_operands(self, ins: Instr, stack: list) -> tuple[Any, Any, Any]:
        if ins.arg & 1:
            return stack[-3], stack[-2], stack[-1]
        return stack[-2], stack[-1], {}

    def method_result(self, stack: list) -> tuple[Any, bool]:
        if stack[-2] is NULL:
            return stack[-1], False
        return stack[-2], True

    def try_blocks(self, code: types.CodeType) -> list[tuple[int, int, int]]:
        instrs = self.instructions(code)
        blocks = []
        for entry in exception_table(code):
            target = instrs.get(entry.target)
            if target is not None and target.real == "PUSH_EXC_INFO":
                blocks.append((entry.start, entry.end, entry.target + 2))
        return blocks


DECODER = Py311()
