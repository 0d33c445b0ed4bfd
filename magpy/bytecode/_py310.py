"""CPython 3.10 bytecode: the events and stack layouts of the 3.10 decoder.

* Calls: ``CALL_FUNCTION n`` (``[callable, args...]``), ``CALL_FUNCTION_KW n`` (the keyword
  names tuple on top of the arguments) and ``CALL_METHOD n`` after ``LOAD_METHOD``
  (``[method, self, args...]`` or ``[NULL, callable, args...]``); a method called with keyword
  arguments is ``LOAD_ATTR`` + ``CALL_FUNCTION_KW`` on the bound method. A bound method called
  as a plain callable is unpacked here (3.11's ``PRECALL`` does it), except the ``with`` exit
  call (``LOAD_CONST None``, ``DUP_TOP``, ``DUP_TOP``, ``CALL_FUNCTION 3``).
* ``LOAD_GLOBAL`` pushes the value alone; ``CALL_FUNCTION_EX``: ``[callable, args, kwargs?]``.
* One opcode per operator: ``BINARY_ADD``, ``INPLACE_ADD``... (normalised to ``BINARY_OP``
  with the operator as ``argrepr``); ``POP_JUMP_IF_*`` are absolute jumps.
* No exception table: ``SETUP_FINALLY`` pushes a block whose handler is its jump target; an
  ``except`` handler tests the exception with ``DUP_TOP``, the class, ``JUMP_IF_NOT_EXC_MATCH``.
* ``dis.Instruction`` has no ``positions``: a line is set on the first instruction of it only.
"""
from __future__ import annotations

import types
from typing import Any

from ..capture import NULL
from ._decoder import Decoder, Instr

BINARY = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
          "MODULO": "%", "POWER": "**", "MATRIX_MULTIPLY": "@", "AND": "&", "OR": "|", "XOR": "^",
          "LSHIFT": "<<", "RSHIFT": ">>"}


class Py310(Decoder):
    """The 3.10 decoder."""

    version = (3, 10)
    HIDDEN_AFTER_EXTENDED_ARG = True
    MATCH_OPS = frozenset({"JUMP_IF_NOT_EXC_MATCH"})
    EVENTS = {
        **{f"BINARY_{k}": "BINARY_OP" for k in BINARY},
        **{f"INPLACE_{k}": "BINARY_OP" for k in BINARY},
        "LOAD_METHOD": "LOAD_ATTR",
        "CALL_FUNCTION": "CALL",
        "CALL_FUNCTION_KW": "CALL",
        "CALL_METHOD": "CALL",
        "COPY_DICT_WITHOUT_KEYS": "COPY_DICT_WITHOUT_KEYS",   # (`**rest` of a mapping pattern)
        **{op: "TRUTH" for op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "JUMP_IF_TRUE_OR_POP",
                                  "JUMP_IF_FALSE_OR_POP")},
        **{op: "PASS" for op in (
            "ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N", "DUP_TOP", "DUP_TOP_TWO", "JUMP_ABSOLUTE",
            "SETUP_WITH", "JUMP_IF_NOT_EXC_MATCH", "GEN_START", "YIELD_FROM")},
    }

    def finish(self, table: dict[int, Instr]) -> None:
        seq = list(table.values())
        for i, ins in enumerate(seq):
            # `with` exit: LOAD_CONST None, DUP_TOP, DUP_TOP, CALL_FUNCTION 3 on the bound
            # __exit__ (3.11 calls it from the method slot, without unpacking it)
            if ins.real == "CALL_FUNCTION" and ins.arg == 3 and i >= 2 \
                    and seq[i - 1].real == seq[i - 2].real == "DUP_TOP":
                ins.method = True

    def line_of(self, ins, previous: int | None) -> int | None:
        return ins.starts_line if ins.starts_line is not None else previous

    def normalise(self, ins, out: Instr) -> Instr:
        op = ins.opname
        if out.opname == "BINARY_OP":
            kind, _, name = op.partition("_")
            out.argrepr = BINARY[name] + ("=" if kind == "INPLACE" else "")
        elif op == "LOAD_METHOD":
            out.method = True
        return out

    def call_operands(self, ins: Instr, stack: list, kw_names: tuple) -> tuple[Any, list, tuple]:
        argc = ins.arg
        n = len(stack)
        if ins.real == "CALL_METHOD":
            if stack[n - argc - 2] is NULL:
                return (*self.unbind(stack[n - argc - 1], stack[n - argc:]), ())
            return stack[n - argc - 2], stack[n - argc - 1:], ()
        if ins.real == "CALL_FUNCTION_KW":
            return (*self.unbind(stack[n - argc - 2], stack[n - argc - 1:n - 1]), stack[-1])
        if ins.method:
            return stack[n - argc - 1], stack[n - argc:], ()   # a `with` exit, called as is
        return (*self.unbind(stack[n - argc - 1], stack[n - argc:]), ())

    def call_ex_operands(self, ins: Instr, stack: list) -> tuple[Any, Any, Any]:
        if ins.arg & 1:
            return stack[-3], stack[-2], stack[-1]
        return stack[-2], stack[-1], {}

    def method_result(self, stack: list) -> tuple[Any, bool]:
        if stack[-2] is NULL:
            return stack[-1], False
        return stack[-2], True

    def with_ranges(self, code: types.CodeType) -> tuple:
        # SETUP_WITH pushes the block; its handler (WITH_EXCEPT_START) is its argument. The range
        # is over-approximated as SETUP_WITH .. handler, as for try blocks below.
        ranges = [(ins.offset, ins.argval, ins.offset) for ins in self.instructions(code).values()
                  if ins.real == "SETUP_WITH"]
        return tuple(sorted(ranges, key=lambda r: r[1] - r[0]))

    def try_blocks(self, code: types.CodeType) -> list[tuple[int, int, int]]:
        # The protected range is over-approximated as SETUP_FINALLY .. handler (it includes an
        # `else:` block): a tensor operation there is treated as guarded by the except.
        return [(ins.offset, ins.argval, ins.argval) for ins in self.instructions(code).values()
                if ins.real == "SETUP_FINALLY"]


DECODER = Py310()
