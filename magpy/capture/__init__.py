"""Execution-state capture (paper §5.1): the real CPython interpreter, observed per instruction.

The monitor run needs, for every bytecode instruction of the user program, the
operation and the values it consumes and produces. CPython does not hand these out,
so this package reads them from the interpreter frame while the instruction is
about to run: the value stack holds the inputs; the next event in the same frame
shows the outputs.

Everything that depends on the CPython version lives in one backend module per
version (``_py310``, ``_py311``, ``_py312``, ``_py313``); this module picks one at
import and checks it against a probe function, so an unsupported interpreter fails
at ``magpy.compile`` time with a clear message instead of reading garbage.

A backend provides:

``start(hooks)`` / ``stop()``
    begin/end capture on the current thread. ``hooks`` implements :class:`CaptureHooks`.
``read_stack(frame) -> list``
    the frame's value stack, bottom to top, :data:`NULL` for empty slots; only valid
    inside ``hooks.instruction``.
``top_address(frame)``
    the address of the top value-stack slot, under the same condition (see :func:`replace_top`).
``frame_function(frame)``
    the function object a frame runs, or None when it cannot be told (3.10 frames do not
    record it: that backend also takes ``announce_call(fn)``, the callee the monitor sees).

Example::

    class Printer:
        def enter_frame(self, frame): return frame.f_code.co_name == "f"
        def instruction(self, frame, offset, stack): print(offset, stack)
        def leave_frame(self, frame, value): pass
        def exception(self, frame, exc): pass

    capture.start(Printer()); f(1, 2); capture.stop()
"""
from __future__ import annotations

import ctypes
import sys
import sysconfig
import types
from typing import Any, Protocol


class _Null:
    """Stands for a NULL slot on the value stack (e.g. ``LOAD_GLOBAL NULL + f``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


NULL: Any = _Null()


class CaptureHooks(Protocol):
    """What the capture backend calls back into (implemented by the monitor run)."""

    def enter_frame(self, frame: Any) -> Any:
        """A new Python frame starts; return True to capture its instructions, or the frame's
        :func:`quiet_map` to capture them quiet from the first (see :meth:`instruction`)."""

    def instruction(self, frame: Any, offset: int, stack: list) -> Any:
        """The instruction at ``offset`` is about to run; ``stack`` is the value stack. May return
        the frame's :func:`quiet_map`: until the frame's next delivered event, a backend that
        filters skips the events at its quiet offsets while :func:`set_quiet` allows it."""

    #: ``(code ids, file names)`` whose frames ``enter_frame`` refuses whatever else holds: a
    #: backend that can refuses them without calling it (optional)
    skipped: tuple[frozenset, frozenset]

    def leave_frame(self, frame: Any, value: Any) -> None:
        """A captured frame returns ``value`` (or exits by exception: value is None)."""

    def exception(self, frame: Any, exc: BaseException) -> None:
        """An exception was raised (or propagated) in a captured frame."""


class UnsupportedPython(RuntimeError):
    """The running CPython version has no capture backend."""


SUPPORTED = ((3, 10), (3, 11), (3, 12), (3, 13))


def _load_backend():
    ver = sys.version_info[:2]
    if sys.implementation.name != "cpython" or ver not in SUPPORTED:
        raise UnsupportedPython(
            f"MagPy captures execution state on CPython {', '.join(f'{a}.{b}' for a, b in SUPPORTED)}; "
            f"this is {sys.implementation.name} {sys.version.split()[0]}"
        )
    import importlib

    return importlib.import_module(f"._py{ver[0]}{ver[1]}", __name__)


_backend = None
_backend_error: Exception | None = None
try:
    _backend = _load_backend()
except Exception as e:  # noqa: BLE001 - reported at first use, not at import
    _backend_error = e
_announce = getattr(_backend, "announce_call", None)
_unannounce = getattr(_backend, "announce_unknown", None)


def backend():
    """The version-specific backend module; raises :class:`UnsupportedPython` if none."""
    if _backend is None:
        if isinstance(_backend_error, UnsupportedPython):
            raise _backend_error
        raise UnsupportedPython(f"MagPy capture backend failed to load: {_backend_error!r}")
    return _backend


def start(hooks: CaptureHooks) -> None:
    """Start capturing on this thread; see :class:`CaptureHooks`."""
    backend().start(hooks)


def stop() -> None:
    """Stop capturing on this thread."""
    backend().stop()


def announce_call(fn: Any) -> None:
    """The monitor is about to call the Python function ``fn``. A backend whose frames do not
    record their function (3.10) uses this to answer ``frame_function``; others ignore it."""
    if _announce is not None:
        _announce(fn)


def announce_callee(fn: Any) -> None:
    """Tell the backend which Python function runs in the frame that comes next, for a callee
    of any kind (a bound method, a class, a module, a callable object): 3.10's frames do not
    record it (:func:`announce_call`)."""
    if _announce is None:
        return
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    elif isinstance(fn, type):
        fn = fn.__dict__.get("__init__") or getattr(fn, "__init__", None)
    elif _is_module(fn):
        fn = fn.__dict__.get("forward") or getattr(type(fn), "forward", None)
    elif not isinstance(fn, types.FunctionType):
        fn = type(fn).__dict__.get("__call__") or getattr(type(fn), "__call__", None)  # noqa: B004
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        _announce(fn)


def announce_operator(symbol: str, a: Any, b: Any) -> None:
    """Tell the backend which Python functions an operator ``a <symbol> b`` may enter from C
    (3.10; see :func:`announce_call`): the left operand's dunder, the right one's reflected
    dunder and, for ``x op= y``, the in-place dunder. Functions that share one code object but
    are different objects (``setattr(C, name, lambda ..., m=name: ...)`` for several names) are
    not announced: the frame alone could not say which one runs, so it stays unknown."""
    if _announce is None:
        return
    from ..objmodel import operator_lookups  # (only on 3.10)

    found = [getattr(type(v), name, None) for v, names in operator_lookups(symbol, a, b) for name in names]
    by_code: dict = {}
    for fn in found:
        if isinstance(fn, types.FunctionType):
            by_code.setdefault(fn.__code__, set()).add(fn)
    for fns in by_code.values():
        if len(fns) == 1:
            _announce(next(iter(fns)))
        else:
            announce_unknown(next(iter(fns)).__code__)   # (and forget an earlier announcement)


def _is_module(v: Any) -> bool:
    import torch  # (the capture itself needs no torch)

    return isinstance(v, torch.nn.Module)


def frame_locals(frame: Any) -> Any:
    """``frame.f_locals``, where this CPython can read it safely (see ``_py312.frame_locals``:
    3.12+ crashes on a comprehension variable that is also a cell); the mapping otherwise."""
    fn = getattr(backend(), "frame_locals", None) if _backend is not None else None
    return frame.f_locals if fn is None else fn(frame)


def read_stack(frame: Any) -> list:
    """The value stack of ``frame`` (bottom to top); valid only during ``hooks.instruction``."""
    return backend().read_stack(frame)


def stack_slot_ids(frame: Any, n: int) -> list | None:
    """The ids of what the ``n`` bottom slots of a frame suspended at a call hold (raw slot
    contents: compared with ``id()``, never dereferenced), or None where this CPython's backend
    cannot tell (3.10)."""
    fn = getattr(backend(), "stack_slot_ids", None)
    return None if fn is None else fn(frame, n)


#: Where a set's table fields start: after the object header (absent in free-threaded builds,
#: whose sets are laid out otherwise). ``PySetObject`` is the same in CPython 3.10-3.13:
#: ``fill, used, mask, table, hash, finger`` then the small table.
_SET_FIELDS = None if sysconfig.get_config_var("Py_GIL_DISABLED") else object.__basicsize__


def set_layout(s: Any) -> tuple | None:
    """Everything in a set's hash table that decides what a program sees of it, now and after
    later changes: ``fill`` (slots used, removed ones included: when it grows), ``used``,
    ``mask`` (the table size), ``finger`` (where ``pop()`` searches from) and the key of every
    slot by address (empty, the removed-entry marker, or an element). Two sets with the same
    layout iterate, grow and pop alike; equal sets need not (the order depends on the history
    of insertions, removals and resizes). None where this build's layout is not known."""
    if _SET_FIELDS is None or type(s) not in (set, frozenset) and not isinstance(s, (set, frozenset)):
        return None
    fill, used, mask, table, _hash, finger = (ctypes.c_ssize_t * 6).from_address(id(s) + _SET_FIELDS)
    if not 0 <= used <= fill <= mask or mask & (mask + 1) or not table:
        return None   # (not the layout this reads: refuse rather than compare garbage)
    slots = (ctypes.c_void_p * (2 * (mask + 1))).from_address(table)   # (key, hash) per slot
    return fill, used, mask, finger, tuple(slots[::2])


_incref = ctypes.pythonapi.Py_IncRef
_incref.argtypes = [ctypes.py_object]
_decref = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(("Py_DecRef", ctypes.pythonapi))


def replace_top(frame: Any, value: Any, below: int = 0) -> None:
    """Put ``value`` in place of the top of ``frame``'s value stack (or of the slot ``below``
    slots under it); valid only during ``hooks.instruction``. The program then goes on with
    ``value`` where the previous instruction left its result: the monitor uses it to give a
    result a fresh identity (``max(a, b)`` returns one of its arguments; see
    :mod:`magpy.monitor.scalars`)."""
    slot = ctypes.c_void_p.from_address(backend().top_address(frame) - below * ctypes.sizeof(ctypes.c_void_p))
    old = slot.value
    _incref(value)
    slot.value = id(value)
    if old:
        _decref(old)


_probe_ok: bool | None = None


def check_supported() -> None:
    """Verify, once, that stack reads give the values a probe function really has.

    Raises :class:`UnsupportedPython` when the interpreter layout is not what the
    backend expects, so that nothing downstream ever reads a wrong stack.
    """
    global _probe_ok
    if _probe_ok:
        return
    from ._probe import run_probe

    problem = run_probe()
    if problem is not None:
        _probe_ok = False
        raise UnsupportedPython(f"MagPy capture self-check failed on Python {sys.version.split()[0]}: {problem}")
    _probe_ok = True


def quiet_map(flags: bytes) -> Any:
    """The backend's form of a code object's quiet instructions (``flags[offset]``: from which
    :func:`set_quiet` level on the monitor needs no event there while the frame is quiet, 0 for
    never; see :meth:`CaptureHooks.instruction`), or None where the backend delivers every event."""
    fn = getattr(backend(), "quiet_map", None)
    return None if fn is None else fn(flags)


def set_quiet(level: int) -> None:
    """Which quiet instructions quiet frames may skip now: those flagged 1..``level`` (0: every
    event of every frame is delivered, whatever the frames' last answers were)."""
    fn = getattr(_backend, "set_quiet", None)
    if fn is not None:
        fn(level)


def set_opaque(flag: bool) -> None:
    """While ``flag`` holds, the hooks refuse every frame that starts (the run is inside a call it
    takes whole): a backend that can may refuse them without calling ``enter_frame``."""
    fn = getattr(_backend, "set_opaque", None)
    if fn is not None:
        fn(flag)


def wake(frame: Any) -> None:
    """Deliver every event of ``frame`` again, until its ``instruction`` hook answers otherwise."""
    fn = getattr(_backend, "wake", None)
    if fn is not None:
        fn(frame)


def announce_unknown(code: Any) -> None:
    """The next frame running ``code`` may belong to one of several functions: forget any
    function announced for it, so the backend searches (and gives up when it cannot tell)."""
    if _unannounce is not None:
        _unannounce(code)
