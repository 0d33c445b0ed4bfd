"""Resume functions: a code object that starts in the middle of another one (paper §5.3.1).

When a call is split at a dynamic operation D (:mod:`magpy.splits`), the code after D runs
again on later calls without the code before it. For each frame F that was running at D,
MagPy makes a *resume function* from F's code: it takes F's locals, the contents of F's
cells and F's value stack as arguments, puts the stack back and jumps to the instruction
where F stood. The rest of F's code is the original bytecode, unchanged, so line numbers,
exception handlers (``try``, ``with``) and jumps work as in F.

The new code is ``prologue + original code``:

* its parameters are F's locals, in F's order (so every ``LOAD_FAST`` keeps its index),
  then one parameter per cell that is not a local, then one per non-NULL stack slot;
* the prologue makes F's cells (``MAKE_CELL``; a cell's content is stored into it), copies
  the free variables (``COPY_FREE_VARS``, from the resume function's closure: F's), runs
  ``RESUME``, pushes the stack slots (``PUSH_NULL`` for a NULL slot) and jumps to the resume
  offset with ``JUMP_FORWARD``; a cell or free variable that is *shared* (a cell of the split
  call another resumed frame holds too) gets the cell object itself from its parameter, stored
  into its slot (no ``MAKE_CELL``; over the closure's cell for a free variable); locals unbound
  in F are deleted again, and a parameter that only carries a value into place is cleared;
* jumps inside the original code are relative on 3.11+ and keep their targets; the exception
  table's offsets move by the prologue's length and the line table gets prologue entries
  without a location; cell and free variable indexes (``LOAD_DEREF``...) move by the number of
  parameters added.

CPython 3.11, 3.12 and 3.13 share this layout (what differs between them is listed below and
nowhere else). 3.10 uses absolute jumps and ``SETUP_*`` blocks: no resume functions there
(:func:`supported` is False, and a split call runs eagerly as before).

    >>> def f(x, y):
    ...     z = x + y
    ...     return z * 2
    >>> import dis
    >>> at = next(i.offset for i in dis.get_instructions(f) if i.opname == "BINARY_OP" and i.argrepr == "*")
    >>> r = resume_function(f, at, (True, True), ("z",))    # stack: z, 2
    >>> r(None, None, 5, 5, 2)                              # x, y, z (locals), then the stack
    10
"""
from __future__ import annotations

import dis
import sys
import types

from ..capture._stackdepth import exception_table

_V = sys.version_info[:2]


class ResumeUnsupported(Exception):
    """This frame cannot be resumed by a generated function (the reason is shown to users)."""


def supported() -> bool:
    """Can this CPython's frames be resumed (3.11 to 3.13)?"""
    return (3, 11) <= _V <= (3, 13)


_OP = dis.opmap
# 3.12+ loads a stack slot's parameter and clears it in one instruction (a resumed frame must
# not keep a second reference to a value the stack consumes: an activation would stay alive).
_CLEARING_LOAD = _OP.get("LOAD_FAST_AND_CLEAR")
_FREE_OPS = frozenset(dis.hasfree)   # opargs index cells and free variables (3.11+: into localsplus)
# 3.13 builds closures with LOAD_FAST of the cell's slot (LOAD_CLOSURE is gone): there local
# loads and stores may index cells too, and the pairs pack two 4-bit indexes.
_LOCAL_OPS = frozenset(_OP[n] for n in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "STORE_FAST",
                                        "DELETE_FAST") if n in _OP) if _V >= (3, 13) else frozenset()
_PAIR_OPS = frozenset(_OP[n] for n in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")
                      if n in _OP) if _V >= (3, 13) else frozenset()
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, iterable coroutine, async generator
_VARARGS, _VARKEYWORDS = 0x04, 0x08


def _ins(op: str, arg: int = 0) -> list[int]:
    """One instruction (with EXTENDED_ARG prefixes for a large argument), as bytes."""
    out: list[int] = []
    for shift in (24, 16, 8):
        if arg >> shift:
            out += [_OP["EXTENDED_ARG"], (arg >> shift) & 0xFF]
    return out + [_OP[op], arg & 0xFF]


def _varint(value: int, first: bool) -> list[int]:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    out = [c | 64 for c in chunks[:-1]] + [chunks[-1]]
    if first:
        out[0] |= 0x80
    return out


def _entry(start: int, end: int, target: int, depth: int, lasti: bool) -> list[int]:
    """One exception-table entry (offsets in code units)."""
    return _varint(start, True) + _varint(end - start, False) + _varint(target, False) \
        + _varint(depth << 1 | int(lasti), False)


def _shifted_exception_table(code: types.CodeType, units: int, raise_at: int | None = None,
                             at: int | None = None) -> bytes:
    """``code``'s exception table moved by ``units``; with ``raise_at`` (a prologue offset, in code
    units), the prologue instruction there is covered by the handler that covers ``at`` (bytes)."""
    out: list[int] = []
    if raise_at is not None:
        e = next(e for e in exception_table(code) if e.start <= at < e.end)
        out += _entry(raise_at, raise_at + 1, e.target // 2 + units, e.depth, e.lasti)
    for e in exception_table(code):
        out += _entry(e.start // 2 + units, e.end // 2 + units, e.target // 2 + units, e.depth, e.lasti)
    return bytes(out)


def _no_location(units: int) -> bytes:
    """Line-table entries (3.11+ format) for ``units`` code units without a location."""
    out = []
    while units > 0:
        n = min(units, 8)
        out.append(0x80 | (15 << 3) | (n - 1))
        units -= n
    return bytes(out)


def _shift_cell_indexes(co_code: bytes, first_cell: int, added: int) -> bytes:
    """``co_code`` with the argument of every cell/free-variable instruction whose index is at
    least ``first_cell`` moved up by ``added`` (the arguments must keep their size)."""
    code = bytearray(co_code)
    ext = 0
    ext_at: list[int] = []
    for i in range(0, len(code), 2):
        op, arg = code[i], code[i + 1]
        if op == _OP["EXTENDED_ARG"]:
            ext = (ext | arg) << 8
            ext_at.append(i)
            continue
        full = ext | arg
        if op in _PAIR_OPS:
            hi, lo = arg >> 4, arg & 15
            hi, lo = (hi + added if hi >= first_cell else hi), (lo + added if lo >= first_cell else lo)
            if hi > 15 or lo > 15:
                raise ResumeUnsupported("too many local variables to resume the frame")
            code[i + 1] = hi << 4 | lo
        elif (op in _FREE_OPS or op in _LOCAL_OPS) and full >= first_cell:
            new = full + added
            width = len(ext_at) + 1
            if new >> (8 * width):
                raise ResumeUnsupported("too many local variables to resume the frame")
            for k, j in enumerate(reversed(ext_at)):
                code[j + 1] = (new >> (8 * (k + 1))) & 0xFF
            code[i + 1] = new & 0xFF
        ext = 0
        ext_at = []
    return bytes(code)


def resume_code(code: types.CodeType, at: int, stack: tuple[bool, ...], cells: tuple[str, ...],
                unbound: tuple[str, ...] = (), shared: tuple[str, ...] = (), raising: bool = False) -> types.CodeType:
    """The code of a resume function of ``code`` at offset ``at``.

    ``stack``: one entry per value-stack slot at ``at``, bottom to top, False for a NULL slot.
    ``cells``: names of the cells (not free variables) whose content is passed; the other cells
    start empty. ``unbound``: locals that were unbound in F, deleted again by the prologue (a
    frame that calls ``locals()`` must not show them). ``shared``: cells and free variables of F
    whose *cell objects* are passed (cells of the split call that another resumed frame shares:
    a ``nonlocal`` of a closure made in the call); a local among them gets its cell as its
    parameter. Parameters: ``code``'s locals, the passed cells (contents, or the cell where
    shared), the shared free variables' cells, the non-NULL slots.

    ``raising``: the frame goes on by raising at ``at`` (a call that raised: an exception handler of
    ``code`` covers it), not by running from there. The last parameter is the exception; the prologue
    raises it from an instruction that the handler covering ``at`` covers too (with the stack depth and
    ``lasti`` of that handler, and ``at``'s line, which a traceback shows), so the frame's own
    ``except``, ``finally`` and ``__exit__`` see it as they would have seen it at ``at``."""
    if not supported():
        raise ResumeUnsupported(f"frames cannot be resumed on CPython {_V[0]}.{_V[1]}")
    if code.co_flags & _GENERATOR_FLAGS:
        raise ResumeUnsupported(f"`{code.co_name}` is a generator or coroutine")
    varnames = tuple(code.co_varnames)
    nv = len(varnames)
    cell_only = [c for c in code.co_cellvars if c not in varnames]
    extra_cells = [f".cell_{c}" for c in cells if c in cell_only]
    free = [f".free_{c}" for c in code.co_freevars if c in shared]
    slots = [f".stack{k}" for k, present in enumerate(stack) if present] + ([".raised"] if raising else [])
    added = len(extra_cells) + len(free) + len(slots)
    new_varnames = varnames + tuple(extra_cells) + tuple(free) + tuple(slots)
    index = {name: k for k, name in enumerate(new_varnames)}
    # localsplus after the change: varnames, cells that are not varnames, free variables
    cell_index = {c: (varnames.index(c) if c in varnames else len(new_varnames) + cell_only.index(c))
                  for c in code.co_cellvars}

    pro: list[int] = []
    for name in unbound:
        pro += _ins("DELETE_FAST", index[name])   # (before MAKE_CELL: a cell of it starts empty)
    for c in code.co_cellvars:
        if c in shared:
            if c in cell_only:   # (a local's parameter is its cell already)
                pro += _load_and_clear(index[f".cell_{c}"], code) + _ins("STORE_FAST", cell_index[c])
            continue
        pro += _ins("MAKE_CELL", cell_index[c])
        if c in cells and c in cell_only:
            pro += _load_and_clear(index[f".cell_{c}"], code)
            pro += _ins("STORE_DEREF", cell_index[c])
    if code.co_freevars:
        pro += _ins("COPY_FREE_VARS", len(code.co_freevars))
        first_free = len(new_varnames) + len(cell_only)
        for k, c in enumerate(code.co_freevars):
            if c in shared:   # (this call's cell over the one the function's closure holds)
                pro += _load_and_clear(index[f".free_{c}"], code) + _ins("STORE_FAST", first_free + k)
    pro += _ins("RESUME", 0)
    for k, present in enumerate(stack):
        pro += _load_and_clear(index[f".stack{k}"], code) if present else _ins("PUSH_NULL")
    raise_at = None
    if raising:
        pro += _load_and_clear(index[".raised"], code)
        raise_at = len(pro) // 2
        # (the NOP after it is never run: its line-table entry takes the line back to where the
        # original code's line table starts from)
        pro += _ins("RAISE_VARARGS", 1) + _ins("NOP")
        line = _line_at(code, at) or code.co_firstlineno
        located = _no_location(raise_at) + _line_entry(line - code.co_firstlineno) \
            + _line_entry(code.co_firstlineno - line)
    else:
        # JUMP_FORWARD counts from the instruction after it, the prologue's last: the original code
        # starts right there, so the distance is ``at`` itself (in code units).
        pro += _ins("JUMP_FORWARD", at // 2)
    units = len(pro) // 2
    if not raising:
        located = _no_location(units)
    body = code.co_code
    if added and code.co_cellvars + code.co_freevars:
        body = _shift_cell_indexes(body, nv, added)
    consts = code.co_consts
    flags = code.co_flags & ~(_VARARGS | _VARKEYWORDS)
    return code.replace(
        co_code=bytes(pro) + body,
        co_argcount=len(new_varnames), co_posonlyargcount=0, co_kwonlyargcount=0,
        co_nlocals=len(new_varnames), co_varnames=new_varnames, co_flags=flags,
        co_stacksize=max(code.co_stacksize, len(stack) + 2), co_consts=consts,
        co_linetable=located + code.co_linetable,
        co_exceptiontable=_shifted_exception_table(code, units, raise_at, at),
        co_qualname=f"{code.co_qualname.split(' (resumed')[0]} ({'raising' if raising else 'resumed'} at line "
                    f"{_line_at(code, at)})",
    )


def _line_entry(delta: int) -> bytes:
    """A line-table entry (3.11+ format, "no column" form) for one code unit, ``delta`` lines from
    the line before it."""
    v = (-delta << 1) | 1 if delta < 0 else delta << 1
    out = [0x80 | (13 << 3)]
    while v >= 64:
        out.append(64 | (v & 63))
        v >>= 6
    return bytes(out + [v])


def _line_at(code: types.CodeType, at: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= at < end:
            return line
    return None


def _load_and_clear(k: int, code: types.CodeType) -> list[int]:
    """Push parameter ``k`` and leave its slot empty (the value lives on where it goes)."""
    if _CLEARING_LOAD is not None:
        return _ins("LOAD_FAST_AND_CLEAR", k)
    # 3.11: LOAD_FAST, then DELETE_FAST (no second reference; `locals()` does not show the slot)
    return _ins("LOAD_FAST", k) + _ins("DELETE_FAST", k)


# (code, at, stack, cells) -> resume code: one code object per resume point, so that what is
# keyed by code (compiled continuations, the monitor's per-code tables) is shared across runs.
_CODES: dict = {}


# resume code -> indexes (into co_freevars) of the free variables whose cells it gets as parameters
_PASSED_FREE: dict = {}


def passed_free_cells(code: types.CodeType) -> frozenset:
    """Free variables of ``code`` whose cells are its parameters, not its function's closure
    (a resume function's: the monitor must not read them as the closure's cells)."""
    return _PASSED_FREE.get(code, frozenset())


# resume code -> (the code it resumes, the prologue's length in bytes)
_ORIGIN: dict = {}


def origin_of(code: types.CodeType) -> tuple[types.CodeType, int] | None:
    """``(original code, prologue bytes)`` where ``code`` is a resume function's (offset ``o`` of
    ``code``, past the prologue, is offset ``o - prologue`` of the original), else None. A frame
    resumed after a split that splits again is resumed from the original code: a loop that splits
    at each step resumes from the same code each time (:mod:`magpy.splits`)."""
    return _ORIGIN.get(code)


def resume_function(fn: types.FunctionType, at: int, stack: tuple[bool, ...], cells: tuple[str, ...] = (),
                    closure: tuple | None = None, unbound: tuple[str, ...] = (),
                    shared: tuple[str, ...] = (), raising: bool = False) -> types.FunctionType:
    """A function running ``fn``'s code from offset ``at`` (see :func:`resume_code`), with
    ``fn``'s globals and closure; ``raising``: one that raises its last argument at ``at``."""
    key = (fn.__code__, at, stack, cells, unbound, shared, raising)
    code = _CODES.get(key)
    if code is None:
        if len(_CODES) > 4096:
            _CODES.clear()
            _PASSED_FREE.clear()
            _ORIGIN.clear()
        code = _CODES[key] = resume_code(fn.__code__, at, stack, cells, unbound, shared, raising)
        _ORIGIN[code] = (fn.__code__, len(code.co_code) - len(fn.__code__.co_code))
        passed = frozenset(k for k, c in enumerate(fn.__code__.co_freevars) if c in shared)
        if passed:
            _PASSED_FREE[code] = passed
    return types.FunctionType(code, fn.__globals__, fn.__name__, None,
                              fn.__closure__ if closure is None else closure)
