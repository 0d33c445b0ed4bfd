"""Branches on tensor values as conditional nodes (paper §6.2.2, the ``If`` node).

BlockDrop runs ``if action.data.sum() == 0: x = residual; continue`` once per block. The monitor
sees one side of such a branch per run, so a record used to *assume* the side it saw (a check
after the graph): one record per combination of skipped blocks, and past the recompile limit
every new policy ran eagerly. The paper runs both sides in one monitor run by rewriting the
source; here the two sides come from two monitor runs of the same program, which is the same
information without running code the program did not run.

The pieces:

1. *Arms* (:class:`BranchWatch`, mixed into the Monitor). A branch is a conditional jump J on a
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
2. *An arm library across runs* (:class:`ArmLibrary`, one per compiled function). After each run
   whose record was built and that wrote nothing outside (so every read of an arm sees the
   state the call started with), each clean arm is kept as a graph of its own
   (:class:`Arm`: inputs are tensors of F's live locals at J by name, and tensors read from
   outside by source; outputs are the tensors of F's live locals at M), with the run's guards
   (all of them: what the arm read may have been guarded before J) and the record's guard
   function.
3. *The conditional node* (:func:`merge_branches`). When a later run takes the other side of a
   branch with the same key and the same exit, its own arm and the library's become one
   :class:`Conditional` node that runs either side, the code after M takes the node's outputs,
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
stack at M: that value is one more output. Sides that both return meet at the function's exit
(the returned value is the output). Branches inside counted loops are not merged; they keep
their assumption, as before.
"""
from __future__ import annotations

import bisect
import collections
import functools
import gc
import operator
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from .bytecode.flow import EXIT, RETURNS, flow_of
from .loops import WRITES, CompiledBySignature

# Instructions that write an object (none may run inside a clean arm): a rolled loop's, and the
# appends of comprehensions (conservatively: a container the arm builds is not compared).
_WRITES = WRITES | frozenset({"LIST_APPEND", "SET_ADD", "MAP_ADD"})
_IMMUTABLE = (int, float, complex, str, bytes, tuple, frozenset, type(None), bool, torch.Tensor)


#: The output name of the value a conditional expression's side leaves on the stack.
_TOP = "<stack top>"


class NotMerged(Exception):
    """A branch whose sides cannot become one conditional node (the reason in words)."""


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
    j_nodes: dict                # name of a live local at J -> the node of its tensor
    j_canon: dict                # node -> the first name (sorted) that held it at J
    j_made: set                  # names whose tensor was made in the call
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


class BranchWatch:
    """The branches of a monitor run (mixed into :class:`~magpy.monitor.Monitor`).

    The host provides ``graph``, ``assumptions``, ``active_loops``, ``loops``, ``frames``, ``_at``,
    ``where``, ``node``, ``scalar_node``, ``_counters`` and ``call_writes`` (magpy.loops)."""

    def init_branches(self) -> None:
        self.branch_spans: list[Span] = []
        self.branch_active: list[Span] = []
        self.branch_notes: list[str] = []
        self.branch_library: ArmLibrary | None = None   # set by the compiled function before the run
        self.inplace_changes = 0

    def _branch_counters(self) -> tuple:
        return (self._counters(), len(self.assumptions), len(self.loops), self.inplace_changes,
                len(self.value_shaped))

    # -- the start: a truth read that a conditional jump takes ---------------------------------------
    def branch_assumed(self, node: Any, expected: Any) -> None:
        """The run assumes the truth of ``node`` at the current instruction: if a conditional jump
        takes it, watch the arm that follows."""
        if self.broken is not None or self._at is None or not isinstance(node, fx.Node):
            return
        fs, offset = self._at
        shape = flow_of(fs.code)
        j = shape.conditional_jump(offset)
        if j is None:
            return
        where = self.where()
        m = shape.merge_point(j)
        if m is None:
            self.branch_notes.append(f"kept: the branch at {where}: its sides do not meet again in the "
                                     "function (a return, a raise) or the code is not analysed")
            return
        if self.active_loops:
            self.branch_notes.append(f"kept: the branch at {where} is inside a counted loop")
            return
        if shape.covered(j) or (m != EXIT and shape.covered(m)):
            self.branch_notes.append(f"kept: the branch at {where} is inside a try/with block")
            return
        from . import capture

        try:
            local = dict(fs.frame.f_locals)
            stack = capture.read_stack(fs.frame)
        except Exception:
            return
        live = shape.live_after_jump(j)
        try:
            key = (fs.code, j, self._abstract_locals(local, live, self._outside_cells(fs)), _modes())
        except _NoKey as e:
            self.branch_notes.append(f"kept: the branch at {where}: a live local holds {e}")
            return
        j_nodes, j_canon, made = {}, {}, set()
        for name in sorted(live):
            v = local.get(name)
            if isinstance(v, torch.Tensor):
                n = self.graph.node_of(v)
                if n is not None:
                    j_nodes[name] = n
                    j_canon.setdefault(n, name)
                    shadow = self.node(v)
                    if n.op not in ("placeholder", "get_attr") and (shadow is None or shadow.source is None):
                        made.add(name)
        v = None
        span = Span(fs, shape, j, m, bool(expected), node, where, key,
                    next(reversed(self.graph.graph.nodes), None), self._branch_counters(),
                    j_nodes, j_canon, made, tuple(id(v) for v in stack[:-1]))
        del local, stack
        lib = self.branch_library
        if lib is not None and lib.has(key, not span.outcome):
            span.private = set()
            for name in sorted(made):
                if self._private(fs.frame.f_locals[name], fs):
                    span.private.add(name)
        self.branch_spans.append(span)
        self.branch_active.append(span)

    def _outside_cells(self, fs: Any) -> frozenset:
        """Names of ``fs``'s free variables whose cells outlive the call (the function's own
        closure from outside): what they hold comes from outside, and is guarded where it is read
        (a write to such a cell in the call is an outside write, and no arm is kept then)."""
        names = fs.code.co_freevars
        out = set()
        for k, name in enumerate(names):
            try:
                if self._cell_of(fs, k) is not None:
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
        if t.__name__ == "LiftedInt" or (t is float and self.scalar_node(v) is not None):
            return ("number", t.__name__)
        if v is None or t in (bool, int, float, str, bytes, complex) or isinstance(v, (torch.dtype, torch.device)):
            return ("value", t, v)
        ref = refs.setdefault(id(v), len(refs))
        if isinstance(v, torch.Tensor):
            return ("tensor", t, tuple(v.shape), v.dtype, v.device, v.requires_grad, v.layout,
                    v.stride() if v.layout == torch.strided else None, ref)
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
        node = self.node(v)
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
        from . import capture

        allowed: set[int] = set()
        values: set[int] = set()   # ids of what the monitored frames hold (but obj)
        for other in list(self.frames.values()):
            frame = getattr(other, "frame", None)
            if frame is None:
                continue
            try:
                loc = frame.f_locals
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
            if self.framework_code(frame.f_code):
                try:
                    for v in frame.f_locals.values():
                        if type(v) in (tuple, dict):
                            allowed.add(id(v))   # (its *args / **kwargs, passed on to forward)
                    v = None
                except Exception:
                    return False
            elif id(frame) not in self.frames:
                break   # (above the compiled function: what the user passed in is not made in the call)
            frame = frame.f_back
        return _only_magpy_holds(obj, allowed, values)

    # -- every instruction while arms are watched ----------------------------------------------------------
    def branch_event(self, fs: Any, ins: Any, offset: int, stack: list) -> None:
        for span in list(self.branch_active):
            if fs is span.fs:
                if offset == span.m:
                    self._end_span(span, stack)
                    continue
                span.last = offset
                if span.shape.covered(offset):
                    span.fail(f"an exception handler covers its arm ({self.where()})")
                if ins.real == "FOR_ITER" and stack and id(stack[-1]) in span.stack_ids:
                    span.fail(f"its arm advances a loop from before the branch ({self.where()})")
            if ins.opname in _WRITES or ins.real in _WRITES:
                span.fail(f"{ins.real} in its arm ({self.where()})")
            elif ins.opname == "BINARY_OP" and ins.argrepr.endswith("=") and ins.argrepr not in ("==", "!=", "<=", ">=") \
                    and len(stack) >= 2 and not isinstance(stack[-2], _IMMUTABLE):
                span.fail(f"`{ins.argrepr}` changes a {type(stack[-2]).__name__} in its arm ({self.where()})")

    def branch_call_event(self, fn: Any, args: list) -> None:
        """A call inside watched arms: one that writes an object makes them unclean."""
        bad = self.call_writes(fn, args)
        if bad is not None:
            for span in self.branch_active:
                span.fail(f"{bad} in its arm ({self.where()})")

    def branch_frame_left(self, fs: Any, value: Any) -> None:
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
                n = self.graph.node_of(v)
                if n is None:
                    span.fail("a tensor it returns is not in the graph")
                    return
                name = "<return>" if leaves[0] is value else f"<return>[{k}]"
                names.append(name)
                span.m_nodes[name] = n
        span.m_names = tuple(names)
        span.end_tail = next(reversed(self.graph.graph.nodes), None)

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
        if self._branch_counters() != span.counters:
            span.fail("its arm writes, changes a tensor in place, replays an effect, draws, assumes, "
                      "makes a value-shaped tensor or starts a counted loop")
        if not span.ok:
            return
        try:
            local = dict(span.fs.frame.f_locals)
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
                n = self.graph.node_of(v)
                if n is None:
                    span.fail(f"the tensor in `{name}` at the merge point is not in the graph")
                    return
                names.append(name)
                span.m_nodes[name] = n
        span.m_names = tuple(names)
        span.end_tail = next(reversed(self.graph.graph.nodes), None)

    def finish_branches(self) -> list[Span]:
        """The clean arms of the run (those still open at its end are not)."""
        for span in self.branch_active:
            span.fail("did not reach its merge point")
        self.branch_active = []
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
    from .capture._stackdepth import stack_depths

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
        if type(r) in (tuple, list, dict) and id(r) not in frame_values and _only_running_frames_hold(r, holders):
            continue
        return False
    return True


def _only_running_frames_hold(r: Any, mine: list) -> bool:
    """Does nothing the garbage collector knows hold ``r``, but cells that nothing it knows
    holds (a running frame's cell variables)?"""
    outer = gc.get_referrers(r)
    for h in outer:
        if h is mine or h is outer:
            continue
        if type(h) is not types.CellType:
            return False
        inner = gc.get_referrers(h)
        for x in inner:
            if x is not outer and x is not inner and x is not mine:
                return False
        del inner
    return True


# -- arms as graphs of their own ---------------------------------------------------------------------------
@dataclass
class Arm:
    """One side of a branch as a graph: ``gm(*locals at J by name, *tensors from outside)``
    returns the tensors of the live locals at M (``out_names``), each made in the arm, passed
    through from a local at J (``passes``: name -> J name) or read from outside."""

    gm: fx.GraphModule
    in_names: tuple
    outside: tuple               # (source, example tensor) per outside input
    out_names: tuple
    passes: dict                 # output name -> the J-local name it passes through
    reads: dict                  # output name -> the outside source it passes through
    ops: int                     # operator nodes (0: nothing to compile)
    where: str


def extract_arm(mon: Any, span: Span) -> tuple[Arm, set, dict]:
    """The arm of ``span`` as an :class:`Arm` (a copy: the run's graph is not changed), with the
    set of the run's nodes inside it and the run's node per output name."""
    g = mon.graph.graph
    nodes = list(g.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    lo = order[span.start_tail] if span.start_tail is not None else -1
    hi = order[span.end_tail] if span.end_tail is not None else -1
    inside = [n for n in nodes[lo + 1:hi + 1] if n.op not in ("placeholder", "get_attr")]
    inside_set = set(inside)
    ph_index = {n: k for k, n in enumerate(n for n in nodes if n.op == "placeholder")}
    for n in inside:
        if n.op not in ("call_function", "call_method") or n.meta.get("magpy_python") \
                or getattr(n.target, "magpy_python", False):
            raise NotMerged(f"its arm runs Python between operators ({n.target})")
    arm = fx.Graph()
    root = torch.nn.Module()
    env: dict[fx.Node, fx.Node] = {}
    in_names: list[str] = []
    outside: list[tuple] = []   # (source, example) of each placeholder the arm takes
    needed: dict[fx.Node, None] = {}   # (the values from before the arm, in order of first use)
    for n in inside:
        for leaf in n.all_input_nodes:
            if leaf not in inside_set:
                needed.setdefault(leaf)
    for name in span.m_names:
        if span.m_nodes[name] not in inside_set:
            needed.setdefault(span.m_nodes[name])
    locals_in, outs_in, consts = [], [], []
    for leaf in needed:
        if leaf.op == "placeholder":
            if leaf.meta.get("magpy_scalar"):
                raise NotMerged("its arm takes a number that changes between calls")
            outside.append(mon.graph.inputs[ph_index[leaf]])
            outs_in.append(leaf)
        elif leaf.op == "get_attr":
            consts.append(leaf)
        elif leaf in span.j_canon:
            locals_in.append(leaf)
        else:
            raise NotMerged("its arm takes a value computed before the branch that no live local holds")
    for leaf in locals_in:
        env[leaf] = arm.placeholder(f"local_{span.j_canon[leaf]}")
        in_names.append(span.j_canon[leaf])
    for k, leaf in enumerate(outs_in):
        env[leaf] = arm.placeholder(f"outside{k}")
    for k, leaf in enumerate(consts):
        root.register_buffer(f"_const{k}", mon.graph.constants[leaf.target], persistent=False)
        env[leaf] = arm.get_attr(f"_const{k}")
    for n in inside:
        env[n] = arm.node_copy(n, lambda leaf: env[leaf])
    passes, reads = {}, {}
    for name in span.m_names:
        n = span.m_nodes[name]
        if n in span.j_canon and n not in inside_set:
            passes[name] = span.j_canon[n]
        elif n.op == "placeholder":
            reads[name] = mon.graph.inputs[ph_index[n]][0]
    arm.output(tuple(env[span.m_nodes[name]] for name in span.m_names))
    arm.lint()
    gm = fx.GraphModule(root, arm)
    return (Arm(gm, tuple(in_names), tuple(outside), span.m_names, passes, reads, len(inside), span.where),
            inside_set, dict(span.m_nodes))


class Conditional:
    """A conditional node of a record's graph: ``node(pred, true_inputs, false_inputs)`` runs the
    arm of the side ``bool(pred)`` selects and returns its outputs (a tuple)."""

    magpy_python = False   # (set per node in the graph's meta: compile_regions splits around it)

    def __init__(self, arm_true: Arm, arm_false: Arm, where: str) -> None:
        self.arms = (arm_true, arm_false)
        self.run_true: Callable = arm_true.gm.forward
        self.run_false: Callable = arm_false.gm.forward
        self.where = where
        self.__name__ = "conditional"
        self.__qualname__ = "conditional"

    def bodies(self) -> list[fx.GraphModule]:
        """The arms that compute something (what a backend compiles)."""
        return [a.gm for a in self.arms if a.ops]

    def compile_with(self, compile_fn: Callable, shared: dict) -> None:
        """Compile each arm that computes something with ``compile_fn`` on its first call (arms
        with the same code share one compiled arm)."""
        runs = []
        for arm in self.arms:
            if not arm.ops:
                runs.append(arm.gm.forward)
                continue
            key = (arm.gm.code, tuple(id(b) for b in arm.gm.buffers()))   # (constants it holds)
            hit = shared.get(key)
            if hit is None:
                hit = shared[key] = CompiledBySignature(arm.gm, compile_fn)
            runs.append(hit)
        self.run_true, self.run_false = runs

    def __call__(self, pred: Any, true_inputs: tuple, false_inputs: tuple) -> tuple:
        if bool(pred):
            return self.run_true(*true_inputs)
        return self.run_false(*false_inputs)


# -- the library ----------------------------------------------------------------------------------------------
@dataclass
class ArmEntry:
    """A clean arm of an earlier run, with what makes it valid in another run's record."""

    arm: Arm
    exit: tuple
    guards: list          # every guard of its run, before any merge (and the alias guards)


class ArmLibrary:
    """The clean arms of a compiled function's runs, by (key, outcome); the newest first."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._arms: collections.OrderedDict = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._arms)

    def has(self, key: tuple, outcome: bool) -> bool:
        return (key, outcome) in self._arms

    def find(self, key: tuple, outcome: bool, exit: tuple) -> ArmEntry | None:
        hit = self._arms.get((key, outcome))
        return hit if hit is not None and hit.exit == exit else None

    def add(self, key: tuple, outcome: bool, entry: ArmEntry) -> None:
        self._arms[(key, outcome)] = entry
        self._arms.move_to_end((key, outcome), last=False)
        while len(self._arms) > self.limit:
            self._arms.popitem()

    def drop(self, key: tuple, outcome: bool) -> None:
        self._arms.pop((key, outcome), None)

    def clear(self) -> None:
        self._arms.clear()

    def copy(self) -> ArmLibrary:
        """A library holding the same arms (for ``explain``, which must not change the callable's)."""
        lib = ArmLibrary(self.limit)
        lib._arms = collections.OrderedDict(self._arms)
        return lib


def describe_branches(mon: Any) -> list[str]:
    """One line per branch of a finished run (for ``explain``: one run, no library)."""
    spans = mon.finish_branches()
    said = list(mon.branch_notes)
    blocked = run_blocks_arms(mon)
    for span in mon.branch_spans:
        if not span.ok:
            said.append(f"kept: the branch at {span.where}: {span.why}")
        elif blocked is not None:
            said.append(f"kept: the branch at {span.where}: {blocked}")
        elif span in spans:
            said.append(f"assumed: the branch at {span.where}: its arm becomes one side of a conditional node "
                        "once a run takes the other side")
    return said


def run_blocks_arms(mon: Any) -> str | None:
    """Why this run may neither use nor give arms (None: it may): the arms' guards are checked at
    the call's start, so the run must leave everything outside as it found it."""
    if mon.attr_writes or mon.mutated or mon.appends or mon.global_writes or mon.cell_writes \
            or mon.mutates_outside or mon.contextvars:
        return "the run changes state outside the call"
    if mon.draws:
        return "the run draws random numbers"
    if mon.lifted_dims or mon.lifted_value_nodes:
        return "the run has lifted sizes or values"
    if mon.loops:
        return "the run has counted loops"
    return None


def merge_branches(mon: Any, library: ArmLibrary) -> list[str]:
    """After a monitor run: turn each branch whose other side the library holds into a
    :class:`Conditional` node (the last first, so that earlier branches' marks stay valid).
    Keeps the run's clean arms in ``mon.branch_arms`` for :func:`keep_arms`. Returns a line per
    branch for ``explain`` and the recompiles log."""
    spans = mon.finish_branches()
    said = list(mon.branch_notes)
    mon.branch_arms = []
    mon.branch_merged = []          # (key, outcome) of the library arms merged
    mon.own_guards = list(mon.guards)   # (before any merge: what this run's arms rely on)
    blocked = run_blocks_arms(mon)
    if blocked is not None:
        for span in mon.branch_spans:   # (as describe_branches says them: explain reports these lines)
            if not span.ok:
                said.append(f"kept: the branch at {span.where}: {span.why}")
            elif span in spans:
                said.append(f"kept: the branch at {span.where}: {blocked}")
        mon.branch_report = said
        return said
    arms = []
    for span in spans:
        try:
            arms.append((span, *extract_arm(mon, span)))
        except NotMerged as e:
            span.fail(str(e))
    mon.branch_arms = [(s, a) for s, a, _, _ in arms]
    for span in [s for s in mon.branch_spans if not s.ok]:
        said.append(f"kept: the branch at {span.where}: {span.why}")
    for span, arm, inside, out_nodes in reversed(arms):
        entry = library.find(span.key, not span.outcome, span.exit)
        if entry is None:
            said.append(f"assumed: the branch at {span.where}: its other side has not run yet; its arm becomes "
                        "one side of a conditional node once a run takes the other side")
            continue
        try:
            _merge(mon, span, arm, inside, out_nodes, entry)
        except NotMerged as e:
            said.append(f"kept: the branch at {span.where}: {e}")
        else:
            mon.branch_merged.append((span.key, not span.outcome))
            said.append(f"conditional: the branch at {span.where} runs either side (one compiled graph each)")
    mon.branch_report = said
    return said


def _merge(mon: Any, span: Span, mine: Arm, inside: set, out_nodes: dict, entry: ArmEntry) -> None:
    other = entry.arm
    if mon.inplace_changes != span.counters[3]:
        raise NotMerged("the run changes a tensor in place after the branch")
    if other.out_names != mine.out_names:
        raise NotMerged("internal: the sides give other locals")
    # which outputs differ between the sides (the others are the same value either way)
    differ = []
    for name in mine.out_names:
        a, b = mine.passes.get(name), other.passes.get(name)
        if a is not None and a == b:
            continue
        ra, rb = mine.reads.get(name), other.reads.get(name)
        if ra is not None or rb is not None:
            if ra is not None and rb is not None and ra == rb:
                continue
            raise NotMerged(f"a side leaves a tensor from outside in `{name}`")
        for passed in (a, b):
            if passed is not None and (span.private is None or passed not in span.private):
                raise NotMerged(f"a side passes `{passed}` through to `{name}`, and something besides the "
                                "frame's locals holds that tensor (or it is not made in the call)")
        differ.append(name)
    if any(name not in span.j_nodes for name in other.in_names):
        raise NotMerged("the other side takes a tensor local that this run's graph does not hold")
    # what the code after the merge point may reach: only the differing outputs
    targets = {}
    for name in differ:
        targets.setdefault(out_nodes[name], name)
    g = mon.graph.graph
    nodes = list(g.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    hi = order[span.end_tail] if span.end_tail is not None else -1
    after = [n for n in nodes[hi + 1:] if n.op != "output"]
    for n in inside:
        for u in n.users:
            if u not in inside and n not in targets:
                raise NotMerged("a value computed in its arm is used after the merge point other than "
                                "through the frame's locals")
    from .loops import check_no_other_references

    try:
        check_no_other_references(mon, inside | {t for t in targets if t not in inside}, set())
    except Exception as e:
        raise NotMerged(str(e)) from None
    for _key, (_value, node) in list(mon.scalar_nodes.items()):
        if node in inside:
            raise NotMerged("a number read in its arm is used after it")
    # -- the node --------------------------------------------------------------------------------------
    placeholders = [n for n in nodes if n.op == "placeholder"]
    by_source = {}
    for k, (src, _) in enumerate(mon.graph.inputs):
        by_source.setdefault(src, placeholders[k])
    # (placeholders are made where a run first read them; an input added here is used earlier
    # than that: every placeholder moves to the front, in order, so the inputs keep their order)
    first_op = next((n for n in nodes if n.op != "placeholder"), None)
    if first_op is not None:
        for ph in placeholders:
            if order[ph] > order[first_op]:
                first_op.prepend(ph)

    def outside_node(src, example):
        hit = by_source.get(src)
        if hit is None:
            ctx = g.inserting_before(first_op) if first_op is not None else g.inserting_after(None)
            with ctx:
                hit = g.placeholder(f"i{len(mon.graph.inputs)}")
            mon.graph.inputs.append((src, example))
            placeholders.append(hit)
            by_source[src] = hit
        return hit

    def inputs_of(arm: Arm) -> tuple:
        ins = [span.j_nodes[name] for name in arm.in_names]
        ins += [outside_node(src, ex) for src, ex in arm.outside]
        return tuple(ins)

    mine_in, other_in = inputs_of(mine), inputs_of(other)
    true_arm, false_arm = (mine, other) if span.outcome else (other, mine)
    true_in, false_in = (mine_in, other_in) if span.outcome else (other_in, mine_in)
    cond = Conditional(true_arm, false_arm, span.where)
    anchor = next((n for n in after if n.op != "placeholder"), None)
    ctx = g.inserting_before(anchor) if anchor is not None else g.inserting_after(None)
    outs = {}
    with ctx:
        cnode = g.call_function(cond, (span.pred, true_in, false_in))
        cnode.meta["magpy_python"] = True
        cnode.meta["magpy_where"] = span.where
        cnode.meta["magpy_conditional"] = span.where
        for k, name in enumerate(mine.out_names):
            if name in differ and out_nodes[name] in targets and targets[out_nodes[name]] == name:
                gi = g.call_function(operator.getitem, (cnode, k))
                gi.meta["magpy_python"] = True
                shape = out_nodes[name].meta.get("example_value_shape")
                if shape is not None:
                    gi.meta["example_value_shape"] = shape
                outs[out_nodes[name]] = gi
    for n in after:
        for old, new in outs.items():
            if old in n.all_input_nodes:
                n.replace_input_with(old, new)
    for key, node in list(mon.graph._node_of.items()):
        if node in outs:
            mon.graph._node_of[key] = outs[node]
        elif node in inside:
            del mon.graph._node_of[key]
    for guard in entry.guards:
        mon.add_guard(guard)
    keep = [not (a[0] == "truth" and a[1] is span.pred) for a in mon.assumptions]
    mon.assumptions[:] = [a for a, k in zip(mon.assumptions, keep) if k]
    mon.assumed_at[:] = [w for w, k in zip(mon.assumed_at, keep) if k]
    for n in reversed([n for n in nodes if n in inside]):
        g.erase_node(n)


def check_merged(mon: Any, library: ArmLibrary, record: Any, args: tuple, kwargs: dict) -> bool:
    """After the record of a run with conditional nodes was built: does its guard pass for the
    call just run (the merged arms' guards are about the state their own runs saw)? If not, the
    merged arms are stale: they leave the library, and the record must not be used."""
    merged = getattr(mon, "branch_merged", None)
    if not merged:
        return True
    try:
        holds = record.guard(args, kwargs) is not None
    except Exception:
        holds = False
    if not holds:
        for key, outcome in merged:
            library.drop(key, outcome)
    return holds


def keep_arms(mon: Any, library: ArmLibrary) -> None:
    """After the record of a run was built: keep the run's clean arms in ``library``, with the
    run's own guards (before any merge; alias guards included)."""
    arms = getattr(mon, "branch_arms", None)
    if not arms:
        return
    from .guards import AliasGuard

    guards = list(mon.own_guards) + [AliasGuard(a, n.source) for n in mon.rg.sn[1:] if n.source is not None
                                     for a in n.aliases]
    for span, arm in arms:
        library.add(span.key, span.outcome, ArmEntry(arm, span.exit, guards))
