"""CPython 3.11 bytecode as the monitor reads it: the one place for version-specific details.

The monitor dispatches on opcode names (``Monitor.op_<OPNAME>``); what it needs beyond the
instruction itself is here: the decoded instructions of a code object, which opcodes only
move references (no new value to track), which ``try`` ranges have an ``except`` that could
catch a tensor error, and the versions this decoding is written for::

    >>> def f(x):
    ...     return x + 1
    >>> sorted({i.opname for i in instructions(f.__code__).values()} & PASS_THROUGH)
    ['LOAD_CONST', 'RESUME', 'RETURN_VALUE']

3.11 specifics the monitor relies on: ``PRECALL``/``CALL`` with ``KW_NAMES``, ``LOAD_METHOD``
(bound methods arrive unpacked as function plus ``self``), ``POP_JUMP_FORWARD/BACKWARD_*``,
and the exception table whose handlers start with ``PUSH_EXC_INFO``.
"""
from __future__ import annotations

import builtins
import dis
import types
from typing import Any

SUPPORTED_BYTECODE = ((3, 11),)

# Instructions that only store references to their inputs in a new object.
STRUCTURAL = frozenset({"BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
                        "BUILD_SLICE", "LIST_TO_TUPLE", "STORE_NAME", "LOAD_NAME", "MAKE_FUNCTION",
                        "LOAD_BUILD_CLASS", "IMPORT_NAME", "IMPORT_FROM"})

# Instructions whose result (if any) is not a new object the monitor must track.
PASS_THROUGH = frozenset({
    "NOP", "RESUME", "CACHE", "PRECALL", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL", "PUSH_NULL",
    "POP_TOP", "COPY", "SWAP", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "RETURN_VALUE",
    "LOAD_CONST", "LOAD_CLOSURE", "POP_EXCEPT", "PUSH_EXC_INFO", "RERAISE", "CHECK_EXC_MATCH",
    "RAISE_VARARGS", "LOAD_ASSERTION_ERROR", "YIELD_VALUE", "RETURN_GENERATOR", "SEND", "ASYNC_GEN_WRAP",
    "IS_OP", "END_FOR", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", "INTERPRETER_EXIT", "POP_BLOCK", "SETUP_FINALLY", "BEFORE_WITH",
    "WITH_EXCEPT_START", "LIST_APPEND", "SET_ADD", "MAP_ADD", "BUILD_STRING",
})

_instr_cache: dict = {}
_catching_cache: dict = {}
_MISSING = object()


def instructions(code: types.CodeType) -> dict:
    """The instructions of ``code`` by offset (cached per code object)."""
    table = _instr_cache.get(code)
    if table is None:
        table = {i.offset: i for i in dis.get_instructions(code)}
        _instr_cache[code] = table
    return table


def catching_ranges(code: types.CodeType) -> tuple:
    """``(start, end, caught)`` for each ``try`` range of ``code`` whose handler is an ``except``
    (not ``with``/``finally``); ``caught`` lists the dotted names the handler tests, or None
    for a bare ``except:``.

    CPython 3.11 exception table: a handler starts with PUSH_EXC_INFO; one that tests the
    exception (CHECK_EXC_MATCH) or ends it (POP_EXCEPT) before re-raising catches it.
    """
    hit = _catching_cache.get(code)
    if hit is not None:
        return hit
    instrs = instructions(code)
    offsets = sorted(instrs)
    ranges = []
    for entry in dis._parse_exception_table(code):
        target = instrs.get(entry.target)
        if target is None or target.opname != "PUSH_EXC_INFO":
            continue
        names: list[list[str]] = []
        for off in offsets[offsets.index(entry.target) + 1:]:
            ins = instrs[off]
            op = ins.opname
            if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST"):
                names.append([ins.argval])
            elif op in ("LOAD_ATTR", "LOAD_METHOD") and names:
                names[-1].append(ins.argval)
            elif op == "CHECK_EXC_MATCH":
                ranges.append((entry.start, entry.end, tuple(tuple(n) for n in names)))
                break
            elif op == "POP_EXCEPT":
                ranges.append((entry.start, entry.end, None))
                break
            elif op in ("RERAISE", "WITH_EXCEPT_START", "RETURN_VALUE"):
                break
    hit = _catching_cache[code] = tuple(ranges)
    return hit


_TENSOR_ERRORS = (RuntimeError, IndexError, ValueError)


def catches_tensor_errors(caught: tuple | None, frame: Any) -> bool:
    """Could an ``except`` testing ``caught`` (dotted names seen from ``frame``) catch an
    error a tensor operation raises on some values (RuntimeError, IndexError, ValueError)?"""
    if caught is None:
        return True
    for chain in caught:
        obj = frame.f_locals.get(chain[0], _MISSING) if chain[0] in frame.f_code.co_varnames else _MISSING
        if obj is _MISSING:
            obj = frame.f_globals.get(chain[0], _MISSING)
        if obj is _MISSING:
            obj = getattr(builtins, chain[0], _MISSING)
        for attr in chain[1:]:
            obj = getattr(obj, attr, _MISSING)
        classes = obj if isinstance(obj, tuple) else (obj,)
        for cls in classes:
            if not isinstance(cls, type):
                return True   # not understood: assume it catches
            if issubclass(cls, _TENSOR_ERRORS) or issubclass(RuntimeError, cls):
                return True
    return False
