"""Static value-stack depth of every instruction of a code object (CPython 3.11+).

On CPython 3.12 and 3.13 the interpreter does not save its stack pointer before an
``INSTRUCTION`` monitoring event, so the capture backend cannot ask the frame how deep
its value stack is. The depth is, however, a static property of the bytecode: the
compiler guarantees that every path reaching an instruction arrives with the same
depth. This module recomputes it the way the compiler does, by walking the control
flow graph with :func:`dis.stack_effect`, the exception table's handlers included.

Example::

    >>> def f(a, b):
    ...     return a + b
    >>> depths = stack_depths(f.__code__)          # {offset: depth before the instruction}
    >>> [depths[i.offset] for i in dis.get_instructions(f) if i.opname == "RETURN_VALUE"]
    [1]

Two facts are not in ``dis.stack_effect`` and are encoded here:

* an exception handler starts with ``depth`` values from the table, plus the offset of
  the raising instruction when ``lasti`` is set, plus the exception itself;
* ``RETURN_GENERATOR`` leaves one value (the first value sent into the new generator)
  when the frame resumes after it; 3.12 reports an effect of 0 for it;
* on 3.11 ``PRECALL n`` pops nothing at run time: the following ``CALL n`` pops the
  callable and arguments, while ``dis`` books the arguments on ``PRECALL``.

The result is checked for consistency (no path may arrive with another depth, no depth
may be negative or exceed ``co_stacksize``); a violation raises
:class:`StackDepthError` rather than letting the capture read a wrong stack.
"""
from __future__ import annotations

import dis
import sys
from types import CodeType

__all__ = ["StackDepthError", "ExceptionTableEntry", "exception_table", "stack_depths"]


class StackDepthError(RuntimeError):
    """The static stack-depth analysis found inconsistent or impossible depths."""


def _opcodes(*names: str) -> frozenset:
    return frozenset(dis.opmap[n] for n in names if n in dis.opmap)


# Instructions after which control never falls through to the next instruction.
_NO_FALLTHROUGH = _opcodes(
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "INTERPRETER_EXIT",
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP",
    "JUMP_NO_INTERRUPT",
)
_JUMPS = frozenset(getattr(dis, "hasjump", ())) | frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_RETURN_GENERATOR = dis.opmap.get("RETURN_GENERATOR", -1)
_PRECALL = dis.opmap.get("PRECALL", -1)    # 3.11 only
_CALL = dis.opmap.get("CALL", -1)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]


class ExceptionTableEntry:
    """One row of ``co_exceptiontable``: instructions in [start, end) jump to ``target``.

    Offsets are in bytes, like :attr:`dis.Instruction.offset`. On entry to ``target``
    the stack holds ``depth`` values, then the raising instruction's offset if
    ``lasti``, then the exception.
    """

    __slots__ = ("start", "end", "target", "depth", "lasti")

    def __init__(self, start: int, end: int, target: int, depth: int, lasti: bool):
        self.start, self.end, self.target, self.depth, self.lasti = start, end, target, depth, lasti

    @property
    def handler_depth(self) -> int:
        """Stack depth at the first instruction of the handler."""
        return self.depth + int(self.lasti) + 1

    def __repr__(self) -> str:
        return (f"ExceptionTableEntry({self.start} to {self.end} -> {self.target} "
                f"[{self.depth}]{' lasti' if self.lasti else ''})")


def _varint(table: bytes, pos: int) -> tuple[int, int]:
    """Decode one big-endian 6-bit-chunk varint (bit 0x40 = more chunks follow)."""
    b = table[pos]
    value = b & 63
    pos += 1
    while b & 64:
        b = table[pos]
        value = (value << 6) | (b & 63)
        pos += 1
    return value, pos


def exception_table(code: CodeType) -> list[ExceptionTableEntry]:
    """Decode ``code.co_exceptiontable`` (format of Objects/exception_handling_notes.txt).

    Each entry is four varints: start and length (code units), target (code units) and
    ``depth << 1 | lasti``; the first byte of an entry has bit 0x80 set.
    """
    table = getattr(code, "co_exceptiontable", b"")
    entries = []
    pos = 0
    while pos < len(table):
        if not table[pos] & 0x80:
            raise StackDepthError(f"malformed exception table of {code.co_name} at byte {pos}")
        start, pos = _varint(table, pos)
        length, pos = _varint(table, pos)
        target, pos = _varint(table, pos)
        depth_lasti, pos = _varint(table, pos)
        entries.append(ExceptionTableEntry(2 * start, 2 * (start + length), 2 * target,
                                           depth_lasti >> 1, bool(depth_lasti & 1)))
    return entries


def _where(code: CodeType) -> str:
    return f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})"


def stack_depths(code: CodeType) -> dict[int, int]:
    """Map each reachable instruction offset of ``code`` to its stack depth before it runs.

    The depth counts value-stack slots above the fast locals, cells and free variables
    (NULL slots included). Raises :class:`StackDepthError` when two paths disagree.
    """
    if sys.version_info < (3, 11):
        raise StackDepthError("static stack depths are computed for CPython 3.11+ bytecode only")
    instrs = list(dis.get_instructions(code))
    index = {ins.offset: i for i, ins in enumerate(instrs)}
    depths: dict[int, int] = {}
    work: list[tuple[int, int, int]] = []   # (offset, depth, offset of the predecessor or -1)

    def reach(offset: int, depth: int, came_from: int) -> None:
        old = depths.get(offset)
        if old is None:
            if offset not in index:
                raise StackDepthError(f"{_where(code)}: jump from {came_from} to {offset}, "
                                      "which is not an instruction")
            if depth < 0 or depth > code.co_stacksize:
                raise StackDepthError(f"{_where(code)}: depth {depth} at offset {offset} "
                                      f"(from {came_from}) outside 0..{code.co_stacksize}")
            depths[offset] = depth
            work.append((offset, depth, came_from))
        elif old != depth:
            raise StackDepthError(f"{_where(code)}: offset {offset} reached with depth {old} "
                                  f"and with depth {depth} (from {came_from})")

    reach(0, 0, -1)
    for entry in exception_table(code):
        reach(entry.target, entry.handler_depth, -1)
    while work:
        offset, depth, _ = work.pop()
        i = index[offset]
        ins = instrs[i]
        op, arg = ins.opcode, (ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None)
        if op in _JUMPS:
            reach(ins.argval, depth + dis.stack_effect(op, arg, jump=True), offset)
        if op not in _NO_FALLTHROUGH and i + 1 < len(instrs):
            if op == _RETURN_GENERATOR:
                effect = 1
            elif op == _EXTENDED_ARG or op == _PRECALL:
                effect = 0
            elif op == _CALL and _PRECALL >= 0:
                effect = dis.stack_effect(_PRECALL, arg) + dis.stack_effect(op, arg)
            else:
                effect = dis.stack_effect(op, arg, jump=False)
            reach(instrs[i + 1].offset, depth + effect, offset)
    return depths
