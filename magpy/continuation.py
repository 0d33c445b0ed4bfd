"""Running the code after a split (:mod:`magpy.splits`): the continuation functions and the loop
that runs them.

A split point's *continuation* is one generated Python function of the frame images and D's
result that calls the resume functions of the frames, innermost first (:func:`continuation_source`),
compiled with MagPy like any function. :func:`make_continuation` makes it (and, for a loop's step,
the one for an exhausted iterator) and the *step* that calls D and then it. A split record's
matched path (:func:`split_matched_path`) is its prefix's guard and mock, then the step.

Steps run in a loop (:func:`drive`), not inside one another: a loop over an iterator from outside
the call splits at every step, and each step's continuation ends at the next step.
"""
from __future__ import annotations

import threading
import types
from typing import Any

from .cache import MISS, UNHELD

SplitPoint = Any   # (magpy.splits.SplitPoint, which imports this module)


def continuation_source(split: SplitPoint, mode: str = "result") -> str:
    """Source of a continuation function of ``split``: its parameters are the image entries after
    D's operands, then D's result where the innermost frame takes it. ``mode``: ``"result"``, D
    returned; ``"raising"``, D raised (its last parameter is the exception, which the innermost
    frame raises at D, ``_x0``, where a handler of that frame covers D, else lets it go on to the
    frames that called it); ``"ended"``, D was a loop's step and the iterator is exhausted (``_n0``).

    Where a handler of an outer frame covers its call (``with torch.no_grad(): y = self.helper(x)``),
    the frames it called run inside ``try``: an exception they raise (D's, or one raised after D)
    goes to that frame, raised at its call (``_x<k>``), so its ``except``, ``finally`` and
    ``__exit__`` run as in eager; called outside the ``except`` clause, so what the frame does next
    does not run while handling that exception (no ``__context__`` eager would not set)."""
    first = split.frames[0]
    takes = first.takes_result if mode == "result" else mode == "raising"
    names = [f"i{k}" for k in range(split.d_slots, split.n_values)] + (["d"] if takes else [])
    if mode == "ended":
        body = [f"v = _n0({', '.join(split.ended.params)})"]
    elif mode == "raising":
        body = [f"v = _x0({', '.join(first.params + ('d',))})" if first.raising is not None else "raise d"]
    else:
        body = [f"v = _r0({', '.join(first.params + (('d',) if takes else ()))})"]
    for k, f in enumerate(split.frames[1:], 1):
        resumed = f"_r{k}({', '.join(f.params + (('v',) if f.takes_result else ()))})"
        if f.raising is None:
            body.append(f"v = {resumed}")
            continue
        body = ["try:", *("    " + ln for ln in body), "except BaseException as _e:", "    v, _raised = _e, True",
                "else:", "    _raised = False",
                f"v = _x{k}({', '.join(f.params + ('v',))}) if _raised else {resumed}"]
    # (the last call returned as is: a continuation that splits again has nothing to resume after it)
    lines = list(split.prelude) + body[:-1] + [f"return {body[-1][4:]}" if body[-1].startswith("v = ") else body[-1]]
    return f"def resumed({', '.join(names)}):\n" + "".join(f"    {ln}\n" for ln in lines)


def make_continuation(split: SplitPoint, compile_fn: Any) -> tuple:
    """``(step, resumed, *more)``: ``step(image)`` calls D and the compiled continuation that goes
    on from its result (run it with :func:`drive`); ``resumed`` is that compiled continuation
    (``compile_fn(function)``); ``more``: the one for an exhausted iterator, where D is a loop's step."""
    plain = _continuation_function(split, "result")
    plain.__qualname__ = f"{split.frames[-1].resume.__code__.co_name} after `{split.op}` ({split.where})"
    resumed = compile_fn(plain)
    ended = None
    if split.ended is not None:
        plain = _continuation_function(split, "ended")
        plain.__qualname__ = f"{split.frames[-1].resume.__code__.co_name} after the loop ({split.where})"
        ended = compile_fn(plain)
    d_call, start = split.d_call, split.d_slots
    if d_call[0] == "ex":
        def d(image):
            return image[0](*image[1], **image[2])
    elif not d_call[2]:
        def d(image):
            return image[0](*image[1:start])
    else:
        npos, kwnames = d_call[1], d_call[2]
        end = 1 + npos

        def d(image):
            return image[0](*image[1:end], **dict(zip(kwnames, image[end:start])))
    raised = None
    if any(f.raising is not None for f in split.frames):
        # D's exception goes to a handler of the frames, through a continuation run as plain
        # Python: the exception object and the handler's path are not part of a record.
        raised = _continuation_function(split, "raising")
    step = _step(d, resumed, ended, raised, start, split.frames[0].takes_result)
    return (step, resumed) if ended is None else (step, resumed, ended)


def _continuation_function(split: SplitPoint, mode: str) -> types.FunctionType:
    src = continuation_source(split, mode)
    ns = {"__name__": "<continuation>", **{f"_r{k}": f.resume for k, f in enumerate(split.frames)},
          **{f"_x{k}": f.raising for k, f in enumerate(split.frames) if f.raising is not None}}
    if split.ended is not None:
        ns["_n0"] = split.ended.resume
    exec(compile(src, f"<magpy resumed after {split.op} at {split.where}>", "exec"), ns)
    fn = ns.pop("resumed")
    fn.magpy_pending = split   # (a split in it goes on with these frames: magpy.splits)
    return fn


def plain_continuation(split: SplitPoint) -> Any:
    """``continue(image)`` with the continuation run as plain Python (no compilation): how a
    monitor run that stopped the program at D finishes the call when no record could be built."""
    step = make_continuation(split, lambda fn: fn)[0]
    return lambda image: drive(step, image)


# -- running continuations without nesting a call per split -----------------------------------------
# A loop over an iterator from outside splits at every step, and each step's continuation ends at
# the next step: called from inside one another, a loop of n steps would nest n calls deep. The
# compiled continuation is called last (a tail call), so a split record it hits while a step waits
# for it does not go on itself: it hands the next step back (:class:`Again`) to the loop in
# :func:`drive`, which runs it. ``_TAIL.cont`` is the continuation a step is calling.
_TAIL = threading.local()


class Again:
    """A split record's next step, handed back to :func:`drive` instead of run from inside it."""

    __slots__ = ("step", "image")

    def __init__(self, step: Any, image: Any) -> None:
        self.step, self.image = step, image


def drive(step: Any, image: Any) -> Any:
    """Run ``step(image)`` and every step handed back by the continuations it calls; the call's result."""
    while True:
        out = step(image)
        if type(out) is not Again:
            return out
        step, image = out.step, out.image


def in_tail_call(cont: Any) -> bool:
    """Is ``cont`` being called by a step, as its last act (see :func:`drive`)?"""
    return getattr(_TAIL, "cont", None) is cont


def split_matched_path(owner: Any, step: Any, prefix_run: Any, prefix_mock: Any, hit: Any) -> tuple[Any, Any]:
    """``(run, mock)`` of a split record of ``owner`` (a compiled callable) from its prefix's: the
    prefix gives the image, then ``step`` goes on from it (``hit()`` counts it). Where ``owner`` is
    a continuation a step is calling last (:func:`in_tail_call`), the next step is handed back to
    that step's loop instead (:class:`Again`)."""
    def run(args, kwargs):
        tail = in_tail_call(owner)
        out = prefix_run(args, kwargs)
        if out is MISS or out is UNHELD:
            return out
        hit()
        return Again(step, out) if tail else drive(step, out)

    def mock(fetched):
        tail = in_tail_call(owner)
        out = prefix_mock(fetched)
        if out is UNHELD:
            return out
        hit()
        return Again(step, out) if tail else drive(step, out)
    return run, mock


def _call_last(cont: Any, *args: Any) -> Any:
    _TAIL.cont = cont
    try:
        return cont(*args)
    finally:
        _TAIL.cont = None


def _step(d: Any, resumed: Any, ended: Any, raised: Any, start: int, takes_result: bool) -> Any:
    """One step: D, then the continuation that goes on from what it gave (its result, the end of
    the loop it steps) or, where a handler of the frames covers it, from its exception (``raised``:
    the frame goes on by raising it at D or at the call that led to D, with the same image)."""
    def step(image):
        try:
            r = d(image)
        except BaseException as e:   # (eager would hand KeyboardInterrupt to the frame's handler too)
            if raised is None:
                raise
            exc = e
        else:
            if ended is not None and r is END:
                return _call_last(ended, *image[start:])
            return _call_last(resumed, *image[start:], r) if takes_result else _call_last(resumed, *image[start:])
        # (without this helper's frames in the traceback: the frame raises as if D raised there)
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code in (step.__code__, d.__code__):
            tb = tb.tb_next
        return raised(*image[start:], exc.with_traceback(tb))
    return step


END = object()   # (what `for_iter_next` gives once the iterator is exhausted)


def for_iter_next(it: Any) -> Any:
    """What a loop's ``FOR_ITER`` does with an iterator: its next item, or ``END`` once exhausted."""
    try:
        return next(it)
    except StopIteration:
        return END
