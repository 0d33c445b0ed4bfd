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
import gc
import sys
import types
import weakref

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


_start, _stop = driver(read_stack)


def top_address(frame) -> int:
    """Address of the top value-stack slot, during an "opcode" event of ``frame``."""
    depth = _int_at(id(frame) + _F_STACKDEPTH).value
    if depth <= 0:
        raise RuntimeError("top_address: the frame has no value on its stack or is not stopped at a trace event")
    return _void_p_at(id(frame) + _F_VALUESTACK).value + (depth - 1) * _PTR


def start(hooks) -> None:
    """Start capturing on this thread (see :mod:`magpy.capture`)."""
    _announced.clear()
    _start(hooks)


def stop() -> None:
    """Stop capturing on this thread and forget the announced functions."""
    _stop()
    _announced.clear()


# A 3.10 frame does not record the function object it runs (3.11 added f_func). The monitor
# announces each Python function it is about to call; a frame entered from C (a module's
# forward, a key function) is matched by searching the functions that hold its code.
_announced: dict[int, tuple] = {}      # id(code) -> (code, function), while capturing
_by_code: dict[int, tuple] = {}        # id(code) -> (code, weakrefs to the functions found)


def announce_call(fn) -> None:
    """The monitor is about to call the Python function ``fn``: its frame comes next."""
    code = fn.__code__
    _announced[id(code)] = (code, fn)


def announce_unknown(code) -> None:
    """The next frame of ``code`` may run one of several functions: forget the announced one."""
    _announced.pop(id(code), None)


def _free_cells(frame) -> tuple:
    """The closure cells a frame runs with: the slots just below its value stack."""
    code = frame.f_code
    n = len(code.co_freevars)
    if n == 0:
        return ()
    address = _void_p_at(id(frame) + _F_VALUESTACK).value - n * _PTR
    return tuple((ctypes.py_object * n).from_address(address))


def _runs(fn, frame) -> bool:
    cells = fn.__closure__ or ()
    return len(cells) == len(frame.f_code.co_freevars) and all(
        a is b for a, b in zip(cells, _free_cells(frame)))


def frame_function(frame):
    """The function object ``frame`` runs, or None when it cannot be told for certain."""
    code = frame.f_code
    entry = _announced.get(id(code))
    if entry is not None and entry[0] is code and _runs(entry[1], frame):
        return entry[1]
    entry = _by_code.get(id(code))
    found = [r() for r in entry[1]] if entry is not None and entry[0] is code else []
    matches = [f for f in found if f is not None and f.__code__ is code and _runs(f, frame)]
    if len(matches) != 1:
        # (one scan of the heap per code object, again only when a new closure of it runs)
        found = [f for f in gc.get_referrers(code) if isinstance(f, types.FunctionType) and f.__code__ is code]
        _by_code[id(code)] = (code, tuple(weakref.ref(f) for f in found))
        matches = [f for f in found if _runs(f, frame)]
    return matches[0] if len(matches) == 1 else None


def _check_layout() -> None:
    """Fail at import when ``PyFrameObject`` does not look like the 3.10 layout."""
    frame = sys._getframe()
    if (_void_p_at(id(frame) + _F_CODE).value != id(frame.f_code)
            or _int_at(id(frame) + _F_STACKDEPTH).value != -1):
        raise ImportError(f"unexpected PyFrameObject layout on Python {sys.version.split()[0]}")


_check_layout()
