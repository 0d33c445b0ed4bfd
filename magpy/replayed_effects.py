"""Outside effects the mock replays instead of splitting the program (paper §5.3.1).

``print(...)``, a logging call (``log.info("loss %.4f", loss.item())``) or ``time.sleep(s)``
is a dynamic operation: it must run on every call, with the call's values. The paper splits
the program there (the code before is one graph, the operation runs, the code after is the
next graph). These operations hand nothing back that the program goes on with (they return
``None``) and change no state the program reads later, so the mock can run them *after* the
graph, in program order among themselves and among the writes it replays, with the values the
graph computed (numbers and text read from tensors are graph outputs, tensors are copies taken
where the program printed): the output is the same as the split program's and the record keeps
one graph. Where one can raise (:func:`may_raise`), eager made the writes before it and none
after: so does the mock, or the record is refused (:func:`magpy.codegen.mock.in_program_order`).
A ``print`` to a file whose ``write`` is Python code is not replayed (:func:`native_stream`).

What the monitor hands over (``Monitor.effects``): the callable, its arguments as kinds
(``value``: a constant or a tracked value the graph computes, ``node``: a tensor copy the
graph outputs, ``ref``: an outside object guarded by identity, such as a file or a logger),
and for logging the user's file, line and function. A logging call finds its caller by
walking the stack (``%(funcName)s``, ``%(lineno)d``, ``%(pathname)s``): the mock calls it
through a *trampoline* whose code object carries the user's file name, line and function
name, so the record says what the eager call would have said.
"""
from __future__ import annotations

import functools
import keyword
import logging
import sys
import time
import types
import warnings
from collections.abc import Callable
from typing import Any

#: Logger methods replayed (``Logger.warn`` and ``exception`` are left out: the first warns about
#: itself, the second reads the exception being handled, which the mock has not).
LOG_METHODS = frozenset({logging.Logger.debug, logging.Logger.info, logging.Logger.warning,
                         logging.Logger.error, logging.Logger.critical, logging.Logger.log})

#: The logging module's functions of the root logger.
LOG_FUNCTIONS = frozenset({logging.debug, logging.info, logging.warning, logging.error,
                           logging.critical, logging.log})

#: Keyword arguments of a logging call the mock can repeat, with the values it accepts.
_LOG_KWARGS = {"exc_info": (None, False), "stack_info": (False,), "stacklevel": (1,), "extra": (None,)}


def log_call(fn: Any) -> bool:
    """Is ``fn`` a logging call the mock can replay (a Logger method bound to a logger, or the
    logging module's function)?"""
    if type(fn) is types.FunctionType:
        return fn in LOG_FUNCTIONS or fn in LOG_METHODS   # (a method called unbound: the logger comes first)
    return type(fn) is types.MethodType and fn.__func__ in LOG_METHODS and isinstance(fn.__self__, logging.Logger)


def log_kwargs_ok(kwargs: dict) -> bool:
    """Only keyword arguments whose meaning does not depend on where the call runs from."""
    return all(k in _LOG_KWARGS and any(v is a or (type(v) is type(a) and v == a) for a in _LOG_KWARGS[k])
               for k, v in kwargs.items())


def warn_call(fn: Any) -> bool:
    """Is ``fn`` ``warnings.warn`` (replayed through the warnings machinery on every call: the
    filters and the registry the call finds decide whether it shows, is dropped or raises)?"""
    return fn is warnings.warn


def replay_warning(message: Any, category: Any, filename: str, lineno: int, module_globals: dict) -> None:
    """What ``warnings.warn(message, category)`` does once it found its frame (CPython's
    ``setup_context``): the module name and registry from the frame's globals, then
    ``warn_explicit`` with the filters in force now."""
    if isinstance(message, Warning):
        category = message.__class__
    elif category is None:
        category = UserWarning
    registry = module_globals.get("__warningregistry__")
    if registry is None:
        registry = module_globals["__warningregistry__"] = {}
    module = module_globals.get("__name__", "<string>")
    if module is not None and not isinstance(module, str):
        module = "<string>"
    warnings.warn_explicit(message, category, filename, lineno, module, registry)


class OutsideFrame(ValueError):
    """The warning names a frame above the compiled call (``stacklevel=2`` in ``forward``): its
    location in eager is not one the record can name."""


def warning_effect(c: Any, fs: Any, offset: int, replayed: Callable, from_outside: Callable, frames: dict) -> tuple:
    """The effect the mock replays for the call ``c`` of ``warnings.warn`` at ``offset`` of the
    frame ``fs`` (in the form ``Monitor.effects`` holds): :func:`replay_warning` from the
    frame the warning names (``stacklevel``), which must be one of the call's own (``frames``: by
    id); ``replayed`` gives how the mock hands the message over (the run's ``replay_arg``).
    Raises ValueError (why, in words) if the warning cannot be repeated so."""
    names = ("message", "category", "stacklevel", "source")
    args, kwargs, frame, ins = c.args, c.kwargs, fs.frame, fs.instrs.get(offset)
    bound = dict(zip(names, args))
    bad = len(args) > len(names) or any(k not in names or k in bound for k in kwargs)
    bound.update(kwargs)
    message, category, stacklevel = bound.get("message"), bound.get("category"), bound.get("stacklevel", 1)
    if bad or "message" not in bound:
        raise ValueError("has arguments MagPy does not repeat")
    if bound.get("source") is not None:
        raise ValueError("names a source object")
    if type(stacklevel) is not int:
        raise ValueError("has a stack level that is not a constant number")
    if category is not None and not (isinstance(category, type) and issubclass(category, Warning)
                                     and (category.__module__ == "builtins" or from_outside(category))):
        raise ValueError("has a category that is not a warning class from outside")
    msg = replayed(message) if isinstance(message, str) else None
    if msg is None:
        raise ValueError("has a message that is not text")
    line = ins.line if ins is not None and ins.line else frame.f_lineno
    for _ in range(max(stacklevel, 1) - 1):
        frame = frame.f_back
        if frame is None:
            break
        line = frame.f_lineno
    if frame is None or id(frame) not in frames:
        raise OutsideFrame("names a frame outside the compiled call (its stack level)")
    return (replay_warning, [msg, ("ref", category) if category is not None else ("value", None),
                             ("value", frame.f_code.co_filename), ("value", line), ("ref", frame.f_globals)], {}, None)


def may_raise(fn: Any, kwargs: dict) -> bool:
    """Could the replayed call ``fn`` (with ``kwargs`` in the form ``Monitor.effects`` holds) raise
    on some call? A ``print`` to a file of the user's (closed, a broken pipe, a full disk), a
    warning (a filter turns it into an error), a sleep (a negative length). Taken not to: a
    ``print`` to the standard streams, a logging call (logging's handlers report their own
    errors, ``Handler.handleError``, and go on). The mock replays effects and writes in program
    order; where it cannot (:func:`magpy.codegen.mock.in_program_order`), one that may raise
    refuses the record."""
    if log_call(fn):
        return False
    if fn is print:
        kind, f = kwargs.get("file", ("value", None))
        return not (f is None or f is sys.stdout or f is sys.stderr or f is sys.__stdout__ or f is sys.__stderr__)
    return True


def native_stream(f: Any) -> bool:
    """Are ``f``'s ``write`` and ``flush`` (what ``print(..., file=f)`` calls) its class's methods
    in C (a file, ``io.StringIO``)? Python ones (a collector appending to a list) may change
    state the call reads after the print, which a replay after the graph would not show it."""
    own = getattr(f, "__dict__", None) or {}
    return all(name not in own and isinstance(getattr(type(f), name, None), _C_METHODS) for name in ("write", "flush"))


_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinFunctionType)


def sleep_call(fn: Any) -> bool:
    return fn is time.sleep


@functools.lru_cache(maxsize=512)
def trampoline(filename: str, lineno: int, name: str) -> Callable:
    """A function ``t(fn, args, kwargs)`` that calls ``fn(*args, **kwargs)`` from a frame whose code
    says ``filename``, ``lineno`` and function ``name`` (the user's, where the program made the call)."""
    ident = name if name.isidentifier() and not keyword.iskeyword(name) else "_magpy_caller"
    src = "\n" * max(lineno - 1, 0) + f"def {ident}(fn, args, kwargs): return fn(*args, **kwargs)\n"
    ns: dict = {}
    exec(compile(src, filename, "exec"), ns)   # noqa: S102 - our own one-line source
    fn = ns[ident]
    if ident != name:
        changes = {"co_name": name}
        if hasattr(fn.__code__, "co_qualname"):
            changes["co_qualname"] = name
        fn.__code__ = fn.__code__.replace(**changes)
    return fn
