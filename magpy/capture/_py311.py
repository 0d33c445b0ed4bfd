"""CPython 3.11 capture backend: ``sys.settrace`` opcode events + ctypes stack reads.

Layout facts (Include/internal/pycore_frame.h, 3.11):
``PyFrameObject`` = PyObject_HEAD, f_back, **f_frame** (pointer to ``_PyInterpreterFrame``), ...
``_PyInterpreterFrame`` = 8 pointer fields (f_func, f_globals, f_builtins, f_locals, f_code,
frame_obj, previous, prev_instr), ``int stacktop``, ``bool is_entry``, ``char owner``,
then ``localsplus[]``: the fast locals, cells and free variables, then the value stack.
``stacktop`` is saved before each trace callback, so ``localsplus[nlocalsplus:stacktop]``
is exactly the stack the instruction is about to consume.

Two drivers deliver the same events: the C one (``_ctrace.c``, built with the package where a
compiler is found: no trampoline copying locals per event, the stack read in C) and the
``sys.settrace`` one of :mod:`._settrace` with the ctypes reader below, which runs where the
extension is missing and wherever :func:`use_driver` names it.
"""
from __future__ import annotations

import ctypes
import sys

from . import NULL
from ._settrace import driver

_PTR = ctypes.sizeof(ctypes.c_void_p)
_F_FRAME = 3 * _PTR          # ob_refcnt, ob_type, f_back, f_frame
_STACKTOP = 8 * _PTR
_LOCALSPLUS = 9 * _PTR
_void_p_at = ctypes.c_void_p.from_address
_int_at = ctypes.c_int.from_address

# id(code) -> (code, n): hashing a code object hashes its contents, too slow per event;
# the identity check guards against a recycled id.
_nlocalsplus_cache: dict = {}


def _nlocalsplus(code) -> int:
    entry = _nlocalsplus_cache.get(id(code))
    if entry is None or entry[0] is not code:
        # Arguments that are also cells occupy one slot (kind LOCAL|CELL).
        varnames = set(code.co_varnames)
        n = code.co_nlocals + sum(1 for c in code.co_cellvars if c not in varnames) + len(code.co_freevars)
        entry = _nlocalsplus_cache[id(code)] = (code, n)
    return entry[1]


_arrays: dict[int, tuple[type, type]] = {}


def read_stack(frame) -> list:
    """Values on ``frame``'s value stack, bottom to top (NULL slots as :data:`NULL`)."""
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    first = _nlocalsplus(frame.f_code)
    depth = _int_at(iframe + _STACKTOP).value - first
    if depth <= 0:
        return []
    arrays = _arrays.get(depth)
    if arrays is None:
        arrays = _arrays[depth] = (ctypes.c_void_p * depth, ctypes.py_object * depth)
    # One ctypes read for all slots; py_object items are new references.
    address = iframe + _LOCALSPLUS + first * _PTR
    ptrs = arrays[0].from_address(address)[:]
    if None in ptrs:
        objs = arrays[1].from_address(address)
        return [objs[i] if p else NULL for i, p in enumerate(ptrs)]
    return arrays[1].from_address(address)[:]


_python_start, _python_stop = driver(read_stack)

try:   # (the C driver, _ctrace.c; built without a compiler: the Python driver runs)
    from ._ctrace import QuietMap
    from ._ctrace import frame_function as _c_frame_function
    from ._ctrace import set_opaque as _c_set_opaque
    from ._ctrace import set_quiet as _c_set_quiet
    from ._ctrace import start as _c_start
except ImportError:
    QuietMap = _c_frame_function = _c_set_opaque = _c_set_quiet = _c_start = None


def _idle(frame, event, arg):
    """The ``f_trace`` of a frame the C driver follows: a tracer installed later (a debugger's)
    finds a callable there that ignores the frame, as the Python driver's does once stopped."""
    return None


_driver = {"name": "c" if _c_start is not None else "python", "previous": None, "running": False}


def use_driver(name: str) -> str:
    """Pick the driver later captures use ("c" or "python"); returns the one in use before.
    "c" is refused where the extension is not built."""
    if name not in ("c", "python"):
        raise ValueError(f"capture driver must be 'c' or 'python', not {name!r}")
    if name == "c" and _c_start is None:
        raise RuntimeError("the C capture driver (magpy/capture/_ctrace.c) is not built for this interpreter")
    before, _driver["name"] = _driver["name"], name
    return before


def quiet_map(flags: bytes):
    """What the C driver takes for a code object's quiet instructions (``flags[offset]``: from
    which level of :func:`set_quiet` on the monitor does not need the instruction's event while the
    frame is quiet, 0 for never): a frame whose ``instruction`` hook returns it skips those events
    (see ``_ctrace.c``); None without the C driver."""
    return QuietMap(flags) if QuietMap is not None else None


def set_quiet(level: int) -> None:
    """Quiet frames skip the instructions flagged 1..``level`` (0: every event is delivered)."""
    if _driver["running"]:
        _c_set_quiet(level)


def set_opaque(flag: bool) -> None:
    """While ``flag`` holds, the C driver enters no frame (the hooks would refuse each one)."""
    if _driver["running"]:
        _c_set_opaque(flag)


def wake(frame) -> None:
    """Deliver every event of ``frame`` again (the monitor waits for its next event)."""
    if QuietMap is not None and type(frame.f_trace) is QuietMap:
        frame.f_trace = _idle


def driver_name() -> str:
    """The driver the next capture uses."""
    return _driver["name"]


def start(hooks) -> None:
    """Install the tracer on this thread (a debugger's or coverage tool's tracer is put back by stop)."""
    if _driver["name"] == "python":
        _python_start(hooks)
        return
    _driver["previous"] = sys.gettrace()
    _driver["running"] = True
    _c_start(hooks, NULL, _idle)


def stop() -> None:
    """Remove the tracer from this thread and restore the one that was there before."""
    if not _driver["running"]:
        _python_stop()
        return
    sys.settrace(_driver["previous"])
    _driver["previous"] = None
    _driver["running"] = False


def stack_slot_ids(frame, n: int) -> list:
    """The raw contents (object addresses, None for NULL) of the ``n`` bottom slots of a
    suspended frame's value stack; no object is touched (a slot the frame no longer uses may
    hold a stale address: compare, never dereference)."""
    if n <= 0:
        return []
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    address = iframe + _LOCALSPLUS + _nlocalsplus(frame.f_code) * _PTR
    return list((ctypes.c_void_p * n).from_address(address)[:])


def top_address(frame) -> int:
    """Address of the top value-stack slot, during an opcode event of ``frame``."""
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    first = _nlocalsplus(frame.f_code)
    top = _int_at(iframe + _STACKTOP).value
    if top <= first:
        raise RuntimeError("top_address: the frame has no value on its stack")
    return iframe + _LOCALSPLUS + (top - 1) * _PTR


def _read_frame_function(frame):
    """The function object a frame runs (``_PyInterpreterFrame.f_func``), or None."""
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    p = _void_p_at(iframe).value
    return ctypes.cast(p, ctypes.py_object).value if p else None


#: The function object a frame runs, or None: read in C where the driver is built (once per frame entered).
frame_function = _c_frame_function if _c_frame_function is not None else _read_frame_function
