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

import dis
import sys
import types
from typing import Any

from ..capture import NULL
from ..capture._stackdepth import exception_table
from ._decoder import UNSUPPORTED, Decoder, Instr

# What dis.get_instructions computes an argument's value and words from, per opcode (3.11's
# dis._get_instructions_bytes, without its two tuples per instruction: the monitor decodes
# every code object a run enters, a tenth of a model's capture through dis).
_CONST, _NAME, _GLOBAL, _JUMP, _BACK, _LOCAL, _COMPARE, _FORMAT, _MAKE_FN, _BINARY = range(1, 11)


def _arg_kinds() -> list[int]:
    """Per opcode, which of dis's rules gives its argument's value and words (0: the number)."""
    kinds = [0] * 256
    for op in dis.hasconst:
        kinds[op] = _CONST
    for op in dis.hasname:
        kinds[op] = _GLOBAL if op == dis.opmap["LOAD_GLOBAL"] else _NAME
    for op in dis.hasjrel:
        kinds[op] = _BACK if "JUMP_BACKWARD" in dis.opname[op] else _JUMP
    for op in (*dis.haslocal, *dis.hasfree):
        kinds[op] = _LOCAL
    for op in dis.hascompare:
        kinds[op] = _COMPARE
    kinds[dis.opmap["FORMAT_VALUE"]] = _FORMAT
    kinds[dis.opmap["MAKE_FUNCTION"]] = _MAKE_FN
    kinds[dis.opmap["BINARY_OP"]] = _BINARY
    return kinds


if sys.version_info[:2] == (3, 11):   # (the later decoders subclass this one but read with dis)
    _ARG_KIND = _arg_kinds()
    _CACHES = list(dis._inline_cache_entries)
    _OPNAMES = list(dis.opname)
    _LOAD_CONST, _EXTENDED_ARG, _HAVE_ARGUMENT = dis.opmap["LOAD_CONST"], dis.EXTENDED_ARG, dis.HAVE_ARGUMENT
    _INT_OVERFLOW = 2 ** 31
    _BINARY_SYMBOLS = [symbol for _, symbol in dis._nb_ops]

# Opcodes no 3.11 program in forward needs and whose reads MagPy cannot guard (`match` reads
# lengths and keys, async code, `except*`, deleting a closure cell): not in the tables, so they
# break with their name.


def _rare_arg(kind: int, arg: int) -> tuple[Any, str]:
    """The value and words of a ``FORMAT_VALUE`` or ``MAKE_FUNCTION`` argument, as dis gives them."""
    if kind == _FORMAT:
        convert, argrepr = dis.FORMAT_VALUE_CONVERTERS[arg & 0x3]
        argval = (convert, bool(arg & 0x4))
        if argval[1]:
            argrepr = (argrepr + ", " if argrepr else "") + "with format"
        return argval, argrepr
    return arg, ", ".join(s for i, s in enumerate(dis.MAKE_FUNCTION_FLAGS) if arg & (1 << i))


def _lines_by_unit(code: types.CodeType, units: int) -> list:
    """The line of each code unit of ``code`` (None where it has none), as ``co_positions``
    gives it, read from the line ranges of ``co_lines`` (a range per line, not a tuple per unit)."""
    lines = [None] * units
    for start, end, line in code.co_lines():
        if line is not None:
            lines[start >> 1:end >> 1] = [line] * ((end - start) >> 1)
    return lines


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

    def decode(self, code: types.CodeType) -> dict[int, Instr]:
        """What :meth:`Decoder.decode` reads with ``dis``, read from ``co_code`` here (the same
        values and words: tests/test_bytecode.py compares both on the code of whole modules), by
        the loop in C where it is built (``_decode311.c``), else by :meth:`decode_python`."""
        if _c_decode is not None:
            return _c_decode(code)
        return self.decode_python(code)

    def decode_python(self, code: types.CodeType) -> dict[int, Instr]:
        """The decoding loop in Python (and what the C one must agree with)."""
        raw = code.co_code   # (3.11: the unspecialised instructions, as dis reads them)
        consts, names, varname = code.co_consts, code.co_names, code._varname_from_oparg
        lines = _lines_by_unit(code, len(raw) // 2)
        event, table = self.event, {}
        line = None
        extended = caches = 0
        for offset in range(0, len(raw), 2):
            if caches:   # (inline cache entries: no instruction of their own)
                caches -= 1
                continue
            op = raw[offset]
            caches = _CACHES[op]
            real = _OPNAMES[op]
            if lines[offset >> 1] is not None:
                line = lines[offset >> 1]
            argval, argrepr = None, ""
            if op >= _HAVE_ARGUMENT:
                arg = raw[offset + 1] | extended
                extended = (arg << 8) if op == _EXTENDED_ARG else 0
                if extended >= _INT_OVERFLOW:
                    extended -= 2 * _INT_OVERFLOW
                argval = arg
                kind = _ARG_KIND[op]
                if kind == _CONST:
                    argval = consts[arg] if op == _LOAD_CONST else dis.UNKNOWN
                    argrepr = repr(argval) if argval is not dis.UNKNOWN else ""
                elif kind == _NAME:
                    argval = argrepr = names[arg]
                elif kind == _GLOBAL:
                    argval = argrepr = names[arg >> 1]
                    if arg & 1 and argrepr:
                        argrepr = "NULL + " + argrepr
                elif kind == _JUMP or kind == _BACK:
                    argval = offset + 2 + (-arg if kind == _BACK else arg) * 2
                    argrepr = "to " + repr(argval)
                elif kind == _LOCAL:
                    argval = argrepr = varname(arg)
                elif kind == _COMPARE:
                    argval = argrepr = dis.cmp_op[arg]
                elif kind == _FORMAT or kind == _MAKE_FN:
                    argval, argrepr = _rare_arg(kind, arg)
                elif kind == _BINARY:
                    argrepr = _BINARY_SYMBOLS[arg]
            else:
                arg = None
                extended = 0
            ins = Instr(event(real), real, offset, arg, argval, argrepr, line)
            if real == "LOAD_METHOD":   # (normalise)
                ins.method = True
            table[offset] = ins
        return table

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


def _c_tables(decoder: Py311) -> tuple:
    """What the C loop reads per opcode (``_decode311.c``'s ``init``)."""
    return (tuple(_CACHES), tuple(_OPNAMES), decoder.events, UNSUPPORTED, tuple(_ARG_KIND),
            tuple(dis.cmp_op), tuple(_BINARY_SYMBOLS), dis.UNKNOWN, _rare_arg,
            (_LOAD_CONST, dis.opmap["LOAD_METHOD"], _EXTENDED_ARG, _HAVE_ARGUMENT))


_c_decode = None
if sys.version_info[:2] == (3, 11):
    try:   # (the loop in C; built without a compiler, or elsewhere, the Python loop runs)
        from ._decode311 import AVAILABLE as _C_AVAILABLE
    except ImportError:   # pragma: no cover
        _C_AVAILABLE = False
    if _C_AVAILABLE:
        from ._decode311 import decode as _c_loop
        from ._decode311 import init as _c_init

        _c_init(Instr, _c_tables(DECODER))
        _c_decode = _c_loop
