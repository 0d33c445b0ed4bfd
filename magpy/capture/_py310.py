"""CPython 3.10 capture backend: ``sys.settrace`` opcode events + ctypes stack reads.

Hooking is the same as on 3.11 (see :mod:`._py311`): a global trace function asks
``hooks.enter_frame`` at each "call" event (start and every generator resume) and
turns on ``f_trace_opcodes`` for accepted frames, whose local trace function then
gets an "opcode" event before each instruction.

Layout (Include/cpython/frameobject.h, 3.10): the frame *is* the interpreter frame.
``PyFrameObject`` = PyObject_VAR_HEAD (3 words), f_back, **f_code**, f_builtins,
f_globals, f_locals, **f_valuestack** (pointer to the slot after the last local, cell
and free variable), f_trace, **int f_stackdepth**, ... Before calling the trace
function for an "opcode" event the interpreter stores the live depth in
``f_stackdepth`` (and sets it back to -1 after), so ``f_valuestack[0:f_stackdepth]``
is exactly the stack the instruction is about to consume. NULL slots occur (e.g.
``LOAD_METHOD`` pushes NULL and the attribute when it is not a plain method).
"""
from __future__ import annotations

import ctypes
import sys

from . import NULL
from ._settrace import driver

_PTR = ctypes.sizeof(ctypes.c_void_p)
_F_CODE = 4 * _PTR
_F_VALUESTACK = 8 * _PTR
_F_STACKDEPTH = 10 * _PTR
_void_p_at = ctypes.c_void_p.from_address
_int_at = ctypes.c_int.from_address
_arrays: dict[int, tuple[type, type]] = {}


def read_stack(frame) -> list:
    """Values on ``frame``'s value stack, bottom to top (NULL slots as :data:`NULL`).

    Valid only during an "opcode" trace event of ``frame`` (inside ``hooks.instruction``),
    when ``f_stackdepth`` holds the live depth; anywhere else it raises.
    """
    depth = _int_at(id(frame) + _F_STACKDEPTH).value
    if depth < 0:
        raise RuntimeError("read_stack: the frame is running or not stopped at a trace event")
    if depth == 0:
        return []
    arrays = _arrays.get(depth)
    if arrays is None:
        arrays = _arrays[depth] = (ctypes.c_void_p * depth, ctypes.py_object * depth)
    address = _void_p_at(id(frame) + _F_VALUESTACK).value
    ptrs = arrays[0].from_address(address)[:]
    if None in ptrs:
        objs = arrays[1].from_address(address)
        return [objs[i] if p else NULL for i, p in enumerate(ptrs)]
    return arrays[1].from_address(address)[:]


start, stop = driver(read_stack)


def frame_function(frame):
    """Always None: a 3.10 frame does not record the function object it runs."""
    return None


def _check_layout() -> None:
    """Fail at import when ``PyFrameObject`` does not look like the 3.10 layout."""
    frame = sys._getframe()
    if (_void_p_at(id(frame) + _F_CODE).value != id(frame.f_code)
            or _int_at(id(frame) + _F_STACKDEPTH).value != -1):
        raise ImportError(f"unexpected PyFrameObject layout on Python {sys.version.split()[0]}")


_check_layout()
