"""CPython 3.11 capture backend: ``sys.settrace`` opcode events + ctypes stack reads.

Layout facts (Include/internal/pycore_frame.h, 3.11):
``PyFrameObject`` = PyObject_HEAD, f_back, **f_frame** (pointer to ``_PyInterpreterFrame``), ...
``_PyInterpreterFrame`` = 8 pointer fields (f_func, f_globals, f_builtins, f_locals, f_code,
frame_obj, previous, prev_instr), ``int stacktop``, ``bool is_entry``, ``char owner``,
then ``localsplus[]``: the fast locals, cells and free variables, then the value stack.
``stacktop`` is saved before each trace callback, so ``localsplus[nlocalsplus:stacktop]``
is exactly the stack the instruction is about to consume.
"""
from __future__ import annotations

import ctypes
import sys

from . import NULL

_PTR = ctypes.sizeof(ctypes.c_void_p)
_F_FRAME = 3 * _PTR          # ob_refcnt, ob_type, f_back, f_frame
_STACKTOP = 8 * _PTR
_LOCALSPLUS = 9 * _PTR
_void_p_at = ctypes.c_void_p.from_address
_int_at = ctypes.c_int.from_address
_py_object = ctypes.py_object
_cast = ctypes.cast

_nlocalsplus_cache: dict = {}


def _nlocalsplus(code) -> int:
    n = _nlocalsplus_cache.get(code)
    if n is None:
        # Arguments that are also cells occupy one slot (kind LOCAL|CELL).
        varnames = set(code.co_varnames)
        n = code.co_nlocals + sum(1 for c in code.co_cellvars if c not in varnames) + len(code.co_freevars)
        _nlocalsplus_cache[code] = n
    return n


def read_stack(frame) -> list:
    """Values on ``frame``'s value stack, bottom to top (NULL slots as :data:`NULL`)."""
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    top = _int_at(iframe + _STACKTOP).value
    base = iframe + _LOCALSPLUS
    out = []
    for i in range(_nlocalsplus(frame.f_code), top):
        p = _void_p_at(base + i * _PTR).value
        out.append(_cast(p, _py_object).value if p else NULL)
    return out


_hooks = None


def _local(frame, event, arg):
    hooks = _hooks
    if hooks is None:
        return None
    if event == "opcode":
        hooks.instruction(frame, frame.f_lasti, read_stack(frame))
    elif event == "return":
        hooks.leave_frame(frame, arg)
    elif event == "exception":
        hooks.exception(frame, arg[1])
    return _local


def _global(frame, event, arg):
    hooks = _hooks
    if hooks is None or event != "call":
        return None
    if hooks.enter_frame(frame):
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return _local
    return None


def start(hooks) -> None:
    """Install the tracer on this thread."""
    global _hooks
    _hooks = hooks
    sys.settrace(_global)


def stop() -> None:
    """Remove the tracer from this thread."""
    global _hooks
    sys.settrace(None)
    _hooks = None


def frame_function(frame):
    """The function object a frame runs (``_PyInterpreterFrame.f_func``), or None."""
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    p = _void_p_at(iframe).value
    return _cast(p, _py_object).value if p else None
