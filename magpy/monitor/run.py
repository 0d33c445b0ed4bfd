"""The monitor run (paper §3, §5.3): execute the user program once, watching every instruction.

The real CPython interpreter runs the program. For each instruction of a monitored frame,
:class:`Monitor` receives the value stack (its inputs); the next event in the same frame shows
the outputs. From these it updates

* the :class:`~magpy.refgraph.RefGraph` (reads from outside get sources and guards,
  writes get new versions),
* the operator graph (every tensor operation becomes an fx node),

and detects dynamics (Figure 12): an unannotated native function, a function that is not a pure
closure, or a read of tensor *values* ends compilation for this call, with a break reason that
names the user's file and line. The call itself always completes eagerly: monitoring never
changes what the program computes.

This module owns the run itself: the capture hooks (frames, instructions, exceptions,
breaks), the frame states and the pending updates (an event's rule *pends* a post rule that
sees the event's outputs at the next event of the same frame). The steps of the run are rule
objects of their own, each in its module, over the run's state (:mod:`magpy.monitor.rulebook`):

* :mod:`magpy.monitor.reads` and :mod:`magpy.monitor.attrs`: the sources and guards of every
  read from outside (``on_read``, ``full_read``; parameters, cells, globals, imports, items;
  attribute lookup with CPython's precedence);
* :mod:`magpy.monitor.rules`: the update rule of every other event (stores, operators,
  iteration, calls handed to :mod:`magpy.monitor.calls`);
* :mod:`magpy.monitor.ops`: tensor operations as fx nodes; :mod:`magpy.monitor.calls`: what a call
  means (Figure 12); :mod:`magpy.monitor.scalars`, :mod:`magpy.dynamic.loops`, :mod:`magpy.dynamic.branches`: numbers
  read from tensors, counted loops, branches.

The handlers are the update rules of version-neutral *events* (a call, an attribute load, a
truth test...), written once for CPython 3.10 to 3.13: :mod:`magpy.bytecode` decodes each
version's opcodes into events and knows where their operands sit on the stack (an opcode it
does not know is a break that names it); :mod:`magpy.objmodel` answers the Python
object-model questions (where an attribute lives, what is immutable), :mod:`magpy.guards`
holds the kinds of guard a read creates.
"""
from __future__ import annotations

import collections
import contextlib
import inspect
import sys
import types
import warnings
from typing import Any

import torch

from .. import capture
from ..annotations import REGISTRY, ensure_loaded, lookup
from ..annotations.torch_ops import contains_tensor
from ..breaks import (
    BreakCompile,
    BreakKind,
    BreakReason,
    NotSplit,
    SplitHere,
    internal_error,
)
from ..bytecode import instructions
from ..bytecode.flow import close_tests_only, suspended_in_handler
from ..global_state import GlobalState, torch_mode_entered
from ..graph import OpGraph, Unsupported
from ..guards import Guard
from ..lifted import LiftedInt, delift, restores_any, restoring
from ..objmodel import is_immutable
from ..realtype import class_namespace, instance_dict, is_instance, stored_attr
from ..refgraph import RefGraph, ShadowNode
from ..source import Source
from . import rulebook
from .callbacks import APPLIER_CODE
from .frame import (
    ALL_EVENTS,
    E_CALL,
    E_NUMPY_OPAQUE,
    E_PROTOCOL,
    E_SPLIT_AT,
    E_TEXT_OPAQUE,
    E_WITH,
    MAGPY_RUNTIME_FILES,
    NO_MOVES,
    NO_MOVES_OR_TESTS,
    FrameState,
    attribute_lookup,
    event_flags,
    quiet_map,
    skip_codes,
)
from .function_apply import in_checkpoint_machinery
from .state import RunSwitches
from .watcher import RunHooks

#: How much of the stack a pending operation keeps (more than any operation's operands but a call
#: with many arguments, which then counts as holding what it cannot see).
_OPERANDS_KEPT = 8

#: the ids of the framework codes (frame.skip_codes, which holds the codes: grown in place)
_SKIP: frozenset = frozenset()
_no_subclass_functions = torch._C.DisableTorchFunctionSubclass
_RETURNED = object()   # Monitor.top_frame once the top frame returned (no reference kept to it)
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class Monitor:
    """Monitors one call of ``fn`` and collects RefGraph, guards and the operator graph.

    ``param_sources`` maps the top frame's parameter names to their sources.
    After :meth:`run`, either ``broken`` holds a break reason or ``result`` holds the
    return value, and ``graph``/``rg``/``guards``/``writes`` describe the call.

    The Monitor holds the run's state and dispatches each event; the rules are objects of their
    own (:data:`.rulebook.RULE_CLASSES`), made with the run: reads from outside
    (:class:`~magpy.monitor.reads.Reads`, :class:`~magpy.monitor.attrs.AttrReads`), the other
    events' rules (:class:`~magpy.monitor.rules.UpdateRules`, :class:`~magpy.monitor.patterns.PatternRules`),
    the call decision (:class:`~magpy.monitor.calls.CallRules` with the natives' and the annotated
    callees' rules, :class:`~magpy.monitor.callbacks.CallbackRules`), the recording of tensor
    operations (:class:`~magpy.monitor.ops.OpRecorder`) and the numbers read from tensor values
    (:class:`~magpy.monitor.scalars.ScalarFlow`). Each rule's public methods are the run's (the dispatch
    finds ``op_<EVENT>`` on the run; the stages after the run call ``mon.decide_call``...), and
    each rule names what it calls of the others in its ``USES``, bound when the run is made.
    """

    @classmethod
    def rule(cls, name: str) -> Any:
        """The function behind the run's method ``name``: the Monitor's own or a rule object's (None)."""
        own = getattr(cls, name, None)
        return own if own is not None else rulebook.rule_function(name)

    @classmethod
    def handles(cls, handler: str) -> bool:
        """Is there an update rule ``handler`` (``op_<EVENT>``), the Monitor's own or a rule object's?"""
        return cls.rule(handler) is not None

    def bound_rule(self, name: str) -> Any:
        """The bound method ``name`` of the first rule object that defines it (private ones too:
        the handlers of :data:`magpy.monitor.calls.FIGURE_12`)."""
        return next(getattr(r, name) for r in self.rules if name in type(r).__dict__)

    #: check mode (magpy.check): a list that gets ``(source, value, where)`` for every immutable value
    #: read from outside, to say which guard should have failed when a record diverges from eager
    read_log: list | None = None

    def __init__(self, top_code, param_sources: dict[str, Source], param_values: dict[str, Any],
                 top_closure: tuple | None = None, lifted: list[tuple] | None = None,
                 lifted_values: frozenset = frozenset(), switches: RunSwitches = RunSwitches()) -> None:
        global _SKIP
        _SKIP = frozenset(map(id, skip_codes()))   # (Dynamo's frames join once Dynamo is loaded)
        ensure_loaded()   # (the annotated functions' codes are looked up per frame entry)
        self.rules = rulebook.make_rules(self)
        self.top_code = top_code
        self.param_sources = param_sources
        self.param_values = param_values
        self.top_closure = top_closure or ()
        # Cells that outlive the call (id -> cell): the compiled function's closure and those of
        # every function from outside whose frame ran. A function made during the call that
        # closes over one of them (`lambda k: table[k]` inside such a function) reads outside state.
        self.outside_cells: dict[int, Any] = {id(c): c for c in self.top_closure}
        self.frame_packed: dict[str, Any] = {}   # the top frame's own *args tuple / **kwargs dict
        self.rg = RefGraph()
        self.rg.locate = self.where
        self.graph = OpGraph()
        self.guards: list[Guard] = []
        self.guarded_keys: set = set()
        self.code_pinned: set = set()         # ids of functions whose `__code__` is guarded (each held by its guard)
        self.defaults_pinned: dict = {}       # id(fn) -> (fn, its __defaults__, fn's source, theirs): guarded
        self.class_attrs_guarded: dict = {}   # (id(cls), name, id(after)) -> (cls, after): MRO lookups guarded
        self.dunder_indexes: dict = {}        # id(cls) -> (cls, objmodel.dunder_index(cls)), classes entered
        self.frames: dict[int, FrameState] = {}
        self._opaque_frame: Any = None
        self.broken: str | None = None
        self.break_reason: BreakReason | None = None   # the typed reason (broken is its text)
        self.internal_break = False                  # did the break come from a failure inside MagPy?
        self.delifting = False   # after a break: LiftedInts on monitored stacks become ints (break_run)
        self.dynamic = False
        self.result: Any = None
        self.finished = False
        self.mutated: set[int] = set()                       # node ids changed in place
        self.immutable_sources: dict[int, tuple] = {}        # id -> (a value read from outside, its sources) (op_IS_OP)
        self.identity_numbers: set[int] = set()              # id() / identity hash() of objects made in the call
        self.cached_misses: dict[Any, str] = {}              # caches missed (lru_cache, cached_property) whose fill has not returned
        self.mutated_storages: set[int] = set()              # data_ptrs of storages the graph changed in place
        self.undo_inputs: list[int] = []                     # graph inputs the mock saves and restores on a miss (codegen)
        self.yield_collectors: dict[int, list] = {}         # generator frame id -> values it yielded
        self.array_constants: list[tuple] = []              # (ndarray, snapshot) the graph holds as tensors
        self.value_shaped: set[int] = set()                  # ids of tensors whose shape depends on values
        self.star_calls: dict[int, tuple] = {}              # generator frame id -> f(*gen) waiting for it
        self.return_collectors: dict[Any, tuple] = {}        # code -> (what it returned, the caller counted or None)
        self.star_maps: dict[Any, tuple] = {}                # code of f in g(*map(f, ..)) -> (returns, g's frame)
        self.contextvars: dict[int, tuple] = {}             # id -> (ContextVar, value at first set)
        self.warning_filters = (warnings.filters, tuple(warnings.filters))   # at the start (mode_set_in_call)
        self.set_entry_keys: dict[int, object] = {}          # node id -> exact_key of a set at its first logged add
        self.switches = switches   # what the compiled callable decided for this run (read, never changed)
        self.uses_modules = switches.uses_modules   # (also set when a module's call is first followed)
        self.top_frame = None
        self.grad_enabled = torch.is_grad_enabled()
        self.global_state = GlobalState.capture()   # one guard for every process-wide switch
        self.graph_mutates = False                   # an operator changed a tensor in place
        self.mutates_outside = False                 # ... one sharing memory with a tensor from outside
        self._entered: set = set()                   # generator frames whose parameters were bound
        self.suspended: dict = {}                    # id(frame) -> frame: generators left at a yield in a try/with
        self._quiet = ALL_EVENTS                     # how quiet frames may be, as told to the capture
        self.value_read_gens: dict = {}              # id(frame) -> the native reading what that generator yields
        self.truth_read_codes: dict = {}             # code of a Python filter predicate -> filter (its truth read in C)
        self.storage_groups: list = []               # tensors whose storages must keep their aliasing
        self.init_scalars()
        # The watchers of dynamic behaviour (magpy.monitor.watcher): events in, decisions out. Each is
        # the run's attribute of its name: the dispatch tests their tables, the rules ask the loop
        # watcher by name (``run.loop_watcher.take_range``).
        hooks = RunHooks(pend=self.pend, post_new=self.post_new, scalar_arg=self.scalar_arg,
                         at=lambda: self.at_instruction, cell_of=self.cell_of)
        self.watchers = [W(self, hooks) for W in switches.watchers]
        for w in self.watchers:
            setattr(self, w.name, w)
        if not hasattr(self, "loop_watcher") or not hasattr(self, "branch_watcher"):
            raise ValueError("a monitor run needs a loop watcher and a branch watcher "
                             "(RunSwitches.watchers, magpy.dynamic.WATCHERS)")
        self.rows_count = None   # len node of the rows bind_rows just bound, if lifted
        self.inplace_changes = 0
        if switches.read_log:
            self.read_log = []
        self.loop_report: list = []                  # what became of each counted loop (set by roll_loops)
        self.branch_report: list | None = None       # what became of each branch, if they were merged (merge_branches)
        self.split: Any = None                       # the SplitPoint taken at the break
        self.split_note: str | None = None           # why the break did not split the call
        self.split_values: list | None = None        # the real values of the split's image (magpy.splits)
        self.split_wants_fixed_sizes = False         # a split was refused because sizes change
        self.other_sides: Any = None                 # an other-side run's state (magpy.dynamic.other_side)
        self._unwinding: BaseException | None = None   # the exception the run's frames are unwinding from
        self.outside_iterators: dict = {}            # id -> iterator from outside whose steps may split the call
        self.checkpointing: dict = {}                # id(frame) -> (frame, code of the function): calling checkpoint
        self.made_functions: dict = {}               # id -> (function, the frame that made it): made by MAKE_FUNCTION here
        self.rebound_cells: set = set()              # names of the top frame's cells, ids of other cells, stored to
        self.split_frame_cells: dict = {}            # (id(frame), name) -> cell, where a closure captured it
        self.in_call_event = False                   # the handler of a call instruction is running
        self.effects: list = []                      # calls the mock replays (magpy.replayed_effects): (fn, args, kwargs, where)
        self.effect_marks: list = []                 # per effect, len(rg.writes) when it ran (its place among the writes)
        self.draws: list = []                        # random draws the mock repeats, in order (magpy.redraw)
        self.speculative_ops: list = []              # file:line of tensor operations inside try/except
        self.at_instruction = None                              # (frame state, offset) of the instruction being monitored
        # Objects passed in are registered at entry: C code (zero-argument super(), method
        # binding) can hand them to other frames without a LOAD_FAST the monitor would see.
        # Lifted shapes (magpy.monitor.scalars): (source, tensor, dims) of arguments whose listed dimensions
        # are not guarded; every size read that derives from them is a graph node.
        self.lifted_dims: dict[Source, frozenset] = {}
        self.lifted_values = lifted_values   # descriptions of sources whose int values are graph inputs
        self.lifted_value_nodes: dict[Source, Any] = {}
        self.lifted_reads: dict[Source, tuple] = {}         # Source -> (the object read, what the program got)
        for src, value, dims in lifted or ():
            if dims:
                self.lifted_dims[src] = frozenset(dims)
                self.mark_lifted_shape(value)
        for name, value in param_values.items():
            if not is_immutable(value):
                self.on_read(value, param_sources[name], ("arg", name))

    # -- capture hooks --------------------------------------------------------------------------------
    @property
    def opaque_frame(self) -> Any:
        """The frame whose pending call the run takes whole (``pend(opaque=True)``), or None: the
        frames that call enters are not monitored (the capture is told, so it need not ask)."""
        return self._opaque_frame

    @opaque_frame.setter
    def opaque_frame(self, frame: Any) -> None:
        if (frame is None) is not (self._opaque_frame is None):
            capture.set_opaque(frame is not None)
        self._opaque_frame = frame

    @property
    def skipped(self) -> tuple[frozenset, frozenset]:
        """(code ids, file names) whose frames :meth:`enter_frame` refuses whatever the run's state:
        framework frames and MagPy's own (the capture may refuse them without asking)."""
        return _SKIP, MAGPY_RUNTIME_FILES

    def enter_frame(self, frame) -> Any:
        if self.finished and self.broken is None and self._opaque_frame is None and self.closes_after_return(frame):
            entered = self._enter(frame)
        elif self.broken is not None or self.finished or self._opaque_frame is not None:
            return False
        else:
            entered = self._enter(frame)
        if self._may_quiet() and entered:
            fs = self.frames[id(frame)]
            if fs.quiet is not None and fs.pending is None:
                fs.quieted = True   # (quiet from its first instruction, as after an event answered so)
                return fs.quiet
        return entered

    def _may_quiet(self) -> int:
        """How quiet frames may be now (:data:`~.frame.ALL_EVENTS`...): every event while something
        looks at every instruction (an arm of a branch it watches, a while loop's counter, an
        other-side run, a stop); the value tests too while a loop watches the uses of values.
        Told to the capture on every change (the hooks alone change what this reads)."""
        lw = self.loop_watcher
        quiet = ALL_EVENTS if (self.broken is not None or lw.pending_whiles or self.branch_watcher.branch_active
                               or self.other_sides is not None) else NO_MOVES if lw.watched else NO_MOVES_OR_TESTS
        if quiet != self._quiet:
            self._quiet = quiet
            capture.set_quiet(quiet)
        return quiet

    def closes_after_return(self, frame) -> bool:
        """After the top frame returned, its locals are cleared before the call is over: a
        generator they alone held, suspended inside its ``try``/``with``, is closed then, and its
        ``finally``/``__exit__`` (and what that calls) is part of the call, monitored as such."""
        if self.suspended.get(id(frame)) is frame:
            return True
        caller = self.frames.get(id(frame.f_back))
        return caller is not None and caller.frame is frame.f_back

    def _enter(self, frame) -> bool:
        code = frame.f_code
        if id(code) in _SKIP or code.co_filename in MAGPY_RUNTIME_FILES:
            return False   # framework frames and MagPy's own (a compiled callable called inside)
        is_top = self.top_frame is None
        if self.checkpointing and in_checkpoint_machinery(self, frame, code):
            return False
        if is_top:
            if code is not self.top_code:
                return False
            self.top_frame = frame
        elif id(code) in REGISTRY.python_code_ids():
            # An annotated Python function called from a frame MagPy skips (Module._call_impl
            # calling torch.compiler.is_compiling): opaque, as when the monitor sees the call.
            be = capture.backend()
            fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
            if fn is not None and lookup(fn) is not None:
                parent = self.frames.get(id(frame.f_back))
                if parent is not None and parent.frame is frame.f_back and parent.pending is None:
                    # Entered by the interpreter itself from a monitored frame (`with` calls
                    # __enter__): what it calls is opaque too, until that frame goes on.
                    self.pend(parent, self.post_nothing, None, opaque=True)
                return False
        fs = FrameState(frame, code, instructions(code), is_top)
        if not is_top and not code.co_flags & _RESUMABLE:
            fs.quiet = quiet_map(code, fs.instrs)   # (a generator's last instruction decides how it left)
        if is_top:
            fs.unwritten_params = set(self.param_sources)
            self.bind_packed_params(frame)
        self.frames[id(frame)] = fs
        if not is_top and frame not in self._entered:
            if code.co_flags & _RESUMABLE:
                self._entered.add(frame)   # resumed later: bind once (other frames are not held,
                                           # their locals would keep every activation alive)
            try:
                if code.co_flags & inspect.CO_OPTIMIZED and capture.backend().frame_function(frame) is None:
                    # Its defaults, __code__ and closure are outside state only the function
                    # object reaches (CPython 3.10 frames do not name it; see capture._py310).
                    raise BreakCompile(f"cannot tell which function object runs `{code.co_name}`")
                f_locals = capture.frame_locals(frame)   # (read once: each read copies the frame's locals)
                self.bind_callee(frame, code, f_locals)
                self.guard_dunder_entry(frame, code, f_locals)
                self._note_outside_cells(frame)
            except BreakCompile as e:
                self.break_run(e.reason, fs, frame.f_lasti)
        return True

    def _note_outside_cells(self, frame) -> None:
        """The closure cells of a function from outside (not made during the call) entered here:
        functions it makes pass them on (a comprehension or lambda in a closure-defined
        ``forward`` reading a free variable ``forward`` itself never loads)."""
        be = capture.backend()
        fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
        if not isinstance(fn, types.FunctionType) or not fn.__closure__:
            return
        fn_node = self.node(fn)
        if fn_node is not None and fn_node.source is None:
            return   # made in this call: its cells came from frames seen here
        for cell in fn.__closure__:
            self.outside_cells[id(cell)] = cell

    def instruction(self, frame, offset: int, stack: list) -> Any:
        """The capture hook: returns the frame's quiet map where its next quiet instructions need
        no event (nothing pending, no call's stack held, nothing watching every instruction)."""
        if self.broken is not None:
            if self.delifting:
                fs = self.frames.get(id(frame))
                if fs is not None and fs.frame is frame:
                    self._delift_stack(frame, stack)
            self._may_quiet()
            return None
        fs = self.frames.get(id(frame))
        if fs is None and self.suspended.get(id(frame)) is frame:
            fs = self.resumed_by_throw(frame)
        if fs is None or fs.frame is not frame:
            return None
        fs.quieted = False   # (this event's answer decides: a pend during it needs no wake)
        # MagPy's own reads of tensors (shapes, versions) must not run a user subclass's
        # __torch_function__: that would be a side effect eager does not have.
        with _no_subclass_functions():
            self._instruction(fs, frame, offset, stack)
        if self._may_quiet() and fs.pending is None and fs.last_call is None:
            fs.quieted = fs.quiet is not None
            return fs.quiet
        return None

    def _instruction(self, fs, frame, offset: int, stack: list) -> None:
        self.at_instruction = (fs, offset)
        fs.last_offset = offset
        held = fs.last_call[1] if fs.last_call is not None and self.suspended else None
        call = fs.last_call = None   # (the frame went on after its last call: drop the stack it had then)
        self.in_call_event = False
        try:
            if fs.pending is not None:
                post, data = fs.pending
                fs.pending = None
                if self._opaque_frame is not None:
                    self.opaque_frame = None
                post(fs, stack, data)
            if held is not None:
                self.close_released(held)
                self.at_instruction = (fs, offset)
                self.in_call_event = False
                if self.broken is not None:
                    return
            ins = fs.instrs.get(offset)
            if ins is None:
                return
            events = ins.events
            if events is None:
                events = ins.events = event_flags(ins)
            if events & E_PROTOCOL:
                self.guard_protocol(ins, stack)
                if events & E_WITH:
                    fs.managers[offset] = stack[-1]   # (may it swallow an operator's error? ops.inside_except)
                    mode = torch_mode_entered(stack[-1])
                    if mode is not None:
                        self.go_dynamic(mode)
            if self.scalar_nodes and events & E_NUMPY_OPAQUE and self.holds_numpy(stack[-3:]):
                # iterating or unpacking an array read from tensor values (`for v in a`, `f(*a)`):
                # native code hands out its elements, which nobody follows: its values are assumed
                self.scalar_escape(f"{ins.real} of", stack[-3:])
            if self.scalar_nodes and events & E_TEXT_OPAQUE and any(
                    type(v) is str and self.scalar_node(v) is not None for v in stack[-3:]):
                # iterating or unpacking text made from tensor values (`for ch in s`, `[*s]`):
                # native code hands out its characters, which nobody follows: the text is assumed
                self.scalar_escape(f"{ins.real} of", [v for v in stack[-3:] if type(v) is str])
            # (the watchers' ``active``, tested on their tables: one test per instruction when idle)
            lw = self.loop_watcher
            if lw.watched or lw.active_loops or lw.pending_whiles:
                lw.on_instruction(fs, ins, None, stack)   # (what a loop to be rolled may not do)
            if self.branch_watcher.branch_active:
                self.branch_watcher.on_instruction(fs, ins, offset, stack)   # (arms, merge points)
            if events & E_CALL:
                # what a split at this call needs, and what outer frames resume after (magpy.splits)
                fs.last_call = call = (ins, stack, fs.kw_names, len(self.assumptions))
                self.in_call_event = True
            elif events & E_SPLIT_AT:
                call = (ins, stack, (), len(self.assumptions))   # (a split at `xs[t]`, a loop's step: magpy.splits)
            handler = getattr(self, ins.handler, None)
            (handler if handler is not None else self.op_UNSUPPORTED)(fs, ins, stack)
            if self.other_sides is not None:
                self.other_sides.check(self, fs, ins, stack)   # (an other-side run stops before it would leave a trace)
            if fs.pending is not None:
                # (if it raises, could that follow a number the run follows? see exception. A flag,
                # not the operands: a reference kept to them would change what refcounts tell)
                fs.blind_operands = False
                if self.scalar_nodes or self.follows_changing_numbers():
                    operands = stack[-_OPERANDS_KEPT:]
                    fs.blind_operands = self.blind_to_numbers(operands) or \
                        (ins.real == "BINARY_SUBSCR" and len(stack) >= 2 and self.blind_key_lookup(stack[-2], stack[-1])) \
                        or ("exhaustion" if self.blind_to_exhaustion(operands) else False) \
                        or ("attribute" if attribute_lookup(ins, stack) else False)
            self.in_call_event = False
        except BreakCompile as e:
            self.break_run(e.reason, fs, offset, call=call)
        except Unsupported as e:
            self.break_run(str(e), fs, offset)
        except Exception as e:  # an internal error: stop compiling, the call runs on eagerly
            self.break_run(str(internal_error(e)), fs, offset, internal=True)
        if self.delifting:
            # (read again: the handler may have replaced the top since the hook read the stack)
            self._delift_stack(frame, capture.read_stack(frame))

    def leave_frame(self, frame, value) -> None:
        fs = self.frames.get(id(frame))
        if fs is None or fs.frame is not frame:
            return
        if self.broken is None and fs.pending is not None:
            # A frame can only return from RETURN_VALUE; a pending post is an exception exit.
            fs.pending = None
            self.opaque_frame = None
        del self.frames[id(frame)]
        if fs.code.co_flags & _RESUMABLE:
            reader = self.value_read_gens.get(id(frame))
            if reader is not None and self.broken is None and contains_tensor(value):
                # a native (`any`, `max`, `sorted`) takes the truth or order of what it yields, in C
                self.dynamic = True
                self.break_run(f"`{getattr(reader, '__name__', reader)}` reads the values of tensors a generator "
                               "yields", fs, frame.f_lasti)
            last = fs.instrs.get(fs.last_offset)
            # (left at a yield, not by an exception: a `with`'s re-raise puts f_lasti back on the yield)
            if last is not None and last.real == "YIELD_VALUE" and suspended_in_handler(fs.code, frame.f_lasti) \
                    and not self.close_only_tests(frame):
                # (closing it runs its handler: monitored where the close comes, see after_call)
                self.suspended[id(frame)] = frame
            else:
                self.suspended.pop(id(frame), None)
        if fs.code in self.truth_read_codes and self.broken is None:
            if contains_tensor(value):
                self.dynamic = True
                self.break_run("`filter` reads the truth of tensors its predicate returns", fs, frame.f_lasti)
            else:
                self.scalar_escape("tests the truth of", value)   # (a number read from a tensor: assumed)
        if self.loop_watcher.active_loops:
            self.loop_watcher.on_frame_left(fs)
        if self.branch_watcher.branch_active:
            self.branch_watcher.on_frame_left(fs, value)
        if id(frame) in self.star_calls:
            self.star_generator_left(frame, fs)
        collecting = self.return_collectors.get(fs.code)
        if collecting is not None and (collecting[1] is None or frame.f_back is collecting[1]):
            collecting[0].append(value)   # (with a caller: only its calls, not a recursive one)
        mapped = self.star_maps.get(fs.code)
        if mapped is not None and frame.f_back is mapped[1]:
            mapped[0].append(value)   # (called by map from that frame: not a recursive call)
        if fs.is_top and self.broken is None:
            self.finished = True
            self.result = value
        self._let_go(fs)
        self.rg.release_unreachable()
        self._may_quiet()

    def _let_go(self, fs: FrameState) -> None:
        """A frame that returned: the run keeps no reference to its frame object, whose locals are
        then cleared as the interpreter pops it (not kept in the frame object until the run ends):
        what only they held dies there, as in eager (a generator is closed, runs its ``finally``)."""
        if fs.code.co_flags & _RESUMABLE:
            return   # (a generator's frame is its generator's: holding it keeps nothing else alive)
        if self.at_instruction is not None and self.at_instruction[0] is fs:
            self.at_instruction = (FrameState(None, fs.code, fs.instrs, fs.is_top), self.at_instruction[1])
        fs.last_call = None
        if fs.frame is self.top_frame and not any(creator is fs.frame for _, creator in self.made_functions.values()):
            self.top_frame = _RETURNED

    def close_only_tests(self, frame) -> bool:
        """Would closing the generator suspended in ``frame`` only test ``except`` clauses that
        cannot catch GeneratorExit (read and guarded here), so that it runs nothing of the program?"""
        names = close_tests_only(frame.f_code, frame.f_lasti)
        if names is None:
            return False
        try:
            return self.read_clause_names(frame, names)
        except BreakCompile:
            return False

    def close_released(self, held: list) -> None:
        """``held`` (a stack the run kept past its instruction) is let go: a generator suspended
        inside its ``try``/``with`` that only ``held`` still holds would die now, inside the hook,
        where nothing is traced and its handler would run unseen. In eager it died a moment ago,
        when the program dropped it (the call that took it returned): it is closed here, as its
        death would close it, with tracing on, so the handler runs monitored at the same point."""
        for i in range(len(held)):   # (not enumerate: its cached result tuple would hold v too)
            v = held[i]
            if type(v) is not types.GeneratorType or self.suspended.get(id(v.gi_frame)) is not v.gi_frame:
                continue
            ours = sum(1 for w in held if w is v)
            if sys.getrefcount(v) - 2 == ours and not any(w is v for w in held[:i]):   # (v, and the argument)
                sys.call_tracing(v.close, ())

    def after_call(self) -> None:
        """The call is over (the top frame and its locals are gone): a generator left suspended
        inside its ``try``/``with`` whose close the run did not see is a break. Either it is still
        suspended, reachable from outside or from a reference cycle, and closing it later runs
        its handler where no record can (no record makes the generator); or it was closed where
        the monitor could not follow (inside native code MagPy does not see into), so its handler
        ran unmonitored."""
        if self.broken is None and self.finished and self.cached_misses:
            name = next(iter(self.cached_misses.values()))
            self.dynamic = True
            self.break_reason = BreakReason(BreakKind.UNSUPPORTED, f"the cached `{name}` raised on a miss "
                                            "(an exception is not cached: eager runs it again on every call)",
                                            function=name)
            self.broken = str(self.break_reason)
            return
        if self.broken is not None or not self.finished or not self.suspended:
            return
        frame = next(iter(self.suspended.values()))
        code = frame.f_code
        if suspended_in_handler(code, frame.f_lasti):
            why = (f"leaves generator `{code.co_name}` suspended inside `try`/`with` when the call returns (still "
                   "held: from outside, by the result, in a reference cycle, or by an object the call made, which "
                   "the monitor keeps for the run): closing it later runs its handler")
        else:
            why = (f"generator `{code.co_name}` was closed inside its `try`/`with` where the monitor could not "
                   "follow, so its handler ran unmonitored")
        self.dynamic = True
        self.break_reason = BreakReason(BreakKind.UNSUPPORTED, why, function=code.co_name,
                                        where=f"{code.co_filename}:{frame.f_lineno}")
        self.broken = str(self.break_reason)

    def resumed_by_throw(self, frame) -> FrameState | None:
        """A suspended generator closed (or thrown into) goes on from its yield without a
        ``call`` event under ``sys.settrace``: its first ``exception`` or instruction event enters it."""
        if self.broken is None and self.enter_frame(frame):
            return self.frames.get(id(frame))
        return None

    def exception(self, frame, exc) -> None:
        self._exception(frame, exc)
        self._may_quiet()

    def _exception(self, frame, exc) -> None:
        fs = self.frames.get(id(frame))
        if fs is None and self.suspended.get(id(frame)) is frame:
            fs = self.resumed_by_throw(frame)
        if fs is not None:
            propagated = exc is self._unwinding   # (an inner monitored frame saw it first and decided)
            self._unwinding = exc
            self.checkpointing.pop(id(frame), None)
            pending, fs.pending = fs.pending, None
            self.opaque_frame = None
            if pending is not None and self.broken is None:
                follows = pending[0] == self.post_op and self.raise_follows_metadata(*pending[1][:5])
                if follows is True:
                    return   # the except path is what the same guarded shapes and dtypes give again
                if follows == "lifted":
                    # (not dynamic: the next monitor run guards the sizes, and then it is)
                    self.break_run(f"tensor operation `{pending[1][4]}` raised {type(exc).__name__} on a lifted "
                                "size: whether it raises follows sizes the record does not guard", fs, fs.frame.f_lasti)
                    return
                if pending[0] == self.post_op and self.state_getter_raised(*pending[1][:5], exc):
                    return
                if pending[0] == self.post_op:
                    self.dynamic = True
                    self.break_run(f"tensor operation `{pending[1][4]}` raised {type(exc).__name__}: "
                                "exceptions that depend on tensor values cannot be guarded", fs, fs.frame.f_lasti)
                    return
                if not self.is_read_post(pending[0]) and (self.follows_changing_numbers() or self.scalar_nodes) \
                        and not propagated and not (fs.blind_operands is True or (
                            fs.blind_operands == "exhaustion" and isinstance(exc, StopIteration)) or (
                            fs.blind_operands == "attribute" and isinstance(exc, AttributeError))):
                    # `int(abs(v))` of a lifted or tensor-read number raised (NaN, inf): whether it
                    # raises follows the number, which the record does not guard. (Not dynamic: the
                    # next run guards lifted numbers; a number read from a tensor stays dynamic.)
                    self.break_run(f"an operation raised {type(exc).__name__} in a run that follows changing "
                                   "numbers: whether it raises may follow a number the record does not guard",
                                   fs, fs.frame.f_lasti)
                    return
                self.failed_read(pending, exc)

    # -- breaking -----------------------------------------------------------------------------------------
    def break_run(self, reason: str, fs: FrameState, offset: int, internal: bool = False, call: tuple | None = None) -> None:
        ins = fs.instrs.get(offset)
        at, function = self.place(fs, offset)
        if call is not None and self.switches.split_shape is not None and not internal and not self.finished:
            # The call instruction has not run yet: the call can be split right here (magpy.splits).
            try:
                self.split = self.switches.take_split(self, fs, call, reason, self.switches.split_shape)
            except NotSplit as e:
                self.split_note = f"not split: {e}"
                if ins is not None and ins.real == "FOR_ITER" and self.outside_iterator(call[1][-1]):
                    self.dynamic = True   # (as ever where an iterator from outside is stepped in the call)
            except Exception as e:   # a MagPy bug: no split, the call runs eagerly as before
                self.split_note = f"not split: {internal_error(e)}"
        # (typed for magpy.pipeline; ``broken`` is its text, which the rest of the run tests and prints)
        self.break_reason = BreakReason(BreakKind.INTERNAL if internal else BreakKind.UNSUPPORTED, reason,
                                        function=function, where=at)
        self.broken = str(self.break_reason)
        if self.split is not None and self.split.abortable and self.switches.abort_at_split:
            capture.stop()
            raise SplitHere()   # (into the program at D: the caller goes on from the split's values)
        if self.other_sides is not None:
            self.other_sides.stop(f"it would run unmonitored ({reason})")
        self.internal_break = internal
        self.opaque_frame = None
        restoring(self.lifted_reads.values())
        if any(type(v) is LiftedInt for v, _ in self.scalar_nodes.values()) or restores_any():
            # The program goes on eagerly, but sizes this run put on the stack as LiftedInts
            # (an int subclass: `type(n) is int` would be False) may sit on the stacks and in
            # the locals of the frames being monitored. Those frames stay traced, and before each
            # of their instructions a LiftedInt on the stack becomes a plain int (a local is one
            # once loaded), so the program never sees one (see magpy.lifted.LiftedInt).
            # Containers the monitored frames hold, and what the run wrote outside so far, are
            # changed in place now (frames entered from here on are not traced).
            self.delifting = True
            for st in list(self.frames.values()):
                local = capture.frame_locals(st.frame)
                for name, v in list(local.items()):
                    if type(v) in (list, dict, set) or (type(v) not in (tuple, torch.Size) and hasattr(v, "__dict__")):
                        delift(v)
                    elif (name in st.code.co_cellvars or name in st.code.co_freevars) and (plain := delift(v)) is not v:
                        # (a cell a closure reads in a frame entered from here on; written through
                        # the mapping: 3.11 writes the mapping back into the frame after the hook)
                        local[name] = plain
            self.delift_outside(None)
        else:
            capture.stop()

    def _delift_stack(self, frame, stack: list) -> None:
        n = len(stack)
        for i, v in enumerate(stack):
            if type(v) in (LiftedInt, float):
                if (plain := delift(v)) is not v:   # (a float copy the run handed out: its original)
                    capture.replace_top(frame, plain, below=n - 1 - i)
            elif type(v) in (tuple, list, dict) and v:
                new = delift(v)   # (lists and dicts in place; a tuple `(b, n)` about to be pushed somewhere is rebuilt)
                if new is not v:
                    capture.replace_top(frame, new, below=n - 1 - i)

    def delift_outside(self, result: Any) -> Any:
        """After the record is built: plain ints in place of the run's LiftedInts in what it wrote
        outside (attributes read past any lookup hook, containers, globals, cells) and in its result
        (and what it read in place of the float copies it handed out: :func:`magpy.lifted.restoring`)."""
        restoring(self.lifted_reads.values())
        for nid, names in self.attr_writes.items():
            obj, is_class = self.rg.sn[nid].obj, is_instance(self.rg.sn[nid].obj, type)
            d = class_namespace(obj) if is_class else instance_dict(obj)
            for name in names:
                if not is_class and d is not None and name in d:
                    d[name] = delift(d[name])
                elif is_class and name in d and type(d[name]) is not type(delift(d[name])):
                    type.__setattr__(obj, name, delift(d[name]))   # a class attribute (`type(self).calls += 1`)
                elif not is_class and (held := stored_attr(obj, name)) is not None \
                        and (plain := delift(held)) is not held:
                    setattr(obj, name, plain)   # (a slot, a function's `__defaults__`)
        for nid in [*self.rg.changed, *self.mutated]:   # (every object with a version past its first)
            obj = self.rg.sn[nid].obj
            if is_instance(obj, (list, dict, set, collections.deque)):
                delift(obj)
        for g, name in self.global_writes.values():
            if name in g:
                g[name] = delift(g[name])
        for cell in self.cell_writes.values():
            with contextlib.suppress(ValueError):   # (an emptied cell)
                cell.cell_contents = delift(cell.cell_contents)
        return delift(result)

    def release(self) -> None:
        """The run is over and its record built: drop every reference to the run's objects.

        A monitor sits in reference cycles (frames, pended callbacks, shadow nodes), so it lives
        until the cyclic collector runs, and with it the user frames it watched (with their
        locals: activations), the objects its shadow nodes hold (whole modules, parameters) and
        the run's arguments. Only its plain facts stay readable (``dynamic``, ``broken``)."""
        if self.__dict__.get("lifted_reads"):
            restoring(())   # (the float copies it handed out: none is given back from here on)
        keep = {k: self.__dict__[k] for k in ("broken", "dynamic", "finished", "internal_break") if k in self.__dict__}
        if "rg" in self.__dict__:
            self.rg.locate = None   # (the RefGraph lives on in the Trace; the monitor does not)
        self.__dict__.clear()
        self.__dict__.update(keep)

    def framework_code(self, code: Any) -> bool:
        """Is ``code`` a framework frame's that runs between user frames unmonitored
        (``Module._call_impl``)?"""
        return id(code) in _SKIP

    def where(self) -> str:
        """The user's file:line of the instruction being monitored."""
        if self.at_instruction is None:
            return "(before the first instruction)"
        at, function = self.place(*self.at_instruction)
        return f"{at} in {function}"

    @staticmethod
    def place(fs: FrameState, offset: int) -> tuple[str, str]:
        """``(file:line, function)`` of the instruction at ``offset`` in ``fs``; in the frame of a
        native mapped in C (:func:`.callbacks.native_applier`), the user's line that drew the map."""
        if fs.code is APPLIER_CODE and fs.frame is not None and fs.frame.f_back is not None:
            back = fs.frame.f_back
            return f"{back.f_code.co_filename}:{back.f_lineno}", f"{back.f_code.co_name} (under `map`)"
        ins = fs.instrs.get(offset)
        line = ins.line if ins is not None and ins.line else (
            fs.frame.f_lineno if fs.frame is not None else fs.code.co_firstlineno)   # (None: it returned)
        return f"{fs.code.co_filename}:{line}", fs.code.co_name

    def go_dynamic(self, reason: str):
        self.dynamic = True
        raise BreakCompile(reason)

    # -- RefGraph helpers -------------------------------------------------------------------------------
    def node(self, v) -> ShadowNode | None:
        return self.rg.get_node_by_var(v)

    # What the run changed outside, by kind: views of the RefGraph's versions (the only record of
    # those writes; magpy.replay_plan makes the mock from them), for the passes that ask.
    attr_writes = property(lambda self: self.rg.attr_writes())       # node id -> {name: True}
    global_writes = property(lambda self: self.rg.global_writes())   # (id(globals), name) -> (globals, name)
    cell_writes = property(lambda self: self.rg.cell_writes())       # id(cell) -> cell
    appends = property(lambda self: self.rg.calls_by_node())         # node id -> [(method, args)] the mock repeats

    # -- pending updates ------------------------------------------------------------------------------
    def pend(self, fs: FrameState, post, data=None, opaque: bool = False) -> None:
        """The event's outputs are seen at the next event of ``fs``: run ``post(fs, stack, data)``
        then. ``opaque``: the frames the event enters are not monitored until then."""
        fs.pending = (post, data)
        if fs.quieted:
            fs.quieted = False
            if fs.frame is not None:
                capture.wake(fs.frame)   # (its next event must be delivered, quiet or not)
        if opaque:
            self.opaque_frame = fs.frame

    def add_effect(self, effect: tuple) -> None:
        """A call the mock replays (magpy.replayed_effects), with its place among the run's writes (the
        mock replays it there: :func:`magpy.codegen.mock.in_program_order`)."""
        self.effects.append(effect)
        self.effect_marks.append(len(self.rg.writes))

