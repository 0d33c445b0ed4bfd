"""Branches on tensor values as conditional nodes (paper §6.2.2, the ``If`` node).

BlockDrop runs ``if action.data.sum() == 0: x = residual; continue`` once per block. The monitor
sees one side of such a branch per run, so a record used to *assume* the side it saw (a check
after the graph): one record per combination of skipped blocks, and past the recompile limit
every new policy ran eagerly. The paper runs both sides in one monitor run by rewriting the
source; here the two sides come from two monitor runs of the same program, which is the same
information without running code the program did not run.

The pieces:

1. *Arms* (:class:`BranchWatcher`, this module). A branch is a conditional jump J on a
   value the graph computes, in frame F. Its *merge point* M is J's immediate post-dominator in
   F's control flow (:mod:`magpy.bytecode.flow`); the *arm* of a run is what runs from J until F
   reaches M. It is *clean* when inside it nothing writes an object, changes a tensor in place,
   replays an effect, draws a number, assumes a value, makes a tensor whose shape depends on
   values, starts a counted loop, advances an iterator from before J, or leaves F, and when no
   exception handler of F covers it. Its *key* is (F's code, J, the abstraction of F's locals live
   after J: numbers and text by value, tensors by metadata and aliasing, containers by structure,
   objects from outside by identity, plus grad/inference/autocast mode); the abstraction of F's
   locals live at M is its *exit*. Objects made in the call have no identity across runs: a key
   or exit holding one makes the arm unusable.
2. *An arm library across runs* (:class:`~magpy.dynamic.merging.ArmLibrary`, one per compiled function). After each run
   whose record was built and that wrote nothing outside (so every read of an arm sees the
   state the call started with), each clean arm is kept as a graph of its own
   (:class:`~magpy.dynamic.nodes.Arm`: inputs are tensors of F's live locals at J by name, and tensors read from
   outside by source; outputs are the tensors of F's live locals at M), with the run's guards
   (all of them: what the arm read may have been guarded before J) and the record's guard
   function.
3. *The conditional node* (:func:`~magpy.dynamic.merging.merge_branches`). When a later run takes the other side of a
   branch with the same key and the same exit, its own arm and the library's become one
   :class:`~magpy.dynamic.nodes.Conditional` node that runs either side, the code after M takes the node's outputs,
   the library arm's guards join the record's (checked first against this very call: they hold,
   since the call was just run), and the assumption is dropped. A handful of runs then serve every
   combination of sides.

The one hard case is a side that passes a value through (``x = residual``): after M the program
reaches that tensor through ``x``, but maybe also through anything else that held it before J.
Such an output is accepted only when, at J, the tensor was made in the call and nothing but F's
locals held it (every other running frame's locals and stack are searched, and every referrer
the garbage collector knows of that is not MagPy's own); then every later use is a use through
F's locals at M. Runs that change a tensor in place after J are not merged (an output that may
be a view of another tensor in one arm and not in the other would change what the change
reaches). A conditional expression (``y * 2 if c else y - 1``) leaves each side's value on F's
stack at M: that value is one more output. A live local (or that value) holding tensors inside a
tuple, list or dict at M (an LSTM's ``state = (h, c)``) keeps the branch unmerged: the node's outputs
are whole tensors, and the tensors inside the container would keep one run's values. Sides that both return meet at the function's exit
(the returned value is the output). Branches inside counted loops are not merged; they keep
their assumption, as before.
"""
from __future__ import annotations

import bisect
import functools
import gc
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from .. import capture
from ..annotations.torch_ops import contains_tensor
from ..bytecode.flow import EXIT, RETURNS, flow_of
from ..monitor import Watcher, arm_write, write_counters, write_mark
from ..objmodel import exact_key
from ..source import ArgSource

#: The output name of the value a conditional expression's side leaves on the stack.
_TOP = "<stack top>"


class _NoKey(Exception):
    """A live local whose value has no meaning across runs (an object made in the call)."""


@dataclass
class Span:
    """One branch of a monitor run: the conditional jump at ``j`` in ``fs``'s frame, from the
    truth the run read until the frame reached ``m``."""

    fs: Any
    shape: Any                   # the FlowShape of the frame's code
    j: int
    m: int
    outcome: bool                # the truth of the condition in this run
    pred: fx.Node                # the graph node of the condition
    where: str
    key: tuple
    start_tail: Any              # the graph's last node when the arm began
    counters: tuple
    writes_at: int               # the RefGraph's write mark when the arm began
    j_nodes: dict                # name of a live local at J -> the node of its tensor
    j_canon: dict                # node -> the first name (sorted) that held it at J
    j_made: set                  # names whose tensor was made in the call or is an argument
    stack_ids: tuple             # ids of the frame's value stack below the condition at J
    private: set | None = None   # names whose tensor only the frame held at J (None: not searched)
    ok: bool = True
    why: str = ""
    done: bool = False
    end_tail: Any = None
    exit: tuple = ()
    m_names: tuple = ()          # names of live tensor locals at M, sorted
    m_nodes: dict = field(default_factory=dict)
    last: int = -1               # the offset of the frame's last instruction seen in the arm

    def fail(self, why: str) -> None:
        if self.ok:
            self.ok, self.why = False, why

    def close(self) -> None:
        """The arm is over: drop the frame (a finished frame kept alive keeps its locals, which
        a later branch's pass-through test would find holding its tensors)."""
        self.done = True
        self.fs = None


class BranchWatcher(Watcher):
    """The branches of a monitor run (a :class:`~magpy.monitor.watcher.Watcher`).

    Reads from its host (the monitor): ``graph``, ``assumptions``, the loop watcher's ``loops`` and
    ``active_loops``, ``frames``, ``framework_code``, ``where``, ``node``,
    ``scalar_node``, ``value_shaped``, ``broken``, ``inplace_changes``, ``switches.branch_library``
    (the arms of earlier runs, decided by the compiled function before the run) and the RefGraph's
    writes (:mod:`magpy.monitor.writes`)."""

    name = "branch_watcher"

    def __init__(self, host: Any, hooks: Any) -> None:
        super().__init__(host, hooks)
        self.branch_spans: list[Span] = []
        self.branch_active: list[Span] = []
        self.branch_notes: list[str] = []
        # what merge_branches leaves for keep_arms and check_merged (magpy.dynamic.merging)
        self.arms: list = []            # (span, Arm) of this run's clean arms
        self.merged: list = []          # (key, outcome) of the library arms merged
        self.own_guards: list = []      # the run's guards before any merge (what its arms rely on)

    @property
    def active(self) -> bool:
        return bool(self.branch_active)

    def _branch_counters(self) -> tuple:
        return (write_counters(self.host), len(self.host.assumptions), len(self.host.loop_watcher.loops), self.host.inplace_changes,
                len(self.host.value_shaped))

    # -- the start: a truth read that a conditional jump takes ---------------------------------------
    def on_assume(self, kind: str, node: Any, expected: Any) -> None:
        """The run assumes the truth of ``node`` at the current instruction: if a conditional jump
        takes it, watch the arm that follows."""
        if kind != "truth":
            return
        if self.host.broken is not None or self.hooks.at() is None or not isinstance(node, fx.Node):
            return
        fs, offset = self.hooks.at()
        shape = flow_of(fs.code)
        j = shape.conditional_jump(offset)
        if j is None:
            return
        where = self.host.where()
        m = shape.merge_point(j)
        if m is None:
            self.branch_notes.append(f"kept: the branch at {where}: its sides do not meet again in the "
                                     "function (a return, a raise) or the code is not analysed")
            return
        if self.host.loop_watcher.active_loops:
            self.branch_notes.append(f"kept: the branch at {where} is inside a counted loop")
            return
        if shape.covered(j) or (m != EXIT and shape.covered(m)):
            self.branch_notes.append(f"kept: the branch at {where} is inside a try/with block")
            return
        try:
            local = dict(capture.frame_locals(fs.frame))
            stack = capture.read_stack(fs.frame)
        except Exception:
            return
        live = shape.live_after_jump(j)
        try:
            key = self._key(fs, j, local, live)
        except _NoKey as e:
            self.branch_notes.append(f"kept: the branch at {where}: a live local holds {e}")
            return
        j_nodes, j_canon, made = {}, {}, set()
        for name in sorted(live):
            v = local.get(name)
            if isinstance(v, torch.Tensor):
                n = self.host.graph.node_of(v)
                shadow = self.host.node(v)
                if n is None and shadow is not None and shadow.source is not None:
                    # (a tensor from outside not yet read by an operator: its input now, so an arm
                    # that reads it reads the local, which another run may have computed)
                    n = self.host.graph.placeholder(v, shadow.source)
                if n is not None:
                    j_nodes[name] = n
                    j_canon.setdefault(n, name)
                    shadow = self.host.node(v)
                    if n.op not in ("placeholder", "get_attr") and (shadow is None or shadow.source is None):
                        made.add(name)
                    elif n.op == "placeholder" and shadow is not None and type(shadow.source) is ArgSource \
                            and shadow.source.kind in ("pos", "kw"):
                        made.add(name)   # (an argument: held above the call too, which runs no code meanwhile)
        v = None
        span = Span(fs, shape, j, m, bool(expected), node, where, key,
                    _op_tail(self.host.graph.graph), self._branch_counters(), write_mark(self.host),
                    j_nodes, j_canon, made, tuple(id(v) for v in stack[:-1]))
        del local, stack
        lib = self.host.switches.branch_library
        if lib is not None and lib.has(key, not span.outcome):
            span.private = set()
            for name in sorted(made):
                if self._private(capture.frame_locals(fs.frame)[name], fs):
                    span.private.add(name)
        self.branch_spans.append(span)
        self.branch_active.append(span)

    def _key(self, fs: Any, j: int, local: dict, live: frozenset) -> tuple:
        return (fs.code, j, self._abstract_locals(local, live, self._outside_cells(fs)), _modes())

    def takes_other_side(self, natural: bool) -> bool:
        """In an other-side run (:mod:`magpy.dynamic.other_side`): should the conditional jump
        about to read the truth ``natural`` take the other side, the one the library lacks for
        this branch? Never inside a counted loop, nor while a monitored frame is inside a ``try``
        or ``with`` block (stopping the run there would run its handler), nor twice by one key."""
        lib, at = self.host.switches.branch_library, self.hooks.at()
        if lib is None or at is None or self.host.broken is not None or self.host.loop_watcher.active_loops:
            return False
        fs, offset = at
        shape = flow_of(fs.code)
        j = shape.conditional_jump(offset)
        if j is None or shape.merge_point(j) is None:
            return False
        for other in list(self.host.frames.values()):
            frame = getattr(other, "frame", None)
            if frame is None or flow_of(frame.f_code).maybe_covered(frame.f_lasti):
                return False
        try:
            key = self._key(fs, j, dict(capture.frame_locals(fs.frame)), shape.live_after_jump(j))
        except Exception:   # noqa: BLE001 - _NoKey, or a local MagPy cannot abstract: not flipped
            return False
        if not lib.has(key, natural) or lib.has(key, not natural) or key in self.host.other_sides.flipped_keys:
            return False
        self.host.other_sides.flipped_keys.add(key)
        return True

    def _outside_cells(self, fs: Any) -> frozenset:
        """Names of ``fs``'s free variables whose cells outlive the call (the function's own
        closure from outside): what they hold comes from outside, and is guarded where it is read
        (a write to such a cell in the call is an outside write, and no arm is kept then)."""
        names = fs.code.co_freevars
        out = set()
        for k, name in enumerate(names):
            try:
                if self.hooks.cell_of(fs, k) is not None:
                    out.add(name)
            except Exception:
                pass
        return frozenset(out)

    def _abstract_locals(self, local: dict, live: frozenset, outside: frozenset = frozenset()) -> tuple:
        refs: dict[int, int] = {}
        out = []
        for name in sorted(live):
            if name not in local:
                out.append((name, ("unbound",)))
            else:
                out.append((name, self._abstract_value(local[name], refs, 0, name in outside)))
        return tuple(out)

    def _abstract_value(self, v: Any, refs: dict, depth: int, outside: bool = False) -> Any:
        if depth > 4 or len(refs) > 256:
            raise _NoKey("a structure too deep to compare")
        t = type(v)
        if t.__name__ == "LiftedInt" or (t is float and self.host.scalar_node(v) is not None):
            return ("number", t.__name__)
        if v is None or t in (bool, int, float, str, bytes, complex) or isinstance(v, (torch.dtype, torch.device)):
            return ("value", exact_key(v))   # (exact: 0.0 and -0.0, NaN, 1 and True are told apart)
        ref = refs.setdefault(id(v), len(refs))
        if isinstance(v, torch.Tensor):
            # (all the code after the merge point can read of a tensor without its values: the
            # conditional node's outputs carry only what the graph computes)
            strided = v.layout == torch.strided
            with torch._C.DisableTorchFunctionSubclass():
                return ("tensor", t, tuple(v.shape), v.dtype, v.device, v.requires_grad, v.layout,
                        v.stride() if strided else None, v.storage_offset() if strided else None,
                        v._is_view(), v.grad_fn is None, ref)
        if t in (tuple, list) or (isinstance(v, tuple) and hasattr(t, "_fields")):
            if len(v) > 64:
                raise _NoKey("a long container")
            return (t, ref, tuple(self._abstract_value(e, refs, depth + 1) for e in v))
        if t is dict:
            if len(v) > 64:
                raise _NoKey("a long container")
            return (t, ref, tuple((self._abstract_value(k, refs, depth + 1), self._abstract_value(e, refs, depth + 1))
                                  for k, e in v.items()))
        if isinstance(v, (type, types.ModuleType, types.BuiltinFunctionType)):
            return ("object", id(v), ref)
        node = self.host.node(v)
        if (node is not None and node.source is not None) or (outside and node is None):
            return ("object", id(v), ref)   # (from outside: guarded by the run's guards where read)
        raise _NoKey(f"a {t.__name__} made in the call (or not yet read from outside)")

    def _private(self, obj: Any, fs: Any) -> bool:
        """Can nothing but ``fs``'s frame reach ``obj`` once the branch's sides have met? The
        other monitored frames (callers, suspended at a call) may hold it only where they no
        longer read it after that call returns: in a local that is dead there (``x = block(x)``)
        or among the call's own operands on their value stack (3.11+, from the static stack
        depth after the call); the framework frames between them (``Module._call_impl``) only in
        their argument tuples. Every other referrer the garbage collector knows of must be a
        monitored frame's locals dict or one of MagPy's objects. (Written without comprehensions
        or copies: a temporary holding ``obj`` would be a referrer too.)"""
        allowed: set[int] = set()
        values: set[int] = set()   # ids of what the monitored frames hold (but obj)
        for other in list(self.host.frames.values()):
            frame = getattr(other, "frame", None)
            if frame is None:
                continue
            allowed.add(id(frame))   # (the frame object: what its live locals hold is searched below)
            try:
                loc = capture.frame_locals(frame)
                if type(loc) is dict:
                    allowed.add(id(loc))   # (3.10-3.12: the frame's own locals dict)
                _held_by(getattr(other, "pending", None), allowed, 3)   # (MagPy's note of a pending call's arguments)
                last = getattr(other, "last_call", None)
                if last is not None:
                    allowed.add(id(last[1]))   # (MagPy's copy of a caller's stack at its call: magpy.splits)
                if other is fs:
                    for v in capture.read_stack(frame):
                        if v is obj:
                            return False
                        values.add(id(v))
                    for v in loc.values():
                        if v is not obj:
                            values.add(id(v))
                    continue
                resume = _resume_offset(frame)
                live = flow_of(frame.f_code).live_before(resume) if resume is not None else None
                for name, v in loc.items():
                    if v is obj and (live is None or name in live):
                        return False
                    if v is not obj:
                        values.add(id(v))
                del loc
                v = None
                # (a caller's value stack cannot be read during its call: the slots that outlive
                # the call are compared by address, from their static depth)
                keep = _surviving_depth(frame.f_code, resume)
                slots = (capture.stack_slot_ids(frame, keep) if keep else []) if keep is not None else None
                if slots is None or id(obj) in slots:
                    return False
                values.update(p for p in slots if p)
            except Exception:
                return False
        frame = fs.frame.f_back
        while frame is not None:
            if self.host.framework_code(frame.f_code):
                try:
                    for v in capture.frame_locals(frame).values():
                        if type(v) in (tuple, dict):
                            allowed.add(id(v))   # (its *args / **kwargs, passed on to forward)
                    v = None
                except Exception:
                    return False
            elif id(frame) not in self.host.frames:
                break
            frame = frame.f_back
        while frame is not None:
            # above the compiled function: the caller's frames hold what it passed in (an argument)
            # and run no code until the call returns; any other holder (a module's globals, a
            # list, an attribute) is a referrer the check below refuses
            allowed.add(id(frame))
            frame = frame.f_back
        if type(self.host.node(obj).source if self.host.node(obj) is not None else None) is ArgSource:
            # (an argument is also in the run's own tables: the parameters it bound, its sources)
            allowed.update(_containers_in(vars(self.host), 3))
        return _only_magpy_holds(obj, allowed, values)

    # -- every instruction while arms are watched ----------------------------------------------------------
    def on_instruction(self, fs: Any, ins: Any, offset: int, stack: list) -> None:
        for span in list(self.branch_active):
            if fs is span.fs:
                if offset == span.m:
                    self._end_span(span, stack)
                    continue
                span.last = offset
                if span.shape.covered(offset):
                    span.fail(f"an exception handler covers its arm ({self.host.where()})")
                if ins.real == "FOR_ITER" and stack and id(stack[-1]) in span.stack_ids:
                    span.fail(f"its arm advances a loop from before the branch ({self.host.where()})")

    def on_frame_left(self, fs: Any, value: Any) -> None:
        for span in list(self.branch_active):
            if span.fs is fs:
                if span.m == EXIT and span.shape.opnames.get(span.last) in RETURNS:
                    self._end_span_at_return(span, value)
                    continue
                span.fail("its frame was left before the sides met")
                span.close()
                self.branch_active.remove(span)

    def _end_span_at_return(self, span: Span, value: Any) -> None:
        """Both sides return: they meet in the caller, which takes the returned value (a tensor,
        or a tuple or list of values) and nothing else of the frame."""
        span.close()
        self.branch_active.remove(span)
        self._check_writes(span)
        if self._branch_counters() != span.counters:
            span.fail("its arm writes, changes a tensor in place, replays an effect, draws, assumes, "
                      "makes a value-shaped tensor or starts a counted loop")
            return
        try:
            span.exit = (("return", self._abstract_value(value, {}, 0)), _modes())
        except _NoKey as e:
            span.fail(f"it returns {e}")
            return
        leaves = [value] if not isinstance(value, (tuple, list)) else list(value)
        if isinstance(value, (tuple, list)) and (len(value) > 16 or any(isinstance(v, (tuple, list, dict))
                                                                           for v in value)):
            span.fail("it returns a nested or long container")
            return
        names = []
        for k, v in enumerate(leaves):
            if isinstance(v, torch.Tensor):
                n = self.host.graph.node_of(v)
                if n is None:
                    span.fail("a tensor it returns is not in the graph")
                    return
                name = "<return>" if leaves[0] is value else f"<return>[{k}]"
                names.append(name)
                span.m_nodes[name] = n
        span.m_names = tuple(names)
        span.end_tail = _op_tail(self.host.graph.graph)

    def _check_writes(self, span: Span) -> None:
        """Ask the RefGraph what the arm wrote."""
        w = arm_write(self.host, span.writes_at)
        if w is not None:
            span.fail(f"{w.describe()} in its arm ({w.where})")

    def _end_span(self, span: Span, stack: list) -> None:
        self.branch_active.remove(span)
        try:
            self._arm_exit(span, stack)
        finally:
            span.close()

    def _arm_exit(self, span: Span, stack: list) -> None:
        """The frame reached the merge point: check the arm, and take the exit's abstraction and
        the nodes of the live tensor locals (the arm's outputs)."""
        below = tuple(id(v) for v in stack[:len(span.stack_ids)])
        top = ()
        if below != span.stack_ids or len(stack) > len(span.stack_ids) + 1:
            span.fail("its arm changes the frame's value stack")
        elif len(stack) == len(span.stack_ids) + 1:
            top = (stack[-1],)   # a conditional expression: each side leaves its value there
        self._check_writes(span)
        if self._branch_counters() != span.counters:
            span.fail("its arm writes, changes a tensor in place, replays an effect, draws, assumes, "
                      "makes a value-shaped tensor or starts a counted loop")
        if not span.ok:
            return
        try:
            local = dict(capture.frame_locals(span.fs.frame))
        except Exception:
            span.fail("its frame's locals cannot be read")
            return
        live = span.shape.live_before(span.m)
        if top:
            local[_TOP] = top[0]
            live = live | {_TOP}
        try:
            span.exit = (self._abstract_locals(local, live, self._outside_cells(span.fs)), _modes())
        except _NoKey as e:
            span.fail(f"a live local at the merge point holds {e}")
            return
        names = []
        for name in sorted(live):
            v = local.get(name)
            if isinstance(v, torch.Tensor):
                n = self.host.graph.node_of(v)
                if n is None:
                    span.fail(f"the tensor in `{name}` at the merge point is not in the graph")
                    return
                names.append(name)
                span.m_nodes[name] = n
            elif type(v) in (tuple, list, dict) or isinstance(v, tuple):
                if contains_tensor(v):
                    # (the node's outputs are the tensors of the live locals themselves: a tensor
                    # inside a container, `state = (h, c)`, would keep this run's value whichever
                    # side a later call takes)
                    span.fail(f"a live local at the merge point, `{name}`, holds tensors inside a "
                              f"{type(v).__name__}")
                    return
        span.m_names = tuple(names)
        span.end_tail = _op_tail(self.host.graph.graph)

    def on_finish(self) -> list[Span]:
        """The clean arms of the run (those still open at its end are not)."""
        for span in self.branch_active:
            span.fail("did not reach its merge point")
        self.branch_active.clear()   # (the monitor holds this very list)
        return [s for s in self.branch_spans if s.ok and s.done]


def _held_by(v: Any, into: set, depth: int) -> None:
    """Add the ids of the plain containers inside ``v`` (MagPy's bookkeeping) to ``into``."""
    if depth < 0 or type(v) not in (tuple, list, dict):
        return
    into.add(id(v))
    for e in (v.values() if type(v) is dict else v):
        _held_by(e, into, depth - 1)


def _resume_offset(frame: Any) -> int | None:
    """The offset of the instruction a frame suspended at a call resumes at."""
    shape = flow_of(frame.f_code)
    # (f_lasti is the call's own offset on 3.10 and 3.13, its last cache entry on 3.11 and 3.12)
    k = bisect.bisect_right(shape.offsets, frame.f_lasti)
    return shape.offsets[k] if k < len(shape.offsets) else None


@functools.lru_cache(maxsize=256)
def _stack_depths(code: Any) -> dict:
    from ..capture._stackdepth import stack_depths

    return stack_depths(code)


def _surviving_depth(code: Any, resume: int | None) -> int | None:
    """How many slots at the bottom of a suspended frame's value stack outlive its pending call
    (the rest are the call's callable and arguments: the static depth where it resumes, less
    the result); None where unknown (3.10)."""
    if resume is None:
        return None
    if sys.version_info < (3, 11):
        after = flow_of(code).depth_before(resume)
    else:
        try:
            after = _stack_depths(code).get(resume)
        except Exception:
            return None
    return None if after is None else max(0, after - 1)


def _modes() -> tuple:
    any_autocast = getattr(torch._C, "_is_any_autocast_enabled", None)
    return (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
            any_autocast() if any_autocast is not None else None)


def _op_tail(graph: fx.Graph) -> fx.Node | None:
    """The graph's last node that is no placeholder, or None: where an arm starts or ends.
    (A placeholder made at the branch, for a tensor from outside first read there, moves to the
    front of the graph when another branch is merged; its position marks nothing.)"""
    for n in reversed(graph.nodes):
        if n.op != "placeholder":
            return n
    return None


def _is_magpy(obj: Any) -> bool:
    mod = getattr(type(obj), "__module__", "") or ""
    return mod == "magpy" or mod.startswith("magpy.")


def _only_magpy_holds(obj: Any, allowed: set, frame_values: set) -> bool:
    """Is every referrer of ``obj`` the garbage collector knows either in ``allowed`` (ids of
    monitored frames' locals dicts, framework frames' argument tuples) or one of MagPy's
    objects, or a plain container that no monitored frame holds and that only running frames
    hold (directly or through their cells: MagPy's and the framework's own, since a monitored
    frame's locals, cells included, are in ``frame_values``)? (The locals of running frames are
    no referrers it knows: the caller searches the monitored ones.)"""
    holders = gc.get_referrers(obj)
    for r in holders:
        if id(r) in allowed or _is_magpy(r):
            continue
        if isinstance(r, types.FrameType) and "/magpy/" in r.f_code.co_filename.replace("\\", "/"):
            continue
        if type(r) in (tuple, list, dict) and id(r) not in frame_values \
                and (_only_running_frames_hold(r, holders, allowed) or _magpy_owned(r, [holders], 0)):
            continue
        return False
    return True


def _containers_in(table: dict, depth: int) -> set:
    """The ids of the plain containers among ``table``'s values and inside them, to ``depth``
    levels (MagPy's own tables, which no path of the program reaches)."""
    out: set = set()
    todo = [(v, 1) for v in table.values()]
    while todo:
        v, d = todo.pop()
        if type(v) not in (dict, list, tuple, set) or id(v) in out or len(v) > 100_000:
            continue
        out.add(id(v))
        if d < depth:
            todo += [(e, d + 1) for e in (v.values() if type(v) is dict else v)]
    return out


def _magpy_owned(r: Any, mine: list, depth: int) -> bool:
    """Is the plain container ``r`` held only by MagPy's own objects (the lists, tuples and
    dicts inside them, to a few levels: a run's table of the parameters it bound, the operator
    graph's inputs)? No path of the program reaches it. (Written without comprehensions or
    closures: a cell of this frame holding a container would be a referrer too.)"""
    if depth > 4:
        return False
    outer = gc.get_referrers(r)
    mine = [*mine, outer]
    ids = set()
    for m in mine:
        ids.add(id(m))
    try:
        for h in outer:
            if id(h) in ids or _is_magpy(h):
                continue
            if type(h) in (tuple, list, dict) and _magpy_owned(h, mine, depth + 1):
                continue
            return False
        return bool(outer)
    finally:
        del outer, mine


def _only_running_frames_hold(r: Any, mine: list, frames: set) -> bool:
    """Does nothing the garbage collector knows hold ``r``, but the frames in ``frames`` (ids:
    a frame object's stale locals dict, the ``*args`` tuple it was called with) and cells that
    nothing it knows holds (a running frame's cell variables)?"""
    outer = gc.get_referrers(r)
    for h in outer:
        if h is mine or h is outer or (type(h) is types.FrameType and (
                id(h) in frames or "/magpy/" in h.f_code.co_filename.replace("\\", "/"))):
            continue
        if type(h) is not types.CellType:
            return False
        inner = gc.get_referrers(h)
        for x in inner:
            if x is not outer and x is not inner and x is not mine:
                return False
        del inner
    return True
