"""CPython 3.12 capture backend: ``sys.monitoring`` (PEP 669) events + ctypes stack reads.

Also the engine of the 3.13 backend (``_py313`` re-exports it after checking its own
layout), since both versions hook execution the same way.

Hooking. Legacy ``f_trace_opcodes`` delivers no opcode events on 3.12.1/3.13.0, so the
backend claims a ``sys.monitoring`` tool id and listens to

* ``PY_START``/``PY_RESUME``/``PY_THROW`` (global): a frame starts or resumes, ask
  ``hooks.enter_frame``; an accepted frame's code gets local ``INSTRUCTION``,
  ``PY_RETURN`` and ``PY_YIELD`` events;
* ``INSTRUCTION`` (local): an instruction of an accepted frame is about to run;
* ``PY_RETURN``/``PY_YIELD`` (local), ``PY_UNWIND`` (global): the frame leaves;
* ``RAISE`` (global): an exception is raised in, or propagates into, a captured frame.

These reproduce the ``sys.settrace`` events the 3.11 backend relies on ("call" on
each start and resume, "return" on return, yield and unwind, "exception" on raise
and propagation; re-raises are not reported, as with settrace). Monitoring events are
per code object and process-wide, while the hooks decide per frame and per thread:
events of frames the hooks did not accept (another thread, a recursive call the
hooks rejected, a generator's prologue before its first ``RESUME``) are ignored.
Callbacks do not fire while a callback runs, so the hooks' own code is never captured.
Unlike settrace on 3.10/3.11, no instruction event is delivered for ``RESUME`` or for
the prologue before it (``MAKE_CELL``, ``COPY_FREE_VARS``, ``RETURN_GENERATOR``): the
frame is only announced by ``PY_START`` at its ``RESUME``.

Reading the stack. ``PyFrameObject.f_frame`` (third pointer field) points to the
``_PyInterpreterFrame`` (Include/internal/pycore_frame.h): seven pointers, the
instruction pointer, ``int stacktop``, ``uint16 return_offset``, ``char owner``, then
``localsplus[]``: fast locals, cells, free variables, then the value stack. The
interpreter does not save ``stacktop`` before ``INSTRUCTION`` events (it reads -1),
so the depth comes from :func:`._stackdepth.stack_depths`; the slots
``localsplus[nlocalsplus : nlocalsplus + depth]`` are the live stack.

Failure. If the analysis rejects a code object the hooks accepted, the capture stops
(see ``_Session.abort``) rather than raise inside the user's program or read a guessed
stack; :data:`last_error` says why.
"""
from __future__ import annotations

import ctypes
import logging
import sys
import threading
import weakref
from types import CellType, CodeType, FunctionType

from . import NULL
from ._stackdepth import StackDepthError, stack_depths

_log = logging.getLogger("magpy.capture")

if not hasattr(sys, "monitoring"):
    raise ImportError("the sys.monitoring capture backend needs CPython 3.12+")

_PTR = ctypes.sizeof(ctypes.c_void_p)
_F_FRAME = 3 * _PTR          # PyFrameObject: ob_refcnt, ob_type, f_back, f_frame
_F_CODE = 0                  # _PyInterpreterFrame.f_code (3.12) / f_executable (3.13)
_F_FUNCOBJ = 2 * _PTR        # _PyInterpreterFrame.f_funcobj
_STACKTOP = 8 * _PTR
_LOCALSPLUS = 9 * _PTR

_void_p_at = ctypes.c_void_p.from_address
_get_ident = threading.get_ident
_getframe = sys._getframe

_mon = sys.monitoring
_E = _mon.events
_LOCAL_EVENTS = _E.INSTRUCTION | _E.PY_RETURN | _E.PY_YIELD
_GLOBAL_EVENTS = _E.PY_START | _E.PY_RESUME | _E.PY_THROW | _E.PY_UNWIND | _E.RAISE
_TOOL_NAME = "magpy.capture"


def nlocalsplus(code: CodeType) -> int:
    """Number of ``localsplus`` slots before the value stack: locals, cells, free vars.

    An argument captured by an inner function is both a local and a cell and takes one
    slot (kind LOCAL|CELL); so do the hidden locals of 3.12's inlined comprehensions.
    """
    varnames = set(code.co_varnames)
    return code.co_nlocals + sum(1 for c in code.co_cellvars if c not in varnames) + len(code.co_freevars)


class _CodeInfo:
    """Per code object: where the stack starts, and its depth at each instruction offset."""

    __slots__ = ("stack_base", "depth")

    def __init__(self, code: CodeType):
        self.stack_base = _LOCALSPLUS + nlocalsplus(code) * _PTR
        depths = stack_depths(code)
        self.depth = [-1] * (len(code.co_code) // 2)
        for offset, d in depths.items():
            self.depth[offset // 2] = d


# Equal code objects (same source compiled twice) share bytecode, hence one _CodeInfo.
_infos: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_arrays: dict[int, tuple[type, type]] = {}


def _info(code: CodeType) -> _CodeInfo:
    info = _infos.get(code)
    if info is None:
        info = _infos[code] = _CodeInfo(code)
    return info


def _stack_address(frame, info: _CodeInfo) -> int:
    """Address of the first value-stack slot of a running ``frame``.

    Constant while the frame runs: a live ``_PyInterpreterFrame`` never moves (in the
    thread's frame stack, or inside its generator object).
    """
    return _void_p_at(id(frame) + _F_FRAME).value + info.stack_base


def _read_slots(address: int, depth: int) -> list:
    """The ``depth`` stack slots at ``address``, as new references; NULL slots as NULL."""
    if depth == 0:
        return []
    arrays = _arrays.get(depth)
    if arrays is None:
        arrays = _arrays[depth] = (ctypes.c_void_p * depth, ctypes.py_object * depth)
    ptrs = arrays[0].from_address(address)[:]
    if None in ptrs:
        objs = arrays[1].from_address(address)
        return [objs[i] if p else NULL for i, p in enumerate(ptrs)]
    return arrays[1].from_address(address)[:]


def _no_depth(code: CodeType, offset: int) -> RuntimeError:
    return RuntimeError(f"MagPy capture: no static stack depth for offset {offset} of {code.co_name} "
                        f"({code.co_filename}:{code.co_firstlineno}); the analysis thought it unreachable")


def top_address(frame) -> int:
    """Address of the top value-stack slot while ``frame`` is stopped at an ``INSTRUCTION`` event."""
    code = frame.f_code
    info = _info(code)
    depth = info.depth[frame.f_lasti >> 1]
    if depth <= 0:
        raise _no_depth(code, frame.f_lasti) if depth < 0 else RuntimeError("top_address: empty stack")
    return _stack_address(frame, info) + (depth - 1) * _PTR


def read_stack(frame) -> list:
    """Values on ``frame``'s value stack, bottom to top (NULL slots as :data:`NULL`).

    Valid only while ``frame`` is stopped at an ``INSTRUCTION`` event (inside
    ``hooks.instruction``): the depth is the static depth at ``frame.f_lasti``.
    """
    code = frame.f_code
    info = _info(code)
    depth = info.depth[frame.f_lasti >> 1]
    if depth < 0:
        raise _no_depth(code, frame.f_lasti)
    return _read_slots(_stack_address(frame, info), depth)


def _shared_cells(code: CodeType) -> tuple:
    """Slot indices of the names that are both locals and cells (an inlined comprehension's
    variable that a closure captures elsewhere in the function; an argument a closure captures)."""
    cells = set(code.co_cellvars)
    return tuple(i for i, name in enumerate(code.co_varnames) if name in cells)


def frame_locals(frame) -> dict:
    """``frame.f_locals``, read without crashing the interpreter. 3.12+ inlines comprehensions:
    a comprehension variable that a closure captures in one comprehension is a cell of the
    function, one slot of kind LOCAL|CELL, which another comprehension over the same name fills
    with a plain object while it runs; ``f_locals`` dereferences that object as a cell (a
    segmentation fault, 3.12 and 3.13). There the mapping is read from the slots: a cell's
    contents, any other object as it is."""
    code = frame.f_code
    shared = _shared_cells(code)
    if shared:
        base = _void_p_at(id(frame) + _F_FRAME).value + _LOCALSPLUS
        for i in shared:
            p = _void_p_at(base + i * _PTR).value
            if p and _void_p_at(p + _PTR).value != id(CellType):   # (ob_type, after ob_refcnt)
                return _slot_locals(code, base)
    return frame.f_locals


def _slot_locals(code: CodeType, base: int) -> dict:
    varnames = code.co_varnames
    names = [*varnames, *(c for c in code.co_cellvars if c not in set(varnames)), *code.co_freevars]
    cells = set(code.co_cellvars) | set(code.co_freevars)
    out = {}
    for name, v in zip(names, _read_slots(base, len(names))):
        if v is NULL:
            continue
        if name in cells and type(v) is CellType:
            try:
                v = v.cell_contents
            except ValueError:
                continue   # (an empty cell: unbound)
        out[name] = v
    return out


def stack_slot_ids(frame, n: int) -> list:
    """The raw contents (object addresses, None for NULL) of the ``n`` bottom slots of a
    suspended frame's value stack; no object is touched (compare, never dereference)."""
    if n <= 0:
        return []
    return list((ctypes.c_void_p * n).from_address(_stack_address(frame, _info(frame.f_code)))[:])


def frame_function(frame):
    """The function object a running frame executes (``_PyInterpreterFrame.f_funcobj``).

    None when the slot is empty or does not hold a function (a module or class body).
    """
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    p = _void_p_at(iframe + _F_FUNCOBJ).value
    fn = ctypes.cast(p, ctypes.py_object).value if p else None
    return fn if isinstance(fn, FunctionType) else None


class _Session:
    """One start()..stop() capture: the hooks, the thread, the frames the hooks accepted."""

    def __init__(self, hooks, tool: int):
        self.hooks = hooks
        self.tool = tool
        self.thread = _get_ident()
        self.accepted: dict = {}          # running frame -> (its _CodeInfo, its stack address)
        # Code objects with local events on, by identity: distinct code objects can
        # compare equal (same source compiled twice) and each needs its own events.
        self.instrumented: dict[int, CodeType] = {}

    # -- frame entry/exit -----------------------------------------------------------
    def on_start(self, code, offset):
        if _get_ident() != self.thread:
            return
        frame = _getframe(1)
        if self.hooks.enter_frame(frame):
            try:
                info = _info(code)
            except StackDepthError as e:
                self.abort(str(e))
                return
            self.accepted[frame] = (info, _stack_address(frame, info))
            if id(code) not in self.instrumented:
                self.instrumented[id(code)] = code
                _mon.set_local_events(self.tool, code, _LOCAL_EVENTS)
        else:
            self.accepted.pop(frame, None)

    def on_throw(self, code, offset, exc):
        self.on_start(code, offset)

    def on_return(self, code, offset, value):
        frame = _getframe(1)
        if self.accepted.pop(frame, None) is not None:
            self.hooks.leave_frame(frame, value)

    def on_unwind(self, code, offset, exc):
        if _get_ident() != self.thread:
            return
        frame = _getframe(1)
        if self.accepted.pop(frame, None) is not None:
            self.hooks.leave_frame(frame, None)

    def on_raise(self, code, offset, exc):
        if _get_ident() != self.thread:
            return
        frame = _getframe(1)
        if frame in self.accepted:
            self.hooks.exception(frame, exc)

    # -- the hot path -----------------------------------------------------------------
    def on_instruction(self, code, offset):
        frame = _getframe(1)
        entry = self.accepted.get(frame)
        if entry is not None:
            depth = entry[0].depth[offset >> 1]
            if depth < 0:
                self.abort(str(_no_depth(code, offset)))
                return
            self.hooks.instruction(frame, offset, _read_slots(entry[1], depth))

    def abort(self, problem: str) -> None:
        """Stop capturing for good: the stack of an accepted frame cannot be read exactly.

        Raising here would raise inside the user's program (where a ``try`` could even
        swallow it); instead the program runs on uncaptured, so the hooks never see the
        top frame return, and the problem is kept in :data:`last_error` and logged.
        """
        global last_error
        last_error = problem
        _log.warning("MagPy capture stopped: %s", problem)
        stop()

    def install(self) -> None:
        tool = self.tool
        for event, cb in ((_E.PY_START, self.on_start), (_E.PY_RESUME, self.on_start),
                          (_E.PY_THROW, self.on_throw), (_E.PY_RETURN, self.on_return),
                          (_E.PY_YIELD, self.on_return), (_E.PY_UNWIND, self.on_unwind),
                          (_E.RAISE, self.on_raise), (_E.INSTRUCTION, self.on_instruction)):
            _mon.register_callback(tool, event, cb)
        _mon.set_events(tool, _GLOBAL_EVENTS)

    def uninstall(self) -> None:
        tool = self.tool
        _mon.set_events(tool, 0)
        for code in self.instrumented.values():
            _mon.set_local_events(tool, code, 0)
        for event in (_E.PY_START, _E.PY_RESUME, _E.PY_THROW, _E.PY_RETURN, _E.PY_YIELD,
                      _E.PY_UNWIND, _E.RAISE, _E.INSTRUCTION):
            _mon.register_callback(tool, event, None)
        _mon.free_tool_id(tool)
        self.instrumented.clear()
        self.accepted.clear()


def _free_tool_id() -> int:
    for tool in (_mon.PROFILER_ID, 3, 4, _mon.DEBUGGER_ID, _mon.COVERAGE_ID, _mon.OPTIMIZER_ID):
        if _mon.get_tool(tool) is None:
            return tool
    used = {t: _mon.get_tool(t) for t in range(6)}
    raise RuntimeError(f"MagPy capture needs a free sys.monitoring tool id; all are in use: {used}")


_session: _Session | None = None
last_error: str | None = None   # why the last capture stopped by itself, if it did


def start(hooks) -> None:
    """Claim a monitoring tool id and start capturing on this thread.

    A capture already running is stopped first (like re-installing a settrace tracer).
    """
    global _session, last_error
    if _session is not None:
        stop()
    last_error = None
    tool = _free_tool_id()
    _mon.use_tool_id(tool, _TOOL_NAME)
    session = _Session(hooks, tool)
    try:
        session.install()
    except BaseException:
        session.uninstall()
        raise
    _session = session


def stop() -> None:
    """Stop capturing and release the monitoring tool id."""
    global _session
    session, _session = _session, None
    if session is not None:
        session.uninstall()


def check_layout() -> None:
    """Fail at import when the interpreter frame does not look like the expected layout."""
    frame = sys._getframe()
    iframe = _void_p_at(id(frame) + _F_FRAME).value
    if not iframe or _void_p_at(iframe + _F_CODE).value != id(frame.f_code):
        raise ImportError(f"unexpected _PyInterpreterFrame layout on Python {sys.version.split()[0]}")


if sys.version_info[:2] == (3, 12):
    check_layout()
