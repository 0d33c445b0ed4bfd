"""Splitting a call at a dynamic operation and resuming after it (paper §5.3.1).

Some operations cannot be part of a record: an unannotated native that receives tensors, a
write to a file, ``next()`` of an iterator from outside, a module with backward hooks. Before,
such an operation D sent the whole call to eager. Now the call is split at D:

1. *Prefix record.* When the monitor meets D (a call instruction it refuses, in frame F_k
   called from F_k-1 ... F_1), it takes a *frame image* of every frame: its live locals, its
   cells and its value stack (:class:`FrameImage`), with D's callable and arguments. Guard and
   mock are generated right there, as if the call returned the images: the mock runs the graph
   of the operators before D, replays the writes and prints made before D and rebuilds the
   images (graph outputs, guarded sources, constants, objects made in the call, each object
   once, so identity holds). Iterators in progress (the ``for`` around D) are rebuilt by the
   continuation from what they iterate and how far they got (a dict's: a new iterator over the
   same dict, so later writes are seen and a size change raises). Arguments of the call the
   run has not read yet are read (guarded) at the split: the continuation gets this call's.
   Cells made in the call that a closure made in the call shares with other frames of the split
   (``nonlocal``, captured values) are made again by the continuation, one per cell, and passed
   to the resume functions as cells: every resumed frame runs with this call's cells.
2. *Resume functions* (:mod:`magpy.bytecode.resume`). For each F_i a function made from F_i's
   code starts at the instruction after the call F_i was in (after D for F_k; after its
   ``POP_TOP`` when the value is dropped), with the image as arguments and the callee's result
   on top of the stack.
3. *The continuation* (:mod:`magpy.continuation`) is one generated Python function of all
   images and D's result::

       def resumed(i0, i1, ..., d):
           v = resume_k(<image of F_k>, d)
           v = resume_k-1(<image of F_k-1>, v)
           ...
           return resume_1(<image of F_1>, v)

   compiled with MagPy like any function (same backend and options): its records are guarded
   on what D produced and on the images, and a second dynamic operation in it splits again.
   The matched path of a split record is guard + mock (the prefix) → D with its real arguments
   → the continuation's own matched path. A frame that only returns what its call returns
   (``return self.helper(x)``) is left out. A split in a continuation resumes its frames from
   their original code and takes the frames the continuation has not resumed yet as they are
   (:func:`_pending_frames`), so meeting the same split point again gives the same key.
4. *The monitor run* stops the program at D (:class:`SplitHere`) and goes on from the frames'
   real values with D and the continuation, whose own monitor run follows in the same call.

5. *A handler of D's own frame* (``with torch.no_grad(): log.write(...)``, ``try: D() except``,
   ``finally``) covers D: the frame resumes *at* D. With D's result it goes on as above (the
   ``__exit__`` of the ``with`` is on its stack: a bound method of an object made in the call is
   looked up again on the rebuilt object, so the continuation's record is not guarded on which
   object it is); where D raises, a second resume function raises D's exception from an
   instruction the same handler covers (:func:`magpy.bytecode.resume.resume_code`), so the
   frame's ``except``, ``finally`` and ``__exit__`` run as in eager. That path runs as plain
   Python (an exception object is no record's input). The monitor run does not stop the program
   at such a D (:class:`SplitHere` would pass through those handlers): the call goes on eagerly
   and the continuation is monitored on the next call.

6. *A handler of an outer frame* covers the call that led to D (``with torch.no_grad(): y =
   self.helper(x)``): that frame gets a raising resume function too, at its call, and the
   continuation runs the frames it called inside ``try``, handing an exception they raise (D's,
   or one raised after D) to it (:func:`magpy.continuation.continuation_source`). As in 5, the
   monitor run does not stop the program at D.

A subscript with a tensor key that cannot be part of a record (a Python list indexed with a
tensor) splits as the call ``operator.getitem(container, key)``: the frame resumes after the instruction with the
item on its stack.

A ``for`` loop's step over an iterator from outside the call (``FOR_ITER``; a generator or an
iterator passed in or read from a global) splits as the call :func:`for_iter_next` ``(it)``: with
an item, the frame resumes after the ``FOR_ITER`` with the iterator and the item on its stack; at
the end of the iterator, a second continuation resumes it *at* the ``FOR_ITER`` with an empty
iterator in the iterator's slot (:attr:`SplitPoint.ended`), so the interpreter leaves the loop as
it does on each version. The next step splits the body's continuation at the same point: the
continuation made for it is used again (``magpy.api``), and steps run in a loop, not nested
(:func:`magpy.continuation.drive`). Where such a step cannot split, the call is dynamic, as before.

Where it stops (the call then runs eagerly, as before, with the reason): D is neither a call,
a subscript nor a loop's step (an attribute read); an outside iterator stepped where it was
passed on (a comprehension, a generator, a native); a frame between two monitored ones is not
``Module.__call__`` without hooks (a C function calling back, a class called for an instance);
a frame is a generator; a live local is unbound; the mock cannot rebuild an image value (a
closure or a module made in the call); the run follows sizes that change (lifting is given up
and the next run splits); a frame runs a closure made where MagPy did not follow it (its
cells cannot be told apart); D is a native ``__exit__`` (its ``with`` entered a native context manager, a lock, without a call
MagPy sees) or reads its caller's frame (``sys._getframe``, ``locals()``...: run from the
continuation it would see MagPy's frames); a frame handles an exception at its call (an
``except`` body, a ``finally`` run for an exception: resumed, it would go on with no exception
being handled, ``sys.exc_info()`` and ``log.exception()`` would not see this call's); CPython 3.10 (absolute jumps and ``SETUP_*`` blocks: no resume
functions).
"""
from __future__ import annotations

import _thread
import builtins
import gc
import operator
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch

from . import capture
from .breaks import SUBSCRIPT_EVENTS, NotSplit
from .bytecode import DECODER
from .bytecode.flow import flow_of
from .bytecode.resume import ResumeUnsupported, origin_of, passed_free_cells, resume_function, supported
from .capture import NULL
from .capture import backend as capture_backend
from .continuation import for_iter_next
from .global_state import global_hooks_present
from .graph import Unsupported
from .monitor.callbacks import APPLIER_CODE
from .monitor.elements import may_hold_tensors
from .objmodel import instance_dict, is_instance, module_has_hooks
from .realtype import callable_attr, class_owner

_CALL_EVENTS = frozenset({"CALL", "CALL_FUNCTION_EX"})
# A subscript D (`rows[t.argmax()]`: a Python list indexed with a tensor) splits as the call
# ``operator.getitem(container, key)``, which is what the instruction does; 3.12+'s ``BINARY_SLICE``
# (`words[:n]` with no slice object on the stack) as ``_get_slice(container, start, stop)``.


def _get_slice(container: Any, start: Any, stop: Any) -> Any:
    """What ``BINARY_SLICE`` does: ``container[start:stop]``."""
    return container[start:stop]


@dataclass(frozen=True)
class FrameImage:
    """How one frame resumes: its resume function and, per parameter, an expression of the
    continuation's source (``i5``: entry 5 of the image tuple the prefix's mock returns; ``None``
    for a local that is dead there; ``t2``: an iterator the continuation rebuilds). The callee's
    result (D's for the innermost frame) is the last argument."""

    resume: types.FunctionType
    params: tuple[str, ...]
    where: str
    takes_result: bool = True   # False: the call's value was dropped (``POP_TOP``), resumed after that
    raising: types.FunctionType | None = None   # where a handler of the frame covers the call: the
    #                                             frame going on by raising the call's exception there


@dataclass(frozen=True)
class SplitPoint:
    """A split found by a monitor run: its prefix's generated code and how to go on after D."""

    gen: Any                          # codegen.GeneratedCode of the prefix (returns the image tuple)
    frames: tuple[FrameImage, ...]    # innermost first
    prelude: tuple[str, ...]          # continuation lines that rebuild iterators made before D
    n_values: int                     # length of the image tuple
    d_call: tuple                     # ("call", n_pos, kw_names) or ("ex",): D's operands lead the image
    d_slots: int                      # how many image entries D's operands take
    op: str                           # D, as users name it
    where: str                        # file:line in function of D
    reason: str                       # why D cannot be part of a record
    abortable: bool = True            # may the monitor run stop the program at D (see SplitHere)?
    ended: FrameImage | None = None   # D is a loop's step (FOR_ITER): how the innermost frame goes on
    #                                   where the iterator is exhausted (the outer frames as ``frames``)

    @property
    def key(self) -> tuple:
        """What the continuation depends on: the frames' codes, resume points and layouts, and
        the globals and closure cells of the functions that ran them (two closures of one code
        are two continuations; the cells stay alive with the continuation, so ids are not reused)."""
        return tuple((f.resume.__code__, id(f.resume.__globals__), _closure_key(f.resume),
                      f.params, f.takes_result) for f in self.frames) + (self.d_call, self.prelude) \
            + ((self.ended.resume.__code__, self.ended.params) if self.ended is not None else ())

    def describe(self) -> str:
        return f"split at `{self.op}` ({self.where}): {self.reason}; the code after it is compiled on its own"


def _closure_key(fn: types.FunctionType) -> tuple:
    """The cells a resume function takes from its closure (those of the call, passed as
    arguments, are the continuation's own: they do not tell continuations apart)."""
    passed = passed_free_cells(fn.__code__)
    return tuple(id(c) for k, c in enumerate(fn.__closure__ or ()) if k not in passed)


def _where(code, frame, offset: int) -> str:
    ins = DECODER.instructions(code).get(offset)
    line = ins.line if ins is not None and ins.line else frame.f_lineno
    return f"{code.co_filename}:{line} in {code.co_name}"


def _name(fn: Any) -> str:
    return callable_attr(fn, "__qualname__") or callable_attr(fn, "__name__") or type(fn).__name__


def _callee_code(fn: Any) -> Any:
    """The code a call of ``fn`` runs in the frame it enters directly (None: not a Python function)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        return fn.__code__
    return None


def _module_forward_code(mod: Any) -> Any:
    """The code ``mod(x)`` runs through ``Module.__call__`` (no hooks), or None."""
    if not is_instance(mod, torch.nn.Module) or type(mod).__call__ is not torch.nn.Module.__call__:
        return None
    if module_has_hooks(mod) or global_hooks_present():
        return None
    fwd = (instance_dict(mod) or {}).get("forward", type(mod).forward)
    return _callee_code(fwd)


#: Locks, whose ``with`` entry (in C, no event) takes them: a split inside the block would
#: resume a continuation that releases a lock the record never took.
_LOCK_TYPES = (type(_thread.allocate_lock()), _thread.RLock)


def lock_held(mon: Any) -> str | None:
    """The type name of a lock some monitored frame holds in a ``with`` block it is inside
    of now, or None."""
    for fs in list(mon.frames.values()):
        if not fs.managers:
            continue
        at = fs.frame.f_lasti
        for start, end, entered in DECODER.with_ranges(fs.code):
            if start <= at < end and isinstance(fs.managers.get(entered), _LOCK_TYPES):
                return type(fs.managers[entered]).__qualname__
    return None


def take_split(mon: Any, fs: Any, call: tuple, reason: str, shape: tuple) -> SplitPoint:
    """The split at the call instruction ``call`` = ``(ins, stack, kw_names, assumptions so far)``
    of frame ``fs``, where the monitor broke with ``reason``; ``shape`` is the call shape of the
    run. Generates the prefix's guard and mock now. Raises :class:`NotSplit` with what prevents it."""
    from .codegen import generate
    from .trace import Trace

    if not supported():
        raise NotSplit("frames are resumed on CPython 3.11 to 3.13 only")
    ins, stack, kw_names, n_assumed = call
    if mon.follows_changing_numbers() or mon.loop_watcher.active_loops or mon.loop_watcher.counted:
        # A size that changes between calls may be held where the image cannot say so: a range
        # iterator's bounds, a sequence of unbound rows, a loop whose trip count is checked only
        # when it ends. The next monitor run guards sizes (magpy.api) and splits then.
        mon.split_wants_fixed_sizes = True
        raise NotSplit("the run follows sizes or counts that change between calls; they are guarded "
                       "from the next call on")
    subscript = ins.real in SUBSCRIPT_EVENTS
    sliced = ins.real == "BINARY_SLICE"   # (its operands: container, start, stop)
    stepping = ins.real == "FOR_ITER"     # (its operand, the iterator, stays on the stack)
    if ins.opname not in _CALL_EVENTS and not subscript and not stepping:
        raise NotSplit("not a call")
    key = slice(stack[-2], stack[-1]) if sliced else stack[-1] if subscript else None
    if subscript and not (isinstance(key, torch.Tensor) or _slice_of_tensors(key)):
        raise NotSplit("a subscript splits only where its key is a tensor")
    if stepping and ((it_node := mon.node(stack[-1])) is None or it_node.source is None):
        # (one of unknown origin may look made in the call to the image, which would rebuild it)
        raise NotSplit("a loop splits only where it steps an iterator from outside the call that MagPy reads")
    held = lock_held(mon)
    if held is not None:
        raise NotSplit(f"inside a `with` block of a `{held}`: the record would neither take the lock "
                       "nor leave it held for the rest of the call, which releases it")
    # -- the chain of frames, innermost first ---------------------------------------------------------
    slots = 0 if stepping else (3 if sliced else 2) if subscript else DECODER.call_slots(ins)
    chain = [(fs, ins.offset, list(stack), slots, None)]
    abortable = True
    state = fs
    while not state.is_top:
        f = state.frame.f_back
        via_module = False
        while f is not None and mon.framework_code(f.f_code):
            via_module = True
            if flow_of(f.f_code).covered(f.f_lasti):
                abortable = False   # (Module.__call__'s hook path catches and re-raises)
            f = f.f_back
        outer = mon.frames.get(id(f)) if f is not None else None
        if outer is None or outer.frame is not f:
            raise NotSplit(f"`{state.code.co_name}` was called from a frame MagPy does not follow")
        last = getattr(outer, "last_call", None)
        if last is None:
            raise NotSplit(f"`{state.code.co_name}` was not entered by a call instruction of `{outer.code.co_name}`")
        oins, ostack, okw, _ = last
        callee, _, _ = (DECODER.call_ex_operands(oins, ostack) if oins.real == "CALL_FUNCTION_EX"
                        else DECODER.call_operands(oins, ostack, okw))
        code = _module_forward_code(callee) if via_module else _callee_code(callee)
        if code is not state.code and state.code is APPLIER_CODE:
            raise NotSplit(f"the native is called in C by {type(callee).__name__} `{_name(callee)}` drawing a `map`")
        if code is not state.code:
            raise NotSplit(f"`{state.code.co_name}` was entered through {type(callee).__name__} "
                           f"`{_name(callee)}` (not a plain call of it)")
        chain.append((outer, oins.offset, list(ostack), DECODER.call_slots(oins), callee))
        state = outer

    # -- D's operands ----------------------------------------------------------------------------------
    values: list = []
    if stepping:
        fn = for_iter_next
        values += [fn, stack[-1]]
        d_call = ("call", 1, ())
    elif sliced:
        fn = _get_slice
        values += [fn, stack[-3], stack[-2], stack[-1]]
        d_call = ("call", 3, ())
    elif subscript:
        fn = operator.getitem
        values += [fn, stack[-2], stack[-1]]
        d_call = ("call", 2, ())
    elif ins.real == "CALL_FUNCTION_EX":
        fn, pos, kw = DECODER.call_ex_operands(ins, stack)
        values += [fn, pos, kw]
        d_call: tuple = ("ex",)
    else:
        fn, args, kwn = DECODER.call_operands(ins, stack, kw_names)
        values += [fn, *args]
        d_call = ("call", len(args) - len(kwn), tuple(kwn))
    d_slots = len(values)
    if not stepping:
        _check_operation(fn)
    if (fn is map or fn is filter) and any(may_hold_tensors(a) for a in values[2:]):
        # a lazy iterator over tensors: what consumes it, after the split, reads their values
        raise NotSplit(f"`{fn.__name__}` makes a lazy iterator over tensors, consumed after the split")
    operands = values[1:] if d_call[0] == "call" else [
        *(values[1] if isinstance(values[1], (tuple, list)) else ()),   # (never iterate an iterator here)
        *(values[2].values() if isinstance(values[2], dict) else ())]
    for v in operands:
        node = mon.node(v)
        if isinstance(v, types.BuiltinMethodType) and _bound_to_object(v) and (node is None or node.source is None):
            # (`max(scores, key=scores.get)`: the image would hold this run's method, bound to this
            # run's dict, not the one the next call makes)
            raise NotSplit(f"D is given `{v.__name__}`, a method bound to an object made in the call")

    # -- frame images ----------------------------------------------------------------------------------
    image = _Image(mon, values)
    shared = _shared_cells(mon, [state for state, *_ in chain])
    frames = []
    ended = None
    for state, offset, st, slots, callee in chain:
        code, frame = state.code, state.frame
        fn = capture_backend().frame_function(frame)
        if not isinstance(fn, types.FunctionType) or fn.__code__ is not code:
            raise NotSplit(f"cannot tell which function runs `{code.co_name}`")
        first = not frames
        step = stepping and first
        rfn = fn   # (the function resume functions are made from)
        origin = origin_of(code)
        if origin is not None and not passed_free_cells(code) and offset >= origin[1]:
            # a frame resumed after an earlier split: resumed again from the original code (the
            # same resume function each time a loop splits at the same step)
            code, offset = origin[0], offset - origin[1]
            rfn = types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)
        flow = flow_of(code)
        where = _where(code, frame, offset)
        if flow.handling(offset):
            # (an `except` body: resumed, the frame would go on with no exception being handled,
            # `sys.exc_info()`, `log.exception()`, a bare `raise` would not see this call's)
            raise NotSplit(f"the call at {where} runs while `{code.co_name}` handles an exception, which "
                           "a continuation cannot hand on")
        covered = flow.covered(offset)
        if covered:
            # A handler of the frame covers D (`with torch.no_grad(): print(...)`, `try: D() except`),
            # or the call that led to D (`with torch.no_grad(): y = self.helper(x)`): the frame goes
            # on from there with the call's result, or by raising the call's exception there (its
            # `except`, `finally`, `__exit__` run as in eager; the continuation hands an exception of
            # an inner frame to it, see continuation_source). The monitor run does not stop the
            # program at D (SplitHere would pass through those handlers): it goes on eagerly.
            abortable = False
        at = flow.next_offset(offset)
        if at is None:
            raise NotSplit(f"no instruction follows the call at {where}")
        takes_result = step or flow.opnames.get(at) != "POP_TOP"
        if not takes_result:
            # `log.write(text)` as a statement: its value is dropped; the continuation neither
            # gets it nor is guarded on it (the number of characters written)
            at = flow.next_offset(at)
        below = st[:len(st) - slots]
        if not first and not covered and flow.opnames.get(at) == "RETURN_VALUE" \
                and all(v is NULL for v in below) and not code.co_cellvars and not _reads_its_locals(code):
            # (`return self.helper(x)`: the frame returns what it called returns, nothing to resume;
            # not one whose cells a closure holds: an argument only they hold is read below, at the split)
            continue
        pending = getattr(fn, "magpy_pending", None)
        if pending is not None and state.is_top and not first:
            # The continuation of an earlier split (magpy.continuation): what is left of it is the
            # frames of that split after the one running, taken as they are, with the values it
            # holds for them (so a loop's step in a nested frame splits at the same point each time;
            # the `try` it runs them in, where a frame's handler covers a call, is theirs again)
            frames += _pending_frames(mon, state, image, pending, callee)
            continue
        # cells of this call that the frame shares with the others (passed as cells, not contents)
        own = {c: shared.get(id(mon_cell)) for c in code.co_cellvars
               if (mon_cell := _frame_cell(mon, frame, c)) is not None} if code.co_cellvars else {}
        share = {c: cell for c, cell in own.items() if cell is not None}
        if fn.__closure__ and not state.is_top and _made_in_call(mon, fn):
            share.update((c, cell) for c, cell in zip(code.co_freevars, fn.__closure__) if id(cell) in shared)
        if any(code.co_freevars[k] not in share for k in passed_free_cells(state.code)):
            # (resumed with cells of an earlier split's call as parameters: its closure does not hold them)
            raise NotSplit(f"`{code.co_name}` runs with cells an earlier split passed it, which MagPy cannot pass on")
        live = set(flow.live_before(at))
        if covered or step:
            live |= flow.live_before(offset)   # (what the handler reads, from D on; after the loop)
        every_local = _reads_its_locals(code)
        if every_local:
            live.update(code.co_varnames)   # (`locals()` sees every bound local, dead or not)
        elif "__class__" in code.co_freevars and code.co_argcount:
            live.add(code.co_varnames[0])   # (zero-argument `super()` reads the first argument)
        f_locals = capture.frame_locals(frame)
        params: list[str] = []
        unbound: list[str] = []
        for name in code.co_varnames:
            if state.is_top and name in state.unwritten_params and name in mon.param_sources \
                    and name in f_locals and (name in live or name in share):
                # An argument of this call the run had not read yet: read now, so the continuation
                # gets this call's (a number would otherwise be the first call's literal).
                mon.on_read(f_locals[name], mon.param_sources[name], ("arg", name))
            if name in share:
                params.append(image.cell(share[name]))   # (its parameter is the cell itself)
                continue
            if name in live:
                if name not in f_locals:
                    if name in flow.live_before(at, clears=False) and not covered and not step:
                        raise NotSplit(f"local `{name}` of `{code.co_name}` is unbound at the split but read after it")
                    # (only saved and put back by a 3.12+ comprehension; where a handler covers D, read
                    # on the path of an exception the handler swallows: UnboundLocalError as in eager)
                    params.append("None")
                    if every_local or covered or step:
                        unbound.append(name)   # (deleted again by the resume function: `locals()` omits it)
                    continue
                params.append(image.add(f_locals[name]))
            else:
                params.append("None")
        cells = tuple(c for c in code.co_cellvars if c not in code.co_varnames and c in f_locals)
        for c in cells:
            params.append(image.cell(share[c]) if c in share else image.add(f_locals[c]))
        for c in code.co_freevars:
            if c in share:
                params.append(image.cell(share[c]))
        for v in below:
            if v is not NULL:
                params.append(image.add(v))
        layout = tuple(v is not NULL for v in below) + ((True,) if takes_result else ())
        try:
            # (the closure's own cells of those passed are not kept: empty cells hold their places)
            closure = None if not fn.__closure__ else tuple(
                types.CellType() if c in share else cell for c, cell in zip(code.co_freevars, fn.__closure__))
            resume = resume_function(rfn, at, layout, cells, closure=closure, unbound=tuple(unbound),
                                     shared=tuple(share))
            raising = None if not covered else resume_function(
                rfn, offset, layout[:len(below)], cells, closure=closure, unbound=tuple(unbound),
                shared=tuple(share), raising=True)
            if step:
                # The iterator is exhausted: the frame goes on at the FOR_ITER with an empty
                # iterator in the iterator's slot (the interpreter leaves the loop as it does there
                # on each version), from the same image.
                ended = FrameImage(resume_function(rfn, offset, layout[:len(below)], cells, closure=closure,
                                                   unbound=tuple(unbound), shared=tuple(share)),
                                   (*params[:-1], "iter(())"), where, False)
        except ResumeUnsupported as e:
            raise NotSplit(str(e)) from None
        frames.append(FrameImage(resume, tuple(params), where, takes_result, raising))

    # -- the prefix record: guard and mock as if the call returned the images, generated now (the
    # program goes on eagerly and may change what the images hold) ----------------------------------
    # Values D's own handler assumed before it refused D (numbers passed to a native) are D's
    # inputs, not assumptions: D gets them from the image.
    del mon.assumptions[n_assumed:], mon.assumed_at[n_assumed:]
    # Loops that ended before the split are unrolled in the prefix: the counts of the ranges they
    # went over (a count read from a tensor) are assumptions of the prefix, checked after its graph.
    for node, count in mon.loop_watcher.counts_at_split():
        mon.assumptions.append(("scalar", node, count))
        mon.assumed_at.append(frames[0].where)
    saved = mon.finished
    mon.finished = True   # (the run follows no frame while the prefix's code is generated)
    try:
        gen = generate(Trace.of(mon, result=tuple(values)), shape, None)
    except Unsupported as e:
        raise NotSplit(f"the state at the split cannot be rebuilt: {e}") from None
    finally:
        mon.finished = saved
    mon.split_values = values
    op = "[] (subscript)" if subscript else f"for ... in ({type(stack[-1]).__name__})" if stepping \
        else _name(values[0])
    return SplitPoint(gen=gen, frames=tuple(frames), prelude=tuple(image.prelude), n_values=len(values),
                      d_call=d_call, d_slots=d_slots, op=op, where=frames[0].where, reason=reason,
                      abortable=abortable, ended=ended)


# Natives that look at the frame that calls them (or at the stack): run as D from the
# continuation's helper they would see MagPy's frames, not the user's.
_FRAME_READERS = tuple(f for f in (getattr(sys, "_getframe", None), getattr(sys, "_getframemodulename", None),
                                   getattr(sys, "_current_frames", None), builtins.locals, builtins.vars,
                                   builtins.dir, builtins.globals, builtins.eval, builtins.exec,
                                   builtins.breakpoint, builtins.super) if f is not None)
_EXIT_NAMES = frozenset({"__exit__", "__aexit__"})
# Names whose call reads the frame's local variables by name (all of them, not only those the
# code after the split loads): the resumed frame must hold every bound local, and no other.
_LOCALS_READERS = frozenset({"locals", "vars", "dir", "eval", "exec", "_getframe", "currentframe", "f_locals"})


def _reads_its_locals(code: types.CodeType) -> bool:
    return not _LOCALS_READERS.isdisjoint(code.co_names)


def _check_operation(fn: Any) -> None:
    """Raise :class:`NotSplit` if D cannot run on its own from the continuation."""
    if any(fn is f for f in _FRAME_READERS):
        raise NotSplit(f"`{_name(fn)}` reads the frame that calls it (run from the continuation, it would "
                       "see MagPy's frames)")
    if getattr(fn, "__name__", None) in _EXIT_NAMES and not isinstance(fn, (types.FunctionType, types.MethodType)):
        # The `with` statement entered a native context manager (a lock) without a call MagPy
        # sees: replayed without its `__enter__`, the `__exit__` alone would run.
        raise NotSplit(f"`{_name(fn)}` ends a `with` block whose native `__enter__` is not part of a record")


def _pending_frames(mon: Any, state: Any, image: Any, split: SplitPoint, callee: Any) -> list:
    """The frames of ``split`` a continuation of it (the top frame ``state``) has not resumed yet,
    while it calls ``callee``, with the values it holds for them put in ``image``."""
    f_locals = capture.frame_locals(state.frame)
    k = next((k for k, f in enumerate(split.frames) if f.resume is callee), None)
    if k is None and split.ended is not None and split.ended.resume is callee:
        k = 0
    if k is None:
        raise NotSplit("a continuation calls what is not one of its frames")
    out = []
    for f in split.frames[k + 1:]:
        params = []
        for p in f.params:
            if p != "None" and p not in f_locals:
                raise NotSplit(f"a continuation does not hold `{p}`")
            v = f_locals.get(p)
            if p in state.unwritten_params and p in mon.param_sources:
                # (an argument the run has not read: read now, so the image has this call's)
                mon.on_read(v, mon.param_sources[p], ("arg", p))
            params.append("None" if p == "None" else image.cell(v) if type(v) is types.CellType else image.add(v))
        out.append(FrameImage(f.resume, tuple(params), f.where, f.takes_result, f.raising))
    return out


def _made_in_call(mon: Any, fn: types.FunctionType) -> bool:
    node = mon.node(fn)
    return node is None or node.source is None


def _frame_cell(mon: Any, frame: Any, name: str) -> Any:
    """The cell ``name`` of ``frame``, where a function made in the call captured it (else None:
    frames do not hand out their cells). In a continuation's run, a resumed frame took its cells
    from the closures an earlier split passed it (:meth:`_Image.cell`): a function among its
    locals, passed in by that split and made by this very code, holds the frame's cell."""
    hit = mon.split_frame_cells.get((id(frame), name))
    if hit is not None:
        return hit
    passed = {id(v) for v in mon.param_values.values() if isinstance(v, types.FunctionType)}
    if not passed:
        return None
    try:
        local = capture.frame_locals(frame)
    except Exception:
        return None
    held = local.get(name)
    if type(held) is types.CellType and name in frame.f_code.co_cellvars and origin_of(frame.f_code) is not None:
        # (3.12+: a resumed frame got the cell from its prologue, not from a MAKE_CELL the frame
        # ran, so its locals show the cell object itself)
        return held
    for v in list(local.values()):
        if isinstance(v, types.FunctionType) and id(v) in passed and v.__closure__ \
                and any(v.__code__ == k for k in frame.f_code.co_consts) and name in v.__code__.co_freevars:
            cell = v.__closure__[v.__code__.co_freevars.index(name)]
            if _is_frame_cell(frame, name, cell):
                return cell
    return None


class _Probe:
    """A value no program holds (what :func:`_is_frame_cell` puts in a cell for a moment)."""


def _is_frame_cell(frame: Any, name: str, cell: Any) -> bool:
    """Is ``cell`` the very cell ``frame`` keeps ``name`` in? (A function made by the same code
    in an earlier call holds a cell of that name too.) Asked by putting a value no program holds
    in ``cell`` for a moment and reading the frame's ``name``; the locals are read once more
    after, so that a snapshot CPython writes back into the frame (3.10, 3.11) holds the value
    again."""
    try:
        old = cell.cell_contents
    except ValueError:
        return False
    probe = _Probe()
    try:
        cell.cell_contents = probe
        shown = capture.frame_locals(frame).get(name)
        seen = shown is probe or shown is cell
    except Exception:
        seen = False
    finally:
        cell.cell_contents = old
        capture.frame_locals(frame)
    return seen


def _shared_cells(mon: Any, chain: list) -> dict:
    """Cells made in this call (by a monitored frame) that a closure made in the call, running in
    one of the split's frames, holds: ``id -> cell``. Each is passed to the resume functions as
    the cell itself, so a ``nonlocal`` written by one frame is read by the other, and the
    continuation runs with this call's cells, not the first call's. Raises :class:`NotSplit` for
    a closure whose cells MagPy cannot tell apart (made where it did not monitor)."""
    frame_cells: dict = {}
    made: dict = {}
    for f, creator in mon.made_functions.values():
        for name, c in zip(f.__code__.co_freevars, f.__closure__ or ()):
            if name in creator.f_code.co_cellvars:
                made[id(c)] = c
                frame_cells[(id(creator), name)] = c
    mon.split_frame_cells = frame_cells
    for state in chain:
        for name in state.frame.f_code.co_cellvars:
            if (id(state.frame), name) not in frame_cells:
                c = _frame_cell(mon, state.frame, name)
                if c is not None:
                    frame_cells[(id(state.frame), name)] = c
    fns = [capture_backend().frame_function(state.frame) for state in chain]
    outside = [c for f, state in zip(fns, chain) if isinstance(f, types.FunctionType)
               and (state.is_top or not _made_in_call(mon, f)) for c in (f.__closure__ or ())]
    outside += list(mon.top_closure)
    shared: dict = {}
    # every cell a split frame made and a function made in the call captured, wherever that
    # function is now (a local, an attribute, a list): the continuation runs with the cell
    # itself, so the closure and the frame go on sharing it (`g = lambda: k; <split>; k = 2`)
    chain_frames = {id(state.frame) for state in chain}
    for (creator, _name), c in frame_cells.items():
        if creator in chain_frames:
            try:
                _ = c.cell_contents
            except ValueError:
                continue   # (unbound at the split: the frame's own cell starts empty, as before)
            shared[id(c)] = c
    for f, state in zip(fns, chain):
        if state.is_top or not isinstance(f, types.FunctionType) or not f.__closure__ or not _made_in_call(mon, f):
            continue
        if mon.made_functions.get(id(f), (None,))[0] is not f:
            raise NotSplit(f"`{f.__qualname__}` is a closure made where MagPy did not follow it")
        for name, c in zip(f.__code__.co_freevars, f.__closure__):
            if id(c) in made:
                try:
                    _ = c.cell_contents
                except ValueError:
                    raise NotSplit(f"the variable `{name}` of closure `{f.__qualname__}` is unbound") from None
                shared[id(c)] = c
            elif not any(c is o for o in outside):
                raise NotSplit(f"closure `{f.__qualname__}` holds a cell MagPy cannot tell apart (`{name}`)")
    return shared


# Iterators made before D that a frame goes on with (a `for` loop around D): the continuation
# builds them again from what they iterate, in code the continuation's monitor run follows
# (an iterator passed in would be outside state its iteration changes).
_SEQ_ITERATORS = frozenset({type(iter([])), type(iter(())), type(iter(range(0)))})
_DICT_ITERATORS = {type(iter({}.values())): "values", type(iter({}.keys())): "keys", type(iter({}.items())): "items",
                   type(reversed({})): None, type(reversed({}.values())): None, type(reversed({}.items())): None}


def _bound_to_object(m: Any) -> bool:
    """Is builtin method ``m`` bound to an object (not a module, a class or nothing)?"""
    obj = getattr(m, "__self__", None)
    return obj is not None and not isinstance(obj, (types.ModuleType, type))


def _plain_builtin_method(m: Any) -> bool:
    """Does ``obj.<name>`` give a method like ``m`` again (a builtin method found on ``obj``'s
    class, no instance attribute of that name)?"""
    obj, name = m.__self__, getattr(m, "__name__", None)
    t = type(obj)
    if not name or not name.isidentifier() or name in (instance_dict(obj) or {}) \
            or not isinstance(t.__getattribute__, types.WrapperDescriptorType) or hasattr(t, "__getattr__"):
        return False   # (a class's own __getattribute__ in Python could answer anything)
    return getattr(t, name, None) is not None and getattr(obj, name, None) == m


def _plain_method(m: types.MethodType) -> bool:
    """Does ``obj.<name>`` give ``m`` again (``m``'s function found on ``obj``'s class, nothing in
    between: no instance attribute of that name, no ``__getattribute__`` or ``__getattr__`` of the
    class's own)?"""
    obj, fn = m.__self__, m.__func__
    name = getattr(fn, "__name__", None)
    t = type(obj)
    if not isinstance(fn, types.FunctionType) or not name or not name.isidentifier() \
            or t.__getattribute__ is not object.__getattribute__ or hasattr(t, "__getattr__"):
        return False
    if name in (instance_dict(obj) or {}):
        return False
    owner = class_owner(t, name)
    return owner is not None and owner.__dict__[name] is fn


class _Image:
    """The image tuple being collected and the continuation lines that rebuild iterators."""

    def __init__(self, mon: Any, values: list) -> None:
        self.mon = mon
        self.values = values
        self.prelude: list[str] = []
        self.memo: dict[int, str] = {}
        self.operands = list(values)   # D's callable and arguments

    def add(self, v: Any, depth: int = 0) -> str:
        """The continuation's expression for ``v``."""
        hit = self.memo.get(id(v))
        if hit is not None:
            return hit
        node = self.mon.node(v)
        made_here = node is None or node.source is None
        t = type(v)
        if made_here and depth < 8 and (t in _SEQ_ITERATORS or t in _DICT_ITERATORS or t in (enumerate, zip)):
            expr = self._iterator(v, depth)
        elif made_here and t is types.MethodType and depth < 8 and _plain_method(v):
            # (a bound method of this call, e.g. the `__exit__` of the `with` around D: looked up
            # again by the continuation, so its record is guarded on the object's class and what
            # the object holds, not on which object it is)
            expr = f"b{len(self.prelude)}"
            self.prelude.append(f"{expr} = {self.add(v.__self__, depth + 1)}.{v.__func__.__name__}")
        elif made_here and isinstance(v, types.BuiltinMethodType) and _bound_to_object(v):
            # (`get = partials.get` of a dict made in the call: the method of the continuation's
            # own dict, looked up again; the method object itself would be this run's dict)
            if depth >= 8 or not _plain_builtin_method(v):
                raise NotSplit(f"a bound method `{v.__name__}` of an object made in the call is live at the split")
            expr = f"b{len(self.prelude)}"
            self.prelude.append(f"{expr} = {self.add(v.__self__, depth + 1)}.{v.__name__}")
        else:
            expr = f"i{len(self.values)}"
            self.values.append(v)
        self.memo[id(v)] = expr
        return expr

    def cell(self, c: Any) -> str:
        """The continuation's expression for a new cell holding what the call's cell ``c`` holds
        (one per cell: frames that share ``c`` share it). Made by a closure of the continuation,
        so the continuation's monitor run sees a cell made in the call."""
        hit = self.memo.get(id(c))
        if hit is not None:
            return hit
        holders = [fn for fn, _creator in self.mon.made_functions.values()]
        holders += [v for v in self.values if isinstance(v, types.FunctionType)]
        for fn in holders:
            # a function made in the call holds it (a closure in a local, on `self`, in a list):
            # the continuation takes the very cell of that function, so both go on sharing it
            for k, held in enumerate(fn.__closure__ or ()):
                if held is c:
                    self.memo[id(c)] = expr = f"{self.add(fn)}.__closure__[{k}]"
                    return expr
        content = self.add(c.cell_contents)
        k = len(self.prelude)
        self.prelude.append(f"_k{k} = {content}")
        self.prelude.append(f"c{k} = (lambda: _k{k}).__closure__[0]")
        self.memo[id(c)] = f"c{k}"
        return f"c{k}"

    def _iterator(self, it: Any, depth: int) -> str:
        red = it.__reduce__()   # (a copy's state: reducing does not advance the iterator)
        var = f"t{len(self.prelude)}"
        if type(it) is enumerate:
            inner, count = red[1]
            self.prelude.append(f"{var} = enumerate({self.add(inner, depth + 1)}, {int(count)})")
        elif type(it) in _DICT_ITERATORS:
            # A new iterator over the same (live) dict, advanced as far: it sees the values written
            # later and raises when the dict changes size during the loop, as the real one does
            # (a copy of what is left would do neither).
            view = _DICT_ITERATORS[type(it)]
            owners = [r for r in gc.get_referents(it) if isinstance(r, dict)]
            left = red[1][0]
            if view is None or len(owners) != 1 or it.__length_hint__() != len(left):
                raise NotSplit("a loop over a dict is in progress at the split (reversed, or the dict changed size)")
            d = owners[0]
            if any(d is v or getattr(v, "__self__", None) is d for v in self.operands):
                # (D may change its size: the new iterator, made after D, would not raise)
                raise NotSplit("the dict a loop in progress iterates is passed to the operation")
            self.prelude.append(f"{var} = iter({self.add(d, depth + 1)}.{view}())")
            if len(d) - len(left):
                self.prelude.append(f"for _ in range({len(d) - len(left)}): next({var})")
        elif type(it) is zip:
            if len(red) > 2 and red[2]:
                raise NotSplit("a `zip(..., strict=True)` is in progress at the split")
            parts = [self.add(x, depth + 1) for x in red[1]]
            self.prelude.append(f"{var} = zip({''.join(p + ', ' for p in parts)})")
        else:
            seq = red[1][0]
            done = red[2] if len(red) > 2 else 0
            self.prelude.append(f"{var} = iter({self.add(seq, depth + 1)})")
            if done:
                self.prelude.append(f"for _ in range({int(done)}): next({var})")
        return var


def _slice_of_tensors(key: Any) -> bool:
    """A slice with a tensor bound (``words[:n]``): the subscript splits as one with a tensor key."""
    return type(key) is slice and any(isinstance(b, torch.Tensor) for b in (key.start, key.stop, key.step))
