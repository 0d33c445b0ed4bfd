"""The monitor run (paper §3, §5.3): execute the user program once, watching every instruction.

The real CPython interpreter runs the program. For each instruction of a monitored
frame, :class:`Monitor` receives the value stack (its inputs); the next event in the
same frame shows the outputs. From these it updates

* the :class:`~magpy.refgraph.RefGraph` (reads from outside get sources and guards,
  writes get new versions),
* the operator graph (every tensor operation becomes an fx node),

and detects dynamics (Figure 12): an unannotated native function, a function that
is not a pure closure, or a read of tensor *values* ends compilation for this call,
with a break reason that names the user's file and line. The call itself always
completes eagerly: monitoring never changes what the program computes.

This module owns the run itself: the capture hooks (frames, instructions, exceptions,
breaks), the per-opcode handlers (``op_<OPNAME>``) and the sources and guards of every read
from outside (``on_read``, ``full_read``). Two steps of the run live in mixins of
:class:`Monitor`: :mod:`magpy.calls` (what a call means, Figure 12) and
:mod:`magpy.tensor_ops` (tensor operations as fx nodes).

The handlers are the update rules of version-neutral *events* (a call, an attribute load, a
truth test...), written once for CPython 3.10 to 3.13: :mod:`magpy.bytecode` decodes each
version's opcodes into events and knows where their operands sit on the stack (an opcode it
does not know is a break that names it); :mod:`magpy.objmodel` answers the Python
object-model questions (where an attribute lives, what is immutable), :mod:`magpy.guards`
holds the kinds of guard a read creates.
"""
from __future__ import annotations

import collections
import functools
import inspect
import operator as _operator
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from . import capture
from .annotations import Annotation, lookup
from .annotations import torch_ops as T
from .binding import bind_callee
from .branches import BranchWatch
from .breaks import BreakCompile, BreakKind, BreakReason, internal_error
from .bytecode import DECODER, instructions
from .bytecode.resume import passed_free_cells
from .calls import CallRules, announce_operator
from .global_state import GlobalState
from .graph import OpGraph, Unsupported
from .guards import (
    AbsentGuard,
    ContainsGuard,
    Guard,
    IdGuard,
    KeyAbsentGuard,
    KeysGuard,
    LeafGuard,
    LenGuard,
    PresentGuard,
    SameGuard,
    TensorGuard,
    TypeGuard,
    ValueGuard,
    guard_for_object,
)
from .loops import LoopWatch
from .objmodel import (
    CONTAINER_TYPES,
    MAPPINGS,
    NO_NODE_TYPES,
    NO_VALUE,
    PROTOCOL_EVENTS,
    attr_location,
    dunders_naming,
    exact_key,
    has_instance_dict,
    is_immutable,
    is_mutable_class,
    is_python_class,
    items_unguarded,
    peek_items,
    protocol_lookups,
)
from .refgraph import Const, RefGraph, ShadowNode
from .scalars import NUMPY_VALUES, LiftedInt, ScalarFlow, delift, format_text, join_text
from .source import (
    ArgSource,
    AttrSource,
    CellSource,
    ConstSource,
    GlobalSource,
    ItemSource,
    Source,
    class_dict_source,
)
from .splits import NotSplit, SplitHere, take_split
from .tensor_ops import OpRecorder, set_data


def _identity_key(key: Any) -> bool:
    """A dict key found by identity (a function, class or module, compared with ``is``): reading
    ``d[key]`` reads one item, as for a constant key (``typing._caches[func]``)."""
    return isinstance(key, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)) \
        and type(key).__eq__ is object.__eq__ and type(key).__hash__ is object.__hash__


def _is_python_callable(fn: Any) -> bool:
    """Would calling ``fn`` enter a Python frame first (a function, a method, a Python class)?"""
    return isinstance(fn, (types.FunctionType, types.MethodType)) or (isinstance(fn, type) and is_python_class(fn))


def _star_items(pos: Any) -> list:
    """The arguments ``f(*pos)`` passes, read without consuming ``pos``: the interpreter
    iterates it after the monitor has looked, so a one-shot iterator must be copied, not read."""
    items = peek_items(pos)
    if items is None:
        raise BreakCompile(f"unpacks a `{type(pos).__name__}` into call arguments: its items cannot be read "
                           "without consuming it")
    return items


#: Events whose native code takes elements out of an array (iteration, unpacking, membership,
#: ``f(*a)``, formatting): a numpy value read from tensors among their operands is assumed.
_CALL_EVENTS = frozenset({"CALL", "CALL_FUNCTION_EX"})
_NUMPY_OPAQUE_EVENTS = frozenset({"GET_ITER", "GET_YIELD_FROM_ITER", "FOR_ITER", "UNPACK_SEQUENCE", "UNPACK_EX",
                                  "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "CALL_FUNCTION_EX",
                                  "CONTAINS_OP", "FORMAT_VALUE", "DELETE_SUBSCR"})


@dataclass
class FrameState:
    frame: Any
    code: Any
    instrs: dict
    is_top: bool
    pending: Any = None
    kw_names: tuple = ()
    unwritten_params: set = field(default_factory=set)
    fn_node: ShadowNode | None = None
    last_call: Any = None   # (instruction, stack, keyword names, assumptions so far) of its latest call event (magpy.splits)


def _skip_codes() -> set:
    """Framework frames that run between user frames and are not monitored themselves."""
    codes = set()
    M = torch.nn.Module
    for name in ("_wrapped_call_impl", "_call_impl", "__setattr__"):
        fn = getattr(M, name, None)
        if fn is not None:
            codes.add(fn.__code__)
            # and the helpers they define per call (`inner`, which runs the hooks): their
            # closure cells are per-call objects, never outside state
            codes.update(c for c in fn.__code__.co_consts if isinstance(c, types.CodeType))
    # weakref.finalize callbacks (MagPy forgets the ids of dead intermediates) run wherever a
    # tensor dies, in the middle of user code: not part of the program.
    codes.add(weakref.finalize.__call__.__code__)
    apply = getattr(torch.autograd.Function, "apply", None)
    if apply is not None and hasattr(apply, "__func__"):
        codes.add(apply.__func__.__code__)
    # TorchDynamo's bookkeeping that it patches into Module.__init__ once imported: a weak
    # registry of modules made inside forward, read only by Dynamo's own recompile decisions.
    try:
        from torch._dynamo.mutation_guard import GenerationTracker
        from torch._dynamo.utils import ExactWeakKeyDictionary

        codes.add(GenerationTracker.tag.__func__.__code__)
        codes.update(f.__code__ for f in vars(ExactWeakKeyDictionary).values() if isinstance(f, types.FunctionType))
    except (ImportError, AttributeError):   # pragma: no cover - another torch
        pass
    return codes


_SKIP = None
# MagPy's own call path (a compiled callable used inside a monitored program).
_MAGPY_RUNTIME_FILES = frozenset({__file__.rsplit("/", 1)[0] + f for f in ("/api.py", "/refgraph.py", "/graph.py")}
                                 | {"<magpy guard>", "<magpy mock>"})


def _module_getattr(module: types.ModuleType) -> Any:
    """The module-level ``__getattr__`` function (PEP 562) a plain module calls for names it
    lacks, or None (also for module classes that compute names themselves)."""
    fn = module.__dict__.get("__getattr__")
    if isinstance(fn, types.FunctionType) and type(module).__getattribute__ is types.ModuleType.__getattribute__ \
            and getattr(type(module), "__getattr__", None) is getattr(types.ModuleType, "__getattr__", None):
        return fn
    return None


_BUILTIN_IMPORT = __import__
# Where an import statement finds a module already imported: the interpreter's own table (the
# very dict object; rebinding the name `sys.modules` does not change what `import` consults).
_SYS_MODULES = ConstSource(sys.modules, "sys.modules")


def _absolute_import_name(name: str, package: str, level: int) -> str | None:
    """The absolute module name of ``from <level dots><name> import ...`` in ``package`` (what
    the interpreter resolves), or None where it cannot (the import raises)."""
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None
    return f"{bits[0]}.{name}" if name else bits[0]


_SINGLETONS = (None, True, False, Ellipsis, NotImplemented)
# Opcodes that hash what they put in a set or dict (see Monitor._check_hashed).
_HASHING = frozenset({"BUILD_SET", "BUILD_MAP", "SET_ADD", "MAP_ADD", "SET_UPDATE"})

collections_deque = collections.deque
_getitem = _operator.getitem

ELEMENT_READERS = frozenset({sorted, min, max, any, all, set, frozenset, hash, str, repr, format,
                             list.sort, list.index, list.count, list.remove, tuple.index, tuple.count,
                             dict.fromkeys, abs, round})


_no_subclass_functions = torch._C.DisableTorchFunctionSubclass
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _annotated_codes() -> frozenset:
    """Code objects of Python functions that carry an annotation (a quick pre-filter)."""
    from .annotations import REGISTRY, _ensure_loaded

    _ensure_loaded()
    return REGISTRY.python_codes()


class Monitor(CallRules, OpRecorder, ScalarFlow, LoopWatch, BranchWatch):
    """Monitors one call of ``fn`` and collects RefGraph, guards and the operator graph.

    ``param_sources`` maps the top frame's parameter names to their sources.
    After :meth:`run`, either ``broken`` holds a break reason or ``result`` holds the
    return value, and ``graph``/``rg``/``guards``/``writes`` describe the call.

    The call decision comes from :class:`~magpy.calls.CallRules` and the recording of
    tensor operations from :class:`~magpy.tensor_ops.OpRecorder`; numbers read from tensor
    values are followed by :class:`~magpy.scalars.ScalarFlow`.
    """

    #: check mode (magpy.check): a list that gets ``(source, value, where)`` for every immutable value
    #: read from outside, to say which guard should have failed when a record diverges from eager
    read_log: list | None = None


    def __init__(self, top_code, param_sources: dict[str, Source], param_values: dict[str, Any],
                 top_closure: tuple | None = None, lifted: list[tuple] | None = None,
                 lifted_values: frozenset = frozenset()) -> None:
        global _SKIP
        if _SKIP is None:
            _SKIP = _skip_codes()
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
        self.graph = OpGraph()
        self.guards: list[Guard] = []
        self._guarded: set = set()
        self.frames: dict[int, FrameState] = {}
        self.opaque_frame: Any = None
        self.broken: str | None = None
        self.delifting = False   # after a break: LiftedInts on monitored stacks become ints (_break)
        self.dynamic = False
        self.result: Any = None
        self.finished = False
        self.mutated: set[int] = set()                       # node ids changed in place
        self.mutated_storages: set[int] = set()              # data_ptrs of storages the graph changed in place
        self.undo_inputs: list[int] = []                     # graph inputs the mock saves and restores on a miss (codegen)
        self.yield_collectors: dict[int, list] = {}         # generator frame id -> values it yielded
        self.array_constants: list[tuple] = []              # (ndarray, snapshot) the graph holds as tensors
        self.value_shaped: set[int] = set()                  # ids of tensors whose shape depends on values
        self.star_calls: dict[int, tuple] = {}              # generator frame id -> f(*gen) waiting for it
        self.return_collectors: dict[Any, list] = {}         # code of a key= function -> what it returned
        self.star_maps: dict[Any, tuple] = {}                # code of f in g(*map(f, ..)) -> (returns, g's frame)
        self.contextvars: dict[int, tuple] = {}             # id -> (ContextVar, value at first set)
        self.set_entry_keys: dict[int, object] = {}          # node id -> exact_key of a set at its first logged add
        self.uses_modules = False
        self.top_frame = None
        self.grad_enabled = torch.is_grad_enabled()
        self.global_state = GlobalState.capture()   # one guard for every process-wide switch
        self.graph_mutates = False                   # an operator changed a tensor in place
        self.mutates_outside = False                 # ... one sharing memory with a tensor from outside
        self._entered: set = set()                   # generator frames whose parameters were bound
        self.storage_groups: list = []               # tensors whose storages must keep their aliasing
        self.init_scalars()
        self.init_loops()
        self.init_branches()
        self.split_shape: tuple | None = None       # the call shape, where a break may split the call (magpy.splits)
        self.split: Any = None                       # the SplitPoint taken at the break
        self.split_note: str | None = None           # why the break did not split the call
        self.split_values: list | None = None        # the real values of the split's image (magpy.splits)
        self.split_wants_fixed_sizes = False         # a split was refused because sizes change
        self.abort_at_split = False                  # stop the program at a split (SplitHere)?
        self.split_escapes: set = set()              # file:line of natives to split at rather than assume (magpy.splits)
        self.made_functions: dict = {}               # id -> (function, the frame that made it): closures a split resumes
        self.split_frame_cells: dict = {}            # (id(frame), name) -> cell, where a closure captured it
        self.in_call_event = False                   # the handler of a call instruction is running
        self.effects: list = []                      # calls the mock replays (magpy.effects): (fn, args, kwargs, where)
        self.draws: list = []                        # random draws the mock repeats, in order (magpy.redraw)
        self.redraw_ok = False                       # may draws be graph inputs (the backend takes changing numbers)?
        # ... and floats among them? (TorchInductor 2.13 on CPU computed wrong results from a float
        # input read back with item() in a fused kernel: with it, float draws are pinned and
        # floats that change between calls stay guarded.)
        self.float_inputs_ok = False
        # ... and does it raise where eager raises (a tensor operation inside `try`/`except` is then
        # speculated on: the record holds while the graph does not raise)? The eager graph does;
        # a compiled kernel need not check what eager's operator checks.
        self.raising_ok = False
        self.eager_graph = False                     # does the graph run op by op (backend "eager": same grad_fns)?
        self.speculative_ops: list = []              # file:line of tensor operations inside try/except
        self._at = None                              # (frame state, offset) of the instruction being monitored
        # Objects passed in are registered at entry: C code (zero-argument super(), method
        # binding) can hand them to other frames without a LOAD_FAST the monitor would see.
        # Lifted shapes (magpy.scalars): (source, tensor, dims) of arguments whose listed dimensions
        # are not guarded; every size read that derives from them is a graph node.
        self.lifted_dims: dict[Source, frozenset] = {}
        self.lifted_values = lifted_values   # descriptions of sources whose int values are graph inputs
        self.lifted_value_nodes: dict[Source, Any] = {}
        for src, value, dims in lifted or ():
            if dims:
                self.lifted_dims[src] = frozenset(dims)
                self.mark_lifted_shape(value)
        for name, value in param_values.items():
            if not is_immutable(value):
                self.on_read(value, param_sources[name], ("arg", name))

    # -- capture hooks --------------------------------------------------------------------------------
    def enter_frame(self, frame) -> bool:
        if self.broken is not None or self.finished or self.opaque_frame is not None:
            return False
        code = frame.f_code
        if code in _SKIP or code.co_filename in _MAGPY_RUNTIME_FILES:
            return False   # framework frames and MagPy's own (a compiled callable called inside)
        is_top = self.top_frame is None
        if is_top:
            if code is not self.top_code:
                return False
            self.top_frame = frame
        elif code in _annotated_codes():
            # An annotated Python function called from a frame MagPy skips (Module._call_impl
            # calling torch.compiler.is_compiling): opaque, as when the monitor sees the call.
            be = capture.backend()
            fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
            if fn is not None and lookup(fn) is not None:
                parent = self.frames.get(id(frame.f_back))
                if parent is not None and parent.frame is frame.f_back and parent.pending is None:
                    # Entered by the interpreter itself from a monitored frame (`with` calls
                    # __enter__): what it calls is opaque too, until that frame goes on.
                    self._pend(parent, self._post_nothing, None, opaque=True)
                return False
        fs = FrameState(frame, code, instructions(code), is_top)
        if is_top:
            fs.unwritten_params = set(self.param_sources)
            self._bind_packed_params(frame)
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
                bind_callee(self, frame, code)
                self._guard_dunder_entry(frame, code)
                self._note_outside_cells(frame)
            except BreakCompile as e:
                self._break(e.reason, fs, frame.f_lasti)
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

    def _bind_packed_params(self, frame) -> None:
        """The ``*args`` tuple and ``**kwargs`` dict of the top frame are objects the call itself
        built, not the copies bound before the run: they get their sources here. (A parameter
        held in a cell, read by a comprehension or nested function, is never loaded by
        ``LOAD_FAST``, so nothing else would give the frame's own object its source.)"""
        f_locals = frame.f_locals
        for name, src in self.param_sources.items():
            if isinstance(src, ArgSource) and src.kind in ("varpos", "varkw"):
                value = f_locals.get(name, NO_VALUE)
                self.frame_packed[name] = value   # (what a nested read of its cell finds)
                if value is not NO_VALUE and not is_immutable(value) and self.node(value) is None:
                    self.on_read(value, src, ("arg", name))

    def instruction(self, frame, offset: int, stack: list) -> None:
        if self.broken is not None:
            if self.delifting:
                fs = self.frames.get(id(frame))
                if fs is not None and fs.frame is frame:
                    self._delift_stack(frame, stack)
            return
        fs = self.frames.get(id(frame))
        if fs is None or fs.frame is not frame:
            return
        # MagPy's own reads of tensors (shapes, versions) must not run a user subclass's
        # __torch_function__: that would be a side effect eager does not have.
        with _no_subclass_functions():
            self._instruction(fs, frame, offset, stack)

    def _instruction(self, fs, frame, offset: int, stack: list) -> None:
        self._at = (fs, offset)
        call = fs.last_call = None   # (the frame went on after its last call: drop the stack it had then)
        self.in_call_event = False
        try:
            if fs.pending is not None:
                post, data = fs.pending
                fs.pending = None
                self.opaque_frame = None
                post(fs, stack, data)
            ins = fs.instrs.get(offset)
            if ins is None:
                return
            if ins.opname in PROTOCOL_EVENTS or ins.real in PROTOCOL_EVENTS:
                self._guard_protocol(ins, stack)
            if self.scalar_nodes and ins.opname in _NUMPY_OPAQUE_EVENTS and self.holds_numpy(stack[-3:]):
                # iterating or unpacking an array read from tensor values (`for v in a`, `f(*a)`):
                # native code hands out its elements, which nobody follows: its values are assumed
                self.scalar_escape(f"{ins.real} of", stack[-3:])
            if self.watched or self.active_loops:
                self.loop_event(fs, ins, stack)   # (magpy.loops: what a loop to be rolled may not do)
            if self.branch_active:
                self.branch_event(fs, ins, offset, stack)   # (magpy.branches: arms, merge points)
            if ins.opname in _CALL_EVENTS:
                # what a split at this call needs, and what outer frames resume after (magpy.splits)
                fs.last_call = call = (ins, stack, fs.kw_names, len(self.assumptions))
                self.in_call_event = True
            getattr(self, ins.handler, self.op_UNSUPPORTED)(fs, ins, stack)
            self.in_call_event = False
        except BreakCompile as e:
            self._break(e.reason, fs, offset, call=call)
        except Unsupported as e:
            self._break(str(e), fs, offset)
        except Exception as e:  # an internal error: stop compiling, the call runs on eagerly
            self._break(str(internal_error(e)), fs, offset, internal=True)
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
        if self.active_loops:
            self.loop_frame_left(fs)
        if self.branch_active:
            self.branch_frame_left(fs, value)
        if id(frame) in self.star_calls:
            self._star_generator_left(frame, fs)
        collector = self.return_collectors.get(fs.code)
        if collector is not None:
            collector.append(value)
        mapped = self.star_maps.get(fs.code)
        if mapped is not None and frame.f_back is mapped[1]:
            mapped[0].append(value)   # (called by map from that frame: not a recursive call)
        if fs.is_top and self.broken is None:
            self.finished = True
            self.result = value

    def exception(self, frame, exc) -> None:
        fs = self.frames.get(id(frame))
        if fs is not None:
            pending, fs.pending = fs.pending, None
            self.opaque_frame = None
            if pending is not None and self.broken is None:
                follows = pending[0] == self._post_op and self.raise_follows_metadata(*pending[1][:5])
                if follows is True:
                    return   # the except path is what the same guarded shapes and dtypes give again
                if follows == "lifted":
                    # (not dynamic: the next monitor run guards the sizes, and then it is)
                    self._break(f"tensor operation `{pending[1][4]}` raised {type(exc).__name__} on a lifted "
                                "size: whether it raises follows sizes the record does not guard", fs, fs.frame.f_lasti)
                    return
                if pending[0] == self._post_op:
                    self.dynamic = True
                    self._break(f"tensor operation `{pending[1][4]}` raised {type(exc).__name__}: "
                                "exceptions that depend on tensor values cannot be guarded", fs, fs.frame.f_lasti)
                    return
                self._failed_read(pending, exc)

    def _failed_read(self, pending, exc) -> None:
        """A read from outside raised (``try: self.x except AttributeError``): the absence
        is what the program saw, so the guard checks it is still absent."""
        post, data = pending
        if post == self._post_attr and isinstance(exc, AttributeError):
            node, rel, src, _ = data
            self.add_guard(PresentGuard(src, rel, False))
        elif post == self._post_item and isinstance(exc, (KeyError, IndexError)):
            node, rel, src = data
            self.add_guard(PresentGuard(src, rel, False))

    # -- breaking -----------------------------------------------------------------------------------------
    def _break(self, reason: str, fs: FrameState, offset: int, internal: bool = False, call: tuple | None = None) -> None:
        line = None
        ins = fs.instrs.get(offset)
        if ins is not None:
            line = ins.line
        at = f"{fs.code.co_filename}:{line or fs.frame.f_lineno}"
        if call is not None and self.split_shape is not None and not internal:
            # The call instruction has not run yet: the call can be split right here (magpy.splits).
            try:
                self.split = take_split(self, fs, call, reason, self.split_shape)
            except NotSplit as e:
                self.split_note = f"not split: {e}"
            except Exception as e:   # a MagPy bug: no split, the call runs eagerly as before
                self.split_note = f"not split: {internal_error(e)}"
        # (typed for magpy.pipeline; ``broken`` is its text, which the rest of the run tests and prints)
        self.break_reason = BreakReason(BreakKind.INTERNAL if internal else BreakKind.UNSUPPORTED, reason,
                                        function=fs.code.co_name, where=at)
        self.broken = str(self.break_reason)
        if self.split is not None and self.split.abortable and self.abort_at_split:
            capture.stop()
            raise SplitHere()   # (into the program at D: the caller goes on from the split's values)
        self.internal_error = internal
        self.opaque_frame = None
        if any(type(v) is LiftedInt for v, _ in self.scalar_nodes.values()):
            # The program goes on eagerly, but sizes this run put on the stack as LiftedInts
            # (an int subclass: `type(n) is int` would be False) may sit on the stacks and in
            # the locals of the frames being monitored. Those frames stay traced, and before each
            # of their instructions a LiftedInt on the stack becomes a plain int (a local is one
            # once loaded), so the program never sees one (see magpy.scalars.LiftedInt).
            # Containers the monitored frames hold, and what the run wrote outside so far, are
            # changed in place now (frames entered from here on are not traced).
            self.delifting = True
            for st in list(self.frames.values()):
                for v in list(st.frame.f_locals.values()):
                    if type(v) in (list, dict, set) or (type(v) not in (tuple, torch.Size) and hasattr(v, "__dict__")):
                        delift(v)
            self.delift_outside(None)
        else:
            capture.stop()

    def _delift_stack(self, frame, stack: list) -> None:
        n = len(stack)
        for i, v in enumerate(stack):
            if type(v) is LiftedInt:
                capture.replace_top(frame, int(v), below=n - 1 - i)
            elif type(v) in (tuple, list, dict) and v:
                new = delift(v)   # (lists and dicts in place; a tuple `(b, n)` about to be pushed somewhere is rebuilt)
                if new is not v:
                    capture.replace_top(frame, new, below=n - 1 - i)

    def delift_outside(self, result: Any) -> Any:
        """After the record is built: plain ints in place of the run's LiftedInts in what it wrote
        outside (attributes, containers, globals, cells) and in its result."""
        for nid, names in self.attr_writes.items():
            obj = self.rg.sn[nid].obj
            for name in names:
                d = getattr(obj, "__dict__", None)
                if isinstance(d, dict) and name in d:
                    d[name] = delift(d[name])
                elif isinstance(obj, type) and isinstance(d, types.MappingProxyType) and name in d \
                        and type(d[name]) is not delift(d[name]).__class__:
                    type.__setattr__(obj, name, delift(d[name]))   # a class attribute (`type(self).calls += 1`)
        for nid in [*self.appends, *self.mutated]:
            obj = self.rg.sn[nid].obj
            if isinstance(obj, (list, dict, set)):
                delift(obj)
        for g, name in self.global_writes.values():
            if name in g:
                g[name] = delift(g[name])
        for cell in self.cell_writes.values():
            try:
                cell.cell_contents = delift(cell.cell_contents)
            except ValueError:
                pass
        return delift(result)

    def release(self) -> None:
        """The run is over and its record built: drop every reference to the run's objects.

        A monitor sits in reference cycles (frames, pended callbacks, shadow nodes), so it lives
        until the cyclic collector runs, and with it the user frames it watched (with their
        locals: activations), the objects its shadow nodes hold (whole modules, parameters) and
        the run's arguments. Only its plain facts stay readable (``dynamic``, ``broken``)."""
        keep = {k: self.__dict__[k] for k in ("broken", "dynamic", "finished", "internal_error") if k in self.__dict__}
        self.__dict__.clear()
        self.__dict__.update(keep)

    def framework_code(self, code: Any) -> bool:
        """Is ``code`` a framework frame's that runs between user frames unmonitored
        (``Module._call_impl``)?"""
        return code in _SKIP

    def where(self) -> str:
        """The user's file:line of the instruction being monitored."""
        fs, offset = self._at
        ins = fs.instrs.get(offset)
        line = ins.line if ins is not None and ins.line else fs.frame.f_lineno
        return f"{fs.code.co_filename}:{line} in {fs.code.co_name}"

    def _log_read(self, value: Any, source: Source) -> None:
        """Check mode: keep what was read where (lifted numbers change between calls by design)."""
        if source.describe() in self.lifted_values:
            return
        try:
            where = self.where() if self._at is not None else None
        except Exception:
            where = None
        self.read_log.append((source, value, where))

    def _dynamic(self, reason: str):
        self.dynamic = True
        raise BreakCompile(reason)

    # -- RefGraph helpers -------------------------------------------------------------------------------
    def node(self, v) -> ShadowNode | None:
        return self.rg.get_node_by_var(v)

    # What the run changed outside, by kind: views of the RefGraph's versions (the only record of
    # those writes; magpy.side_effects makes the mock from them), for the passes that ask.
    attr_writes = property(lambda self: self.rg.attr_writes())       # node id -> {name: True}
    global_writes = property(lambda self: self.rg.global_writes())   # (id(globals), name) -> (globals, name)
    cell_writes = property(lambda self: self.rg.cell_writes())       # id(cell) -> cell
    appends = property(lambda self: self.rg.calls_by_node())         # node id -> [(method, args)] the mock repeats

    def add_guard(self, guard: Guard) -> None:
        """Guard what the run read from outside (the first guard of equal ``dedup_key`` is kept)."""
        key = guard.dedup_key()
        if key in self._guarded:
            return
        self._guarded.add(key)
        if self.lifted_dims and isinstance(guard, TensorGuard) and guard.source in self.lifted_dims:
            guard.dynamic_dims = self.lifted_dims[guard.source]
        self.guards.append(guard)

    def on_read(self, value: Any, source: Source, relation: tuple | None = None,
                owner: ShadowNode | None = None) -> None:
        """``value`` was read from outside through ``source``: give it a node and guards."""
        if is_immutable(value):
            if self.read_log is not None:
                self._log_read(value, source)
            self.add_guard(ValueGuard(source, value))
            if owner is not None and relation is not None:
                self.rg.add_initial_ref(owner, relation, Const(value))
            return
        node = self.node(value)
        if node is not None:
            if node.source is not None and node.source != source:
                self.rg.external(value, source)   # a second path to a known object: an alias,
                                                  # guarded as `second is first` (codegen)
            if owner is not None and relation is not None:
                self.rg.add_initial_ref(owner, relation, node.node_id)
            return
        if isinstance(value, torch.nn.parameter.UninitializedTensorMixin):
            raise BreakCompile(f"reads {source.describe()}, an uninitialized parameter of a lazy module "
                               "(the call that initializes it runs eagerly)")
        node = self.rg.external(value, source, relation if owner is None else None)
        if owner is not None and relation is not None:
            self.rg.add_initial_ref(owner, relation, node.node_id)
        guard = guard_for_object(value, source)
        if guard is not None:
            self.add_guard(guard)
        if isinstance(value, types.MethodType) and not is_immutable(value.__self__):
            # The bound object is outside state too (its attributes are read by the method).
            self.on_read(value.__self__, AttrSource(source, "__self__"), ("attr", "__self__"), node)

    def _guard_protocol(self, ins, stack: list) -> None:
        """An instruction that looks up dunders on its operands' types (``a + b``, ``if a``,
        ``a[k]``, ``with a``): what each lookup finds, or that it finds nothing, is outside state
        (``C.__add__ = f`` between calls changes the program)."""
        event = ins.opname if ins.opname in PROTOCOL_EVENTS else ins.real
        symbol = ins.argrepr if event == "BINARY_OP" else ins.argval
        for value, names in protocol_lookups(event, symbol, stack):
            self._guard_dunders(value, names)

    def _guard_dunders(self, value: Any, names) -> None:
        """Pin ``type(value)`` and what looking up each of ``names`` on it finds."""
        node = self.node(value)
        if node is not None and node.source is not None and not isinstance(node.source, ConstSource):
            self.add_guard(TypeGuard(node.source, type(value)))   # identity guards do not pin `__class__`
        for name in names:
            self._guard_class_attr(type(value), name)

    def _guard_dunder_entry(self, frame, code) -> None:
        """A frame entered by the interpreter for a dunder of its first argument's class (``len(c)``
        runs ``C.__len__``, ``sorted`` runs ``__lt__``): which function the class holds there is
        outside state, as for the operators :meth:`_guard_protocol` sees."""
        if not code.co_argcount:
            return
        first = frame.f_locals.get(code.co_varnames[0], NO_VALUE)
        cls = type(first)
        if not is_mutable_class(cls) or isinstance(first, (torch.Tensor, type)):
            return
        be = capture.backend()
        fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
        if isinstance(fn, types.FunctionType):
            names = [name for _klass, name in dunders_naming(cls, fn)]
            if names:
                self._guard_dunders(first, names)

    def _guard_class_attr(self, cls: type, name: str, after: type | None = None) -> None:
        """``cls.name`` resolved through the MRO: the class that defines it still holds the same
        object and no class before it in the MRO has gained one (methods, properties,
        staticmethods and class values replaced on a class, or reached through ``super()``,
        which starts the search ``after`` a class)."""
        mro = cls.__mro__
        if after is not None and after in mro:
            mro = mro[mro.index(after) + 1:]
        if is_mutable_class(cls):
            # the MRO itself: `C.__bases__ = (...)` gives C a new `__mro__` tuple
            self.add_guard(IdGuard(AttrSource(ConstSource(cls, cls.__qualname__), "__mro__"), cls.__mro__))
        for klass in mro:
            if not is_mutable_class(klass):
                if name in klass.__dict__:
                    return   # found in a class that cannot change (object, a builtin or extension type)
                continue
            ksrc = class_dict_source(klass)
            if name in klass.__dict__:
                value = klass.__dict__[name]
                if is_immutable(value):
                    self.add_guard(ValueGuard(ItemSource(ksrc, name), value))
                else:
                    self.add_guard(IdGuard(ItemSource(ksrc, name), value))
                return
            self.add_guard(AbsentGuard(ConstSource(klass, klass.__qualname__), name))

    def _guard_identity(self, value: Any) -> None:
        """The program looked at ``value``'s identity (``is``, ``==`` without ``__eq__``, a
        hash-keyed lookup, ``id()``): an object from outside must stay that very object."""
        if is_immutable(value) or isinstance(value, torch.Tensor):
            return
        node = self.node(value)
        if node is not None and node.source is not None and not isinstance(node.source, ConstSource):
            self.add_guard(IdGuard(node.source, value))

    def full_read(self, value: Any, _depth: int = 0) -> None:
        """ValueRead of a container: its whole structure is guarded (paper §4.1, implicit visits)."""
        node = self.node(value)
        logged = node is not None and self.rg.has_logged_calls(node)
        if logged and node.node_id in self.set_entry_keys and all(m == "add" for m, _ in self.rg.logged_calls(node)):
            # A set read after adds: its contents at entry are guarded (in the order the program
            # saw) and the adds are still replayed on the real set, which leaves eager's table; a
            # set emptied and refilled would not (magpy.codegen refuses that).
            if not node.full_read:
                node.full_read = True
                if node.source is not None:
                    snap = node.snapshot
                    if not all(is_immutable(k) for k in snap):
                        raise BreakCompile(f"set of objects at {node.source.describe()} is read")
                    self.add_guard(ValueGuard(node.source, set(snap), self.set_entry_keys[node.node_id]))
            return
        if logged:
            # Read after logged changes: guard the state it had at entry (kept when the first
            # change was logged) and reproduce its final contents instead of replaying calls.
            self.rg.fold_calls(node)
            self.mutated.add(node.node_id)
            value = node.snapshot
        if node is None or node.full_read or _depth > 8:
            if node is None and type(value) in (list, tuple, dict) and _depth <= 8:
                for e in (value.values() if isinstance(value, dict) else value):
                    if type(e) in CONTAINER_TYPES:
                        self.full_read(e, _depth + 1)
            return
        node.full_read = True
        if node.source is None:
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
            for _, e in items:
                if type(e) in CONTAINER_TYPES:
                    self.full_read(e, _depth + 1)
            return
        src = node.source
        if isinstance(value, (list, tuple)) or (isinstance(value, (collections_deque,))):
            self.add_guard(LenGuard(src, len(value)))
            node.snapshot = list(value)
            for i, e in enumerate(value):
                self.on_read(e, ItemSource(src, i), ("item", i), node)
                if type(e) in CONTAINER_TYPES or isinstance(e, (list, dict, tuple)):
                    self.full_read(e, _depth + 1)
        elif isinstance(value, MAPPINGS):
            keys = list(value.keys())
            if not all(is_immutable(k) for k in keys):
                raise BreakCompile(f"dict with non-constant keys at {src.describe()} is read")
            self.add_guard(KeysGuard(src, keys))
            node.snapshot = dict(value)
            for k in keys:
                e = value[k]
                self.on_read(e, ItemSource(src, k), ("item", k), node)
                if isinstance(e, (list, dict, tuple)):
                    self.full_read(e, _depth + 1)
        elif isinstance(value, (set, frozenset)):
            if not all(is_immutable(k) for k in value):
                raise BreakCompile(f"set of objects at {src.describe()} is read")
            self.add_guard(ValueGuard(src, frozenset(value) if isinstance(value, frozenset) else set(value),
                                      exact_key(value)))
            node.snapshot = set(value)

    def _read_args(self, values, ann: Annotation | None = None, fn: Any = None) -> None:
        """Apply ValueRead to call inputs: containers guarded whole, tensor values -> dynamic.

        Reading a container's structure does not read the tensors it holds, except for
        functions in :data:`ELEMENT_READERS` (``sorted``, ``sum``, ``max``...).
        """
        for i, v in enumerate(values):
            if ann is not None and not ann.reads(i):
                continue
            if isinstance(v, torch.Tensor):
                if fn is len:
                    self.check_shape_read(v, "`len`")
                if fn is len or fn is isinstance or self._value_guard(v):
                    continue   # len(tensor) is shape[0]: metadata
                self._dynamic(f"passes a tensor to `{getattr(fn, '__qualname__', fn)}`, which reads its value")
            if fn is len and type(v) in (list, tuple, dict, set, collections_deque):
                node = self.node(v)
                if node is not None and node.source is not None and not node.full_read \
                        and not self.rg.has_logged_calls(node) and node.node_id not in self.mutated:
                    # `len(self.heap)`: the length is what is read, not the items (the container's
                    # type is guarded where it was read; changes before this would need its entry state)
                    self.add_guard(LenGuard(node.source, len(v)))
                    continue
            if fn is len and items_unguarded(v) and self._from_outside(v):
                self.add_guard(LenGuard(self.node(v).source, len(v)))   # `len(buf)`: its length only
                continue
            self._unguarded_items(v, f"passes to `{getattr(fn, '__qualname__', fn)}`")
            if isinstance(v, (*CONTAINER_TYPES, collections_deque, types.MappingProxyType)):
                self.full_read(v)
                elements = list(v.keys()) if isinstance(v, dict) else v   # iterating a dict gives keys
                if fn in ELEMENT_READERS and T.contains_tensor(elements):
                    self._dynamic(f"`{getattr(fn, '__qualname__', fn)}` reads the values of tensors in a container")

    def _log_mutation(self, obj, method: str, args: list) -> bool:
        """Changes that do not read the container (append, insert, d[k] = v...) are replayed
        by the mock as the same calls, so the container's contents need no guard."""
        node = self.node(obj)
        if node is None or node.source is None or node.full_read or node.node_id in self.mutated:
            return False
        if method == "extend":
            if not isinstance(args[0], (list, tuple)):
                return False
            args = [list(args[0])]
        if method in ("insert", "__setitem__") and not is_immutable(args[0]):
            return False
        if not self.rg.has_logged_calls(node):
            node.snapshot = type(obj)(obj) if type(obj) in (list, dict, set) else list(obj)
            if type(obj) is set:   # (a copy need not iterate in the set's order: keep the order seen)
                self.set_entry_keys[node.node_id] = exact_key(obj)
        self.rg.log_call(node, method, args)
        return True

    def _held_node(self, obj: Any) -> ShadowNode | None:
        """The node of ``obj``; classes and modules without one are held by the record itself."""
        node = self.node(obj)
        if node is None and isinstance(obj, (type, types.ModuleType)):
            node = self.rg.external(obj, ConstSource(obj, getattr(obj, "__qualname__", None) or obj.__name__))
        return node

    def _mutate(self, obj: Any) -> None:
        """An in-place change of ``obj`` (InPlace=True): full guard first, then a new version."""
        node = self.node(obj)
        if node is None and not isinstance(obj, torch.Tensor):
            raise BreakCompile(f"changes a {type(obj).__name__} whose origin MagPy did not see in place")
        if node is None or node.source is None:
            return
        if isinstance(obj, (list, dict, set, collections_deque)):
            self.full_read(obj)
        elif not isinstance(obj, torch.Tensor):
            raise BreakCompile(f"in-place change of a {type(obj).__name__} from outside is not reproducible")
        self.rg.inplace(node)
        self.mutated.add(node.node_id)

    def _new_outputs(self, values) -> None:
        for v in values:
            if v is capture.NULL or is_immutable(v) or isinstance(v, NO_NODE_TYPES):
                continue
            if self.node(v) is None:
                self.rg.new(v)

    # -- per-event update rules (every CPython version) -------------------------------------------------------------------
    def _pend(self, fs: FrameState, post, data=None, opaque: bool = False) -> None:
        fs.pending = (post, data)
        if opaque:
            self.opaque_frame = fs.frame

    def _post_new(self, fs, stack, n):
        self._new_outputs(stack[-n:] if n else ())

    def op_PASS(self, fs: FrameState, ins, stack: list) -> None:
        """Moves references only (stack shuffles, jumps, constants): nothing to track."""
        if self.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)

    def op_NEW(self, fs: FrameState, ins, stack: list) -> None:
        """Leaves a new object on top that only references its inputs (a container, a function)."""
        if self.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)
        self._pend(fs, self._post_new_function if ins.real == "MAKE_FUNCTION" else self._post_new, 1)

    def _post_new_function(self, fs, stack, n):
        """A function made in the call: which frame made it (its closure holds that frame's cells,
        which a split that resumes both must share, magpy.splits)."""
        self._post_new(fs, stack, n)
        fn = stack[-1]
        if isinstance(fn, types.FunctionType) and fn.__code__.co_freevars:
            # (the frame is held until the run ends: its id names its cells, and must not be reused)
            self.made_functions[id(fn)] = (fn, fs.frame)

    def _check_hashed(self, ins, stack: list) -> None:
        """Set items and dict keys are hashed: a number read from a tensor cannot be one."""
        real = ins.real
        if real == "BUILD_SET":
            keys = stack[len(stack) - ins.arg:] if ins.arg else []
        elif real == "BUILD_MAP":
            keys = stack[len(stack) - 2 * ins.arg::2] if ins.arg else []
        else:   # SET_ADD, SET_UPDATE: the top; MAP_ADD: key below the value
            keys = [stack[-2] if real == "MAP_ADD" else stack[-1]]
        if self.holds_scalar(keys):
            self.scalar_escape("hashes (a set item or dict key)", keys)

    def op_UNSUPPORTED(self, fs: FrameState, ins, stack: list) -> None:
        """An opcode MagPy has no rule for on this CPython: the call runs eagerly."""
        raise BreakCompile(f"instruction {ins.real} is not supported by MagPy on CPython "
                           f"{DECODER.version[0]}.{DECODER.version[1]}")

    # loads and stores of locals
    def op_LOAD_FAST(self, fs, ins, stack):
        # (a LOAD_FAST of a cell variable loads the cell itself, for a closure: 3.13)
        if fs.is_top and ins.argval in fs.unwritten_params and ins.argval not in fs.code.co_cellvars:
            self._pend(fs, self._post_param, ins.argval)

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def _post_param(self, fs, stack, name):
        if self.lifted_values and self.lift_value(fs, stack, self.param_sources[name]):
            return   # a number argument that changes between calls: a graph input
        self.on_read(stack[-1], self.param_sources[name], ("arg", name))

    def op_STORE_FAST(self, fs, ins, stack):
        if fs.is_top:
            self._store_local(fs, ins.argval, stack[-1])

    def op_DELETE_FAST(self, fs, ins, stack):
        if fs.is_top:
            fs.unwritten_params.discard(ins.argval)

    def _store_local(self, fs, name: str, value) -> None:
        """A store to a local of the top frame: a parameter holds its argument's source while it
        holds the very object passed (3.12+ puts a parameter back after an inlined comprehension
        that reused its name)."""
        if name in self.param_values and value is self.param_values[name]:
            fs.unwritten_params.add(name)
        else:
            fs.unwritten_params.discard(name)

    def op_LOAD_FAST_LOAD_FAST(self, fs, ins, stack):
        if fs.is_top and (ins.argval[0] in fs.unwritten_params or ins.argval[1] in fs.unwritten_params):
            self._pend(fs, self._post_param_pair, ins.argval)

    def _post_param_pair(self, fs, stack, names):
        for k, (name, value) in enumerate(zip(names, stack[-2:])):
            if name in fs.unwritten_params and name not in fs.code.co_cellvars:
                if k == 1 and self.lifted_values and self.lift_value(fs, stack, self.param_sources[name]):
                    continue   # (only the top of the stack can be replaced by a followed number)
                self.on_read(value, self.param_sources[name], ("arg", name))

    def op_STORE_FAST_LOAD_FAST(self, fs, ins, stack):
        if fs.is_top:
            self._store_local(fs, ins.argval[0], stack[-1])
            if ins.argval[1] in fs.unwritten_params and ins.argval[1] not in fs.code.co_cellvars:
                self._pend(fs, self._post_param, ins.argval[1])

    def op_STORE_FAST_STORE_FAST(self, fs, ins, stack):
        if fs.is_top:
            self._store_local(fs, ins.argval[0], stack[-1])
            self._store_local(fs, ins.argval[1], stack[-2])

    def op_LOAD_DEREF(self, fs, ins, stack):
        name = ins.argval
        if fs.is_top and name in fs.unwritten_params:
            self._pend(fs, self._post_param, name)
            return
        code = fs.code
        if name in code.co_freevars:
            cell = self._cell_of(fs, code.co_freevars.index(name))
            if cell is not None:
                if not self.rg.cell_written(cell):
                    self._pend(fs, self._post_cell, cell)
                return
        if name in self.param_values:
            # A comprehension, generator expression, lambda or inner function made during the
            # call reads a cell of the frame that made it: the compiled frame's cell of an
            # argument holds that argument until a frame stores to it, and where only nested
            # code reads it, no load of the compiled frame ever saw it. (The compiled frame
            # itself, after a store gave the cell back: an inlined comprehension's, 3.12+.)
            self._pend(fs, self._post_nested_param, name)

    op_LOAD_CLASSDEREF = op_LOAD_DEREF

    def _post_nested_param(self, fs, stack, name):
        """The value is the very object the top frame's parameter ``name`` was called with: it
        has that parameter's source (an equal value stored by the call would have been guarded
        where it was read; the same object read twice gets the same guard)."""
        if stack and (stack[-1] is self.param_values[name] or stack[-1] is self.frame_packed.get(name, NO_VALUE)):
            self._post_param(fs, stack, name)

    def _cell_of(self, fs, idx):
        if fs.is_top:
            return self.top_closure[idx] if idx < len(self.top_closure) else None
        if idx in passed_free_cells(fs.code):
            return None   # a cell of the split call, passed to its resume function (magpy.splits)
        fn = capture.backend().frame_function(fs.frame) if hasattr(capture.backend(), "frame_function") else None
        if fn is None or fn.__closure__ is None:
            return None
        cell = fn.__closure__[idx]
        fn_node = self.node(fn)
        if fn_node is not None and fn_node.source is None:
            # A closure created during this call: its cells are the call's own (made by
            # MAKE_CELL in a monitored frame), except those passed down from the closure of the
            # compiled function or of a function from outside, which outlive the call
            # (`lambda k: table[k]` over such a free variable reads outside state).
            if self.outside_cells.get(id(cell)) is not cell:
                return None
        return cell

    def _post_cell(self, fs, stack, cell):
        self.on_read(stack[-1], CellSource(ConstSource(cell, "cell")), None)

    def op_STORE_DEREF(self, fs, ins, stack):
        name = ins.argval
        if fs.is_top:
            fs.unwritten_params.discard(name)
        code = fs.code
        if name in code.co_freevars:
            cell = self._cell_of(fs, code.co_freevars.index(name))
            if cell is not None:
                self.rg.write_cell(cell, stack[-1])

    def op_LOAD_GLOBAL(self, fs, ins, stack):
        name = ins.argval
        g = fs.frame.f_globals
        if self.rg.global_written(g, name):
            return
        if name in g:
            self._pend(fs, self._post_global, (g, name, ins))
            return
        b = fs.frame.f_builtins
        if isinstance(b, dict) and name in b:
            # A builtin: it stays one only while no global of that name appears, and it is that
            # very object while `builtins.name` is not rebound.
            self.add_guard(KeyAbsentGuard(ConstSource(g, f"{g.get('__name__', '?')}.__dict__"), name))
            self._pend(fs, self._post_global, (b, name, ins))

    def _post_global(self, fs, stack, data):
        g, name, ins = data
        if self.lifted_values and DECODER.pushed(ins, stack) is stack[-1] \
                and self.lift_value(fs, stack, GlobalSource(g, name)):
            return
        # Imported modules, classes and functions are guarded like any other global:
        # rebinding `cfg`, `act` or `F` between calls is seen.
        self.on_read(DECODER.pushed(ins, stack), GlobalSource(g, name), ("global", id(g), name))

    def op_STORE_GLOBAL(self, fs, ins, stack):
        self.rg.write_global(fs.frame.f_globals, ins.argval, stack[-1])

    def op_DELETE_GLOBAL(self, fs, ins, stack):
        self.rg.write_global(fs.frame.f_globals, ins.argval)

    # imports
    def op_IMPORT_NAME(self, fs, ins, stack):
        """``import a.b`` / ``from .m import x``. With the module already in ``sys.modules`` the
        statement only looks it up there: what it leaves is read from outside through
        ``sys.modules[name]`` and guarded by identity (a module replaced there between calls is
        a miss). A module not imported yet would run its code on this import, which a record
        cannot replay: the call breaks here."""
        name, level, fromlist = ins.argval, stack[-2], stack[-1]
        b = fs.frame.f_builtins
        imp = b.get("__import__") if isinstance(b, dict) else None
        if imp is not _BUILTIN_IMPORT:
            raise BreakCompile("`__import__` is replaced: the import statement calls another function")
        self.add_guard(IdGuard(ItemSource(ConstSource(b, "builtins.__dict__"), "__import__"), imp))
        if not isinstance(level, int) or level < 0:
            raise BreakCompile("an import statement with an unusual level")
        abs_name = name
        if level:
            g = fs.frame.f_globals
            package = g.get("__package__")
            if not isinstance(package, str) or not package or self.rg.global_written(g, "__package__"):
                raise BreakCompile("a relative import in a module without `__package__`")
            self.add_guard(ValueGuard(GlobalSource(g, "__package__"), package))
            abs_name = _absolute_import_name(name, package, level)
            if abs_name is None:
                raise BreakCompile("a relative import beyond the top-level package")
        mod = self._imported_module(abs_name)
        if fromlist:
            if hasattr(mod, "__path__") and any(x == "*" or x not in getattr(mod, "__dict__", {}) for x in fromlist):
                # `from pkg import sub` of a name the package lacks imports the submodule
                # (importlib's _handle_fromlist): it may run its code.
                raise BreakCompile(f"`from {abs_name} import ...` may import a submodule")
            result = abs_name
        elif "." in name:
            # `import a.b` binds the top package: `a` (or the package part of a relative name)
            result = abs_name[:len(abs_name) - len(name) + name.index(".")]
        else:
            result = abs_name
        if result != abs_name:
            mod = self._imported_module(result)
        self.on_read(mod, ItemSource(_SYS_MODULES, result))

    def _imported_module(self, name: str) -> Any:
        """``sys.modules[name]``, fully imported, pinned by identity; else a break."""
        mod = sys.modules.get(name)
        if mod is None or getattr(getattr(mod, "__spec__", None), "_initializing", False):
            raise BreakCompile(f"imports `{name}`, which is not imported yet (its first import runs "
                               "the module's code)")
        self.add_guard(IdGuard(ItemSource(_SYS_MODULES, name), mod))
        return mod

    def op_IMPORT_FROM(self, fs, ins, stack):
        """``from m import name``: an attribute read of the module ``m`` (sourced where the
        import found it), guarded like any other (``m.name = ...`` between calls is a miss)."""
        mod, name = stack[-1], ins.argval
        if type(mod) is types.ModuleType and name not in mod.__dict__ and "__getattr__" not in mod.__dict__ \
                and not hasattr(types.ModuleType, name):
            # the interpreter falls back to `sys.modules["m.name"]` (a submodule being imported)
            raise BreakCompile(f"`from ... import {name}` of a submodule that is not an attribute of its package")
        self._attr(fs, mod, name, method=False)

    # attributes
    def op_LOAD_ATTR(self, fs, ins, stack):
        if self.numpy_node(stack[-1]) is not None:
            if ins.method or callable(getattr(stack[-1], ins.argval, None)):
                return   # a method: the call decides (a numpy node, or an assumption)
            # `a.shape`, `a.T`, `a.dtype`: a node; an array is followed, anything else assumed
            self.numpy_op(fs, "function", getattr, (stack[-1], ins.argval), {})
            return
        if self.scalar_nodes and self.scalar_node(stack[-1]) is not None:
            self.scalar_escape(f"reads attribute `{ins.argval}` of", stack[-1])
        self._attr(fs, stack[-1], ins.argval, method=ins.method)

    def op_LOAD_SUPER_ATTR(self, fs, ins, stack):
        # `super().name` (3.12+) without a super object: the lookup starts after `cls` in the
        # MRO of self's class; `cls` and `self` were loaded (and guarded) like any cell or local.
        sup, cls, obj = stack[-3], stack[-2], stack[-1]
        if sup is not super or not isinstance(cls, type):
            raise BreakCompile("`super` is rebound: LOAD_SUPER_ATTR calls another object")
        self_cls = obj if isinstance(obj, type) and issubclass(obj, cls) else type(obj)
        self._guard_class_attr(self_cls, ins.argval, after=cls)
        self._pend(fs, self._post_new_attr, ins.method)

    def _attr(self, fs, obj, name: str, method: bool) -> None:
        if name == "__dict__" and isinstance(obj, type):
            self._pend(fs, self._post_class_dict, obj)   # (a read-only view: guarded where read)
            return
        if isinstance(obj, torch.Tensor):
            if name == "is_leaf":
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.add_guard(LeafGuard(node.source, obj.is_leaf))   # not part of the tensor check
                elif node is None:
                    raise BreakCompile("reads `is_leaf` of a tensor of unknown origin")
            if name in ("shape", "ndim"):
                self.check_shape_read(obj, f"reads `.{name}`")
            if name == "shape" and self.shape_is_lifted(obj):
                self.start_size_read(fs, obj, "shape")
                return
            if name in T.META_ATTRS or method or callable(getattr(type(obj), name, None)):
                return   # metadata (guarded statically) or a bound method, classified when called
            if name in T.OP_ATTRS:
                self._pend(fs, self._post_tensor_attr, (obj, name), opaque=True)
                return
            if name in getattr(obj, "__dict__", {}) and not any(name in k.__dict__ for k in type(obj).__mro__):
                # an attribute set on the tensor object (`self.weight.fast`): read like any attribute
                self._tensor_user_attr(fs, obj, name)
                return
            raise BreakCompile(f"reads tensor attribute `{name}`")
        if type(obj) is super:
            self_cls = obj.__self_class__
            if self_cls is not None:
                self._guard_class_attr(self_cls, name, after=obj.__thisclass__)
        # A class or module reached without a path (`type(self)`, `cls` in a classmethod, a
        # module imported inside a function) is held by the record; its attributes are guarded.
        node = self._held_node(obj)
        if node is not None and isinstance(obj, torch.jit.ScriptModule):
            # A scripted module keeps its methods, parameters and attributes in C++ (read through
            # its __getattr__, not followed): the value read is what the record sees.
            self._pend(fs, self._post_script_attr, (obj, node, name, method), opaque=True)
            return
        if node is None and not is_immutable(obj) and not isinstance(obj, NO_NODE_TYPES):
            # An object MagPy never saw arrive (passed by C code it does not follow): its
            # attributes could be outside state with no path to guard them.
            raise BreakCompile(f"reads attribute `{name}` of a {type(obj).__name__} whose origin MagPy did not see")
        if node is not None and not isinstance(obj, (type, types.ModuleType)) \
                and attr_location(obj, name)[0] == "descriptor":
            # Its __get__ runs monitored with the descriptor object as `self`: an object the
            # class holds (pinned), its attributes outside state like any other.
            if node.source is not None:
                if has_instance_dict(obj):
                    self.add_guard(AbsentGuard(node.source, name))
                self.add_guard(TypeGuard(node.source, type(obj)))
            self._guard_class_attr(type(obj), name)
            klass = next(k for k in type(obj).__mro__ if name in k.__dict__)
            ksrc = class_dict_source(klass)
            self.on_read(klass.__dict__[name], ItemSource(ksrc, name))
            self._pend(fs, self._post_new_attr, method)
            return
        if node is None or node.source is None:
            opaque = isinstance(obj, torch.nn.Module)
            self._pend(fs, self._post_new_attr, method, opaque=opaque)
            return
        rel = ("attr", name)
        if self.rg.read(node, rel) is not None:
            self._pend(fs, self._post_new_attr, method, opaque=isinstance(obj, torch.nn.Module))
            return
        where, via = attr_location(obj, name)
        if where in ("class_fn", "property", "class_value"):
            if has_instance_dict(obj) and where != "property":
                # Found on the class: an instance attribute of that name set later would shadow it
                # (not a property's: a data descriptor comes first, whatever the instance holds).
                self.add_guard(AbsentGuard(node.source, name))
            if not isinstance(obj, (type, types.ModuleType)):
                self.add_guard(TypeGuard(node.source, type(obj)))   # identity guards do not pin `__class__`
            self._guard_class_attr(type(obj), name)
        if where == "class_fn":
            self._pend(fs, self._post_new_attr, method)
            return
        if where == "property":
            self._pend(fs, self._post_new_attr, method)   # the getter runs monitored
            return
        if where == "getattr_hook":
            # The class's Python `__getattr__` computes the name (runs monitored): it stays absent
            # from the instance and the class, and the class keeps that very function.
            if has_instance_dict(obj):
                self.add_guard(AbsentGuard(node.source, name))
            self.add_guard(TypeGuard(node.source, type(obj)))
            self._guard_class_attr(type(obj), name)
            self._guard_class_attr(type(obj), "__getattribute__")
            self._guard_class_attr(type(obj), "__getattr__")
            self._pend(fs, self._post_new_attr, method)
            return
        module_getattr = _module_getattr(obj) if where == "module" and via == "" else None
        if module_getattr is not None:
            # PEP 562: the module's own `__getattr__` computes the name (a lazy import, a
            # deprecation shim, a counter): it runs monitored, like a property's getter, while
            # the name stays absent from the module and the function stays the module's.
            self.add_guard(AbsentGuard(node.source, name))
            self.on_read(module_getattr, AttrSource(node.source, "__getattr__", "__dict__"))
            self._pend(fs, self._post_new_attr, method)
            return
        self._guard_attr_precedence(obj, node, name, where, via)
        src = AttrSource(node.source, name, via)
        self._pend(fs, self._post_attr, (node, rel, src, method), opaque=True)

    def _guard_attr_precedence(self, obj, node: ShadowNode, name: str, where: str, via: str) -> None:
        """``obj.name`` fetched straight from where this run found it (the instance ``__dict__``,
        an nn.Module table): the record also holds only while CPython's lookup still ends there.
        A data descriptor on ``type(obj).__mro__`` comes before the instance dict; the instance
        dict and any class attribute come before ``nn.Module.__getattr__``, which searches
        ``_parameters``, ``_buffers``, ``_modules`` in that order. Guarded on held class dicts
        (batched): the class is the same, what the MRO lookup of ``name`` finds (or that it finds
        nothing) is unchanged, no class gained a ``__getattribute__``; for a table entry, the name
        is absent from the instance dict and from the tables searched before it."""
        if where not in ("instance", "module_table") or isinstance(obj, (type, types.ModuleType)):
            return
        cls = type(obj)
        self.add_guard(TypeGuard(node.source, cls))   # (identity guards do not pin `__class__`)
        self._guard_class_attr(cls, name)
        self._guard_class_attr(cls, "__getattribute__")
        if where == "module_table":
            self.add_guard(AbsentGuard(node.source, name))
            self._guard_class_attr(cls, "__getattr__")
            for table in ("_parameters", "_buffers", "_modules"):
                if table == via:
                    break
                self.add_guard(KeyAbsentGuard(AttrSource(node.source, table, "__dict__"), name))

    def _post_attr(self, fs, stack, data):
        node, rel, src, method = data
        value, unbound = DECODER.method_result(stack) if method else (stack[-1], False)
        if unbound:
            return   # an unbound function from the class; `self` stays as it was
        if self.lifted_values and not method and self.lift_value(fs, stack, src):
            return
        self.on_read(value, src, rel, node)

    def _post_class_dict(self, fs, stack, klass):
        """``C.__dict__`` (or ``vars(C)``): a live, read-only view of the class's namespace, read
        like a dict from outside (``"forward" in C.__dict__``, ``C.__dict__.get(name)``): each
        read is guarded on ``C.__dict__`` of that very class, any other use reads it whole."""
        proxy = stack[-1]
        if isinstance(proxy, types.MappingProxyType):
            self.on_read(proxy, class_dict_source(klass))

    def _post_script_attr(self, fs, stack, data):
        obj, node, name, method = data
        value = DECODER.method_result(stack)[0] if method else stack[-1]
        if isinstance(value, torch._C.ScriptMethod) or node.source is None:
            # Which compiled method runs is fixed by the module object: guard that object.
            self._guard_identity(obj)
            self._new_outputs([value])
            return
        self.on_read(value, AttrSource(node.source, name), ("attr", name), node)

    def _post_new_attr(self, fs, stack, method):
        self._new_outputs([DECODER.method_result(stack)[0] if method else stack[-1]])

    def _post_tensor_attr(self, fs, stack, data):
        obj, name = data
        self.record_op("function", getattr, [obj, name], {}, stack[-1], True, name)

    def op_STORE_ATTR(self, fs, ins, stack):
        self._attr_write(fs, stack[-1], ins.argval, stack[-2])

    def _post_requires_grad(self, fs, stack, data):
        t, value = data
        self.graph.call("method", "requires_grad_", (self.to_arg(t), value), {})

    def _post_set_data(self, fs, stack, data):
        t, value = data
        self.graph.call("function", set_data, (self.to_arg(t), self.to_arg(value)), {})
        outside = self._from_outside(t) or any(x is t for _, x in self.graph.inputs)
        self._tensor_mutated(t, None)
        self.mutates_outside = self.mutates_outside or outside

    def _attr_write(self, fs, obj, name: str, value) -> None:
        """``obj.name = value`` (``STORE_ATTR`` or the builtin ``setattr``, which both go through
        ``type(obj).__setattr__``): a write the mock replays, or a property setter monitored."""
        if isinstance(obj, torch.Tensor):
            if name == "requires_grad" and value is obj.requires_grad:
                # A no-op (`mask.requires_grad = False` on a tensor that has none): for a tensor from
                # outside, its requires_grad is part of the tensor guard.
                self._pend(fs, self._post_nothing, None, opaque=True)
                return
            if name == "requires_grad" and type(value) is bool and type(obj) is torch.Tensor \
                    and obj.grad_fn is None and self.graph.node_of(obj) is not None and not self._from_outside(obj):
                # `out = torch.zeros(...); out.requires_grad = True`: a leaf the call made becomes one
                # autograd records, as `requires_grad_` in the graph, in program order.
                self._pend(fs, self._post_requires_grad, (obj, value), opaque=True)
                return
            if name == "data" and isinstance(value, torch.Tensor) and self.eager_graph \
                    and type(obj) in (torch.Tensor, torch.nn.Parameter) and type(value) in (torch.Tensor, torch.nn.Parameter) \
                    and all(self.graph.node_of(t) is not None or self._from_outside(t) for t in (obj, value)):
                # `u.data = l2normalize(w @ v)` (power iteration on a buffer, spectral norm): `set_data`
                # in the graph, in program order; the eager graph runs it on the very tensor.
                self._pend(fs, self._post_set_data, (obj, value), opaque=True)
                return
        node = self._held_node(obj)
        if isinstance(obj, torch.Tensor) and (hasattr(type(obj), name) or node is None or node.source is None):
            raise BreakCompile(f"writes tensor attribute `{name}`")
        # (`x.grid = None` on a tensor from outside: an attribute of the object's own __dict__,
        # no tensor property, replayed by the mock like any attribute write)
        if attr_location(obj, name)[0] == "property":
            self._pend(fs, self._post_nothing, None)   # the setter runs monitored: its own writes count
            return
        if node is None:
            raise BreakCompile(f"writes attribute `{name}` of a {type(obj).__name__} whose origin "
                               "MagPy did not see, so the write could not be replayed")
        if node.source is None:
            self._pend(fs, self._post_nothing, None, opaque=True)
            return
        self.rg.write_attr(node, name, value)
        self._pend(fs, self._post_nothing, None, opaque=True)

    def op_DELETE_ATTR(self, fs, ins, stack):
        obj = stack[-1]
        node = self._held_node(obj)
        if node is None:
            raise BreakCompile(f"deletes attribute `{ins.argval}` of an object of unknown origin")
        if node.source is not None:
            self.rg.write_attr(node, ins.argval)
        self._pend(fs, self._post_nothing, None, opaque=True)

    def _post_nothing(self, fs, stack, data):
        pass

    # subscripts
    def op_BINARY_SUBSCR(self, fs, ins, stack):
        self._subscr(fs, stack[-2], stack[-1])

    def op_BINARY_SLICE(self, fs, ins, stack):
        self._subscr(fs, stack[-3], slice(stack[-2], stack[-1]))

    def _subscr(self, fs, container, key) -> None:
        if self.numpy_node(container) is not None and not T.contains_tensor(key):
            self.numpy_op(fs, "function", _operator.getitem, (container, key), {})   # a[i], a[idx], a[:k]
            return
        if self.loop_indexes and self.is_loop_element(container, key):
            self._pend(fs, self._post_new, 1)   # xs[i] in `for i in range(len(xs))` (magpy.loops)
            return
        if self.scalar_nodes and not isinstance(container, torch.Tensor) and self.holds_scalar(key):
            self.scalar_escape("indexes a container with", key)
        if isinstance(container, torch.Tensor):
            self._pend_op(fs, "function", _getitem, [container, key], {}, "getitem")
            return
        node = self.node(container)
        if isinstance(key, torch.Tensor):
            raise BreakCompile("indexes a Python container with a tensor")
        if node is not None and node.source is not None and type(key) is not slice \
                and (is_immutable(key) or (isinstance(container, dict) and _identity_key(key)
                                           and self._from_outside(key))) \
                and isinstance(container, (list, tuple, *MAPPINGS, collections_deque)) \
                and (type(key) is int or not isinstance(container, collections_deque)):
            rel = ("item", key)
            if self.rg.read(node, rel) is None and node.node_id not in self.mutated:
                if not self._positions_moved(node, key):
                    self._pend(fs, self._post_item, (node, rel, ItemSource(node.source, key)))
                    return
                # logged calls moved the items (`xs.insert(0, v)`, `q.appendleft(v)`) before this
                # read: guarded whole at its entry state, the item is what it holds now
                self.full_read(container)
        elif node is not None and node.source is not None \
                and isinstance(container, (list, tuple, *MAPPINGS, collections_deque)):
            self.full_read(container)
        else:
            self._unguarded_items(container, "reads an item of")
        self._pend(fs, self._post_new, 1)

    def _positions_moved(self, node: ShadowNode, key: Any) -> bool:
        """Did calls logged on a sequence this run (:meth:`_log_mutation`) move its items, so
        that index ``key`` no longer names the item it named at entry?"""
        logged = self.rg.logged_calls(node)
        if type(key) is not int:
            return False
        shifting = ("insert", "appendleft", "extendleft") + (("append", "extend") if key < 0 else ())
        return any(method in shifting for method, _args in logged)

    def _unguarded_items(self, value: Any, what: str) -> None:
        """The program reads the items of ``value`` in native code (``a[i]``, ``for x in a``,
        ``sum(a)``): a container from outside whose items MagPy cannot guard one by one
        (:func:`items_unguarded`: ``array.array``, ``bytearray``, ``memoryview``...) makes the
        read dynamic. Its items have no source; taking them as values of the record would bake
        in what this run saw."""
        if items_unguarded(value):
            node = self.node(value)
            if node is None or node.source is not None:
                where = node.source.describe() if node is not None else "an object of unknown origin"
                raise BreakCompile(f"{what} a `{type(value).__name__}` from outside ({where}), "
                                   "whose items MagPy cannot guard")

    def _from_outside(self, value: Any) -> bool:
        """Was ``value`` read from outside (it has a source, so it is guarded)?"""
        node = self.node(value)
        return node is not None and node.source is not None

    def _post_item(self, fs, stack, data):
        node, rel, src = data
        if self.lifted_values and self.lift_value(fs, stack, src):
            return
        self.on_read(stack[-1], src, rel, node)

    def op_STORE_SUBSCR(self, fs, ins, stack):
        self._store_subscr(fs, stack[-2], stack[-1], stack[-3])

    def op_STORE_SLICE(self, fs, ins, stack):
        self._store_subscr(fs, stack[-3], slice(stack[-2], stack[-1]), stack[-4])

    def _store_subscr(self, fs, container, key, value) -> None:
        if self.numpy_node(container) is not None:
            self._dynamic("changes an array read from tensor values in place (item assignment)")
        if self.loop_indexes and self.is_loop_element(container, key):
            self._pend(fs, self._post_new, 1)   # xs[i] in `for i in range(len(xs))` (magpy.loops)
            return
        if self.scalar_nodes and not isinstance(container, torch.Tensor) and self.holds_scalar(key):
            self.scalar_escape("indexes a container with", key)
        if isinstance(container, torch.Tensor):
            # (through a boolean mask too: the container keeps its shape; a value of the wrong
            # length fails in the graph as it does in eager)
            self._pend(fs, self._post_setitem, (container, key, value), opaque=True)
            return
        if isinstance(container, (dict, list)) and is_immutable(key) and \
                self._log_mutation(container, "__setitem__", [key, value]):
            self._pend(fs, self._post_nothing, None)
            return
        self._mutate(container)
        self._pend(fs, self._post_nothing, None)

    def _post_setitem(self, fs, stack, data):
        container, key, value = data
        self.graph.call("function", _operator.setitem,
                        (self.to_arg(container), self.to_arg(key), self.to_arg(value)), {})
        self._tensor_mutated(container, None)

    def op_DELETE_SUBSCR(self, fs, ins, stack):
        container = stack[-2]
        if self.holds_scalar(stack[-1]):
            self.scalar_escape("indexes a container with", stack[-1])
        if isinstance(container, torch.Tensor):
            raise BreakCompile("deletes from a tensor")
        self._mutate(container)

    # operators
    def op_BINARY_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        sym = ins.argrepr
        if self.scalar_nodes and not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor) \
                and (self.scalar_node(a) is not None or self.scalar_node(b) is not None
                     or (isinstance(a, str) and sym in ("%", "%=") and self.holds_scalar(b))):
            if self._numpy_operator(fs, sym, a, b):
                return
            if self.scalar_binary(fs, sym, a, b):
                return
            self.scalar_escape(f"applies `{sym}` to", a, b)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            fn = T.BINARY_OPS.get(sym if isinstance(a, torch.Tensor) else sym.rstrip("="))
            if fn is None:
                raise BreakCompile(f"unsupported tensor operator {sym}")
            self._pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
        announce_operator(sym, a, b)
        if sym.endswith("=") and isinstance(a, (list, dict, set, collections_deque)):
            self._mutate(a)
            self._read_args([b])
        else:
            for v in (a, b):
                if isinstance(v, CONTAINER_TYPES):
                    self._read_args([v])
        self._pend(fs, self._post_new, 1)

    def op_IS_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if self.scalar_nodes and (self.scalar_node(a) is not None or self.scalar_node(b) is not None) \
                and not any(a is s or b is s for s in _SINGLETONS):
            self._dynamic("compares the identity of a number read from a tensor value")
        na, nb = self.node(a), self.node(b)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            # Tensors from outside are not identity-guarded: guard this relation itself.
            if na is not None and nb is not None and na.source is not None and nb.source is not None:
                self.add_guard(SameGuard(na.source, nb.source, a is b))
            elif (na is None or na.source is not None) and (nb is None or nb.source is not None) \
                    and not (a is None or b is None):
                raise BreakCompile("compares the identity of tensors of unknown origin")
            return
        if any(a is s or b is s for s in _SINGLETONS):
            # `x is None`: every object from outside already has a guard on its type or value,
            # which decides this (3.11+ compile it as a jump that reads nothing; 3.10 as IS_OP)
            return
        if na is not None and nb is not None and na.source is not None and nb.source is not None:
            # two objects from outside: the relation is guarded, not which objects they are
            # (`self.cache is acc` where both came in from outside holds for new objects too)
            self.add_guard(SameGuard(na.source, nb.source, a is b))
            return
        if (na is not None and na.source is None) or (nb is not None and nb.source is None):
            return   # an object made in the call is none from outside: the outcome is the path's
        self._guard_identity(a)
        self._guard_identity(b)

    def op_COMPARE_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            fn = T.COMPARE_OPS[ins.argval]
            if ins.to_bool:
                # 3.13: the comparison and its truth test in one instruction: the graph computes the
                # comparison, the outcome the run saw is assumed (magpy.scalars)
                if not all(type(v) is torch.Tensor or type(v) in (int, float, bool) for v in (a, b)) \
                        or any(isinstance(v, torch.Tensor) and v.numel() != 1 for v in (a, b)):
                    self._dynamic("branches on a tensor value (a tensor comparison used as a condition)")
                self._pend(fs, self._post_assumed, ("function", fn, (self.to_arg(a), self.to_arg(b))), opaque=True)
                return
            self._pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
        if self.holds_scalar(a) or self.holds_scalar(b):
            if self._numpy_operator(fs, ins.argval, a, b):
                return   # (3.13's comparison used as a condition leaves a bool: its outcome is assumed)
            self.scalar_compare(fs, T.COMPARE_OPS[ins.argval], a, b)
            return
        announce_operator(ins.argval, a, b)
        for v in (a, b):
            if not isinstance(v, CONTAINER_TYPES) and not isinstance(type(v).__eq__, types.FunctionType):
                self._guard_identity(v)   # compared by identity or by a native __eq__ MagPy cannot see into
        self._read_args([v for v in (a, b) if isinstance(v, CONTAINER_TYPES)])
        self._pend(fs, self._post_new, 1)   # (a new object, when not a bool: numpy's elementwise `arr > p`)

    def op_CONTAINS_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if self.holds_scalar(a) or self.holds_scalar(b):
            self.scalar_escape("tests membership with", a, b)
        if isinstance(a, torch.Tensor) and type(b) in (set, frozenset, dict) and self.node(b) is not None \
                and self.node(b).source is None:
            # A set or dict made in the call (a memo of parameters seen): tensors hash by
            # identity, so membership is identity, which the guards already fix.
            return
        if isinstance(b, torch.Tensor) or isinstance(a, torch.Tensor):
            self._dynamic("`in` reads tensor values")
        node = self.node(b)
        if node is not None and node.source is not None and isinstance(b, (set, frozenset, *MAPPINGS)) \
                and (is_immutable(a) or isinstance(a, (type, types.FunctionType))) and node.node_id not in self.mutated:
            self._pend(fs, self._post_contains, (node, a, bool(ins.arg)))   # guard `(a in b) is result`
            return
        self._unguarded_items(b, "tests membership in")
        if isinstance(b, CONTAINER_TYPES) or isinstance(b, collections_deque):
            self._read_args([b])
            self._guard_identity(a)
            for e in (b if isinstance(b, (list, tuple, collections_deque)) else ()):
                self._guard_identity(e)   # `in` compares by identity first

    def _post_contains(self, fs, stack, data):
        node, needle, inverted = data
        self.add_guard(ContainsGuard(node.source, needle, bool(stack[-1]) != inverted))

    def _numpy_operator(self, fs, sym: str, a, b) -> bool:
        """``a <sym> b`` with a numpy value read from tensors (``arr * 2``, ``arr > p``, ``s + 1``):
        a graph node. In place on an array (``arr += 1``) is dynamic."""
        if self.numpy_node(a) is None and self.numpy_node(b) is None:
            return False
        inplace = sym.endswith("=") and sym not in ("==", "!=", "<=", ">=")
        if inplace and isinstance(a, NUMPY_VALUES[0]) and self.numpy_node(a) is not None:
            self._dynamic(f"changes an array read from tensor values in place (`{sym}`)")
        fn = T.COMPARE_OPS.get(sym) or T.BINARY_OPS.get(sym.rstrip("=") if inplace else sym)
        if fn is None or T.contains_tensor([a, b]):
            return False
        self.numpy_op(fs, "function", fn, (a, b), {})
        return True

    def _unary(self, fs, ins, stack):
        v = stack[-1]
        if self.numpy_node(v) is not None:
            self.numpy_op(fs, "function", T.UNARY_OPS[ins.opname], (v,), {})
            return
        if self.scalar_nodes and self.scalar_node(v) is not None:
            self.scalar_unary(fs, ins.opname, v)
            return
        if isinstance(v, torch.Tensor):
            fn = T.UNARY_OPS[ins.opname]
            self._pend_op(fs, "function", fn, [v], {}, fn.__name__)
            return
        self._pend(fs, self._post_new, 1)

    op_UNARY_NEGATIVE = op_UNARY_POSITIVE = op_UNARY_INVERT = _unary

    def _truth(self, v):
        if self.scalar_nodes and self.scalar_node(v) is not None:
            self.assume("truth", self.scalar_node(v), bool(v))
        if isinstance(v, torch.Tensor) and not self._value_guard(v) and not self.assume_tensor_read(v, "truth", bool(v)):
            self._dynamic("branches on a tensor value")
        if isinstance(v, CONTAINER_TYPES) or isinstance(v, collections_deque):
            self._read_args([v])

    def op_TRUTH(self, fs, ins, stack):
        """A conditional jump, ``not`` or 3.13's ``TO_BOOL`` reads the truth of the top value."""
        self._truth(stack[-1])

    # iteration and unpacking
    def op_GET_ITER(self, fs, ins, stack):
        v = stack[-1]
        if self.loop_ranges and self.loop_get_iter(fs, v):
            return   # (`for i in range(n)` of a tracked count: a counted loop, magpy.loops)
        if self.counted and self.loop_over_sequence(fs, v):
            return   # (`for x in xs` over an unbind of a lifted size: a counted loop)
        if isinstance(v, torch.Tensor):
            self._pend(fs, self._post_tensor_iter, v, opaque=True)
            return
        if isinstance(v, (*CONTAINER_TYPES, collections_deque, types.MappingProxyType)):
            self._read_args([v]) if not T.contains_tensor(v) else self.full_read(v)
        elif hasattr(type(v), "__next__"):
            self._check_stateful_iterator(v, "iterates over")
        else:
            self._unguarded_items(v, "iterates over")
        self._pend(fs, self._post_new, 1)

    def _check_stateful_iterator(self, it, what: str) -> None:
        """An iterator is state: advancing one that exists outside the call cannot be replayed."""
        node = self.node(it)
        if node is None or node.source is not None:
            self._dynamic(f"{what} an iterator that exists outside the call ({type(it).__name__}): "
                          "each call advances it")

    def _post_tensor_iter(self, fs, stack, t):
        self.bind_iterated_tensors([t], stack[-1])
        if self.rows_count is not None:
            # `for row in t` over a lifted first size: a counted loop (magpy.loops)
            self.loop_over_rows(fs, self.rows_count, t.shape[0], stack[-1])
            self.rows_count = None

    op_GET_YIELD_FROM_ITER = op_GET_ITER

    def op_UNPACK_SEQUENCE(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            self._pend(fs, self._post_tensor_unpack, (v, ins.argval), opaque=True)
            return
        if isinstance(v, (list, tuple, dict)):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
        else:
            self._unguarded_items(v, "unpacks")
        self._pend(fs, self._post_new, ins.argval)

    def _post_tensor_unpack(self, fs, stack, data):
        t, n = data
        self.bind_rows(t, reversed(stack[-n:]))   # the first row is left on top

    def op_UNPACK_EX(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            self._pend(fs, self._post_tensor_unpack_ex, (v, ins.arg & 0xFF, ins.arg >> 8), opaque=True)
            return
        self._unguarded_items(v, "unpacks")
        self._read_args([v]) if isinstance(v, CONTAINER_TYPES) and not T.contains_tensor(v) else self.full_read(v)
        self._pend(fs, self._post_new, 1)

    def _post_tensor_unpack_ex(self, fs, stack, data):
        """``a, *rest, b = t``: the targets are left first on top, ``rest`` a new list of rows."""
        t, before, after = data
        left = list(reversed(stack[-(before + 1 + after):]))
        rows = [*left[:before], *left[before], *left[before + 1:]]
        self.bind_rows(t, rows)
        self._new_outputs([left[before]])

    def op_FOR_ITER(self, fs, ins, stack):
        if self.loop_iters and self.loop_for_iter(fs, stack[-1]):
            return   # (an iteration of a counted loop, magpy.loops)
        self._pend(fs, self._post_new, 1)

    def _outside_display(self, ins, stack, below: int) -> None:
        """A list, set or dict display or comprehension adds to the container it builds, which is
        made in the call, except in a frame resumed after a split (magpy.splits), where it came
        in from outside: then the addition is an in-place change the mock replays."""
        target = stack[-(ins.arg + below)]
        node = self.node(target)
        if node is None or node.source is None:
            return
        if ins.real == "LIST_APPEND" and self._log_mutation(target, "append", [stack[-1]]):
            return
        if ins.real == "MAP_ADD" and self._log_mutation(target, "__setitem__", [stack[-2], stack[-1]]):
            return
        self._mutate(target)

    def op_CONTAINER_ADD(self, fs, ins, stack):
        if self.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)
        self._outside_display(ins, stack, 2 if ins.real == "MAP_ADD" else 1)

    def op_LIST_EXTEND(self, fs, ins, stack):
        self._outside_display(ins, stack, 1)
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            if ins.real != "LIST_EXTEND":
                raise BreakCompile("builds a set of a tensor's rows (hashes them)")
            self._pend(fs, self._post_list_extend, (v, ins.argval), opaque=True)
            return
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)
        else:
            self._unguarded_items(v, "unpacks")

    def _post_list_extend(self, fs, stack, data):
        """``[*t]``: the list below the popped tensor ends with its rows."""
        t, depth = data
        target = stack[-depth]
        self.bind_rows(t, target[len(target) - t.shape[0]:] if t.dim() else ())

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, fs, ins, stack):
        self._outside_display(ins, stack, 1)
        v = stack[-1]
        if self.scalar_nodes and isinstance(v, dict) and self.holds_scalar(list(v)):
            self.scalar_escape("hashes (a dict key)", list(v))
        if isinstance(v, dict):
            self.full_read(v)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_FORMAT_VALUE(self, fs, ins, stack):
        v = stack[-1] if (ins.arg & 0x04) == 0 else stack[-2]
        spec = stack[-1] if ins.arg & 0x04 else ""
        if (isinstance(v, torch.Tensor) or T.contains_tensor(v) or self.holds_scalar(v) or self.holds_scalar(spec)) \
                and self.text_op(fs, format_text, (v, ins.arg & 3, spec)):
            return   # text of values read from tensors: a node (ScalarFlow.text_op)
        if isinstance(v, torch.Tensor) or T.contains_tensor(v):
            self._dynamic("formats a tensor as text (reads its values)")
        if self.holds_scalar(v):
            self.scalar_escape("formats", v)
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)

    def op_BUILD_STRING(self, fs, ins, stack):
        """An f-string's pieces joined: a text node when one of them is (``ScalarFlow.text_op``)."""
        parts = stack[len(stack) - ins.arg:] if ins.arg else []
        if self.scalar_nodes and self.holds_scalar(parts) and not self.text_op(fs, join_text, tuple(parts)):
            self.scalar_escape("joins", *parts)

    # calls
    def op_KW_NAMES(self, fs, ins, stack):
        fs.kw_names = fs.code.co_consts[ins.arg]

    def op_CALL(self, fs, ins, stack):
        kwnames, fs.kw_names = fs.kw_names, ()
        fn, args, kwnames = DECODER.call_operands(ins, stack, kwnames)
        nkw = len(kwnames)
        pos = args[:len(args) - nkw]
        kw = dict(zip(kwnames, args[len(args) - nkw:])) if nkw else {}
        self._call(fs, fn, pos, kw)

    def op_CALL_FUNCTION_EX(self, fs, ins, stack):
        fn, pos, kw = DECODER.call_ex_operands(ins, stack)
        for c in (pos, kw):
            node = self.node(c)
            if node is not None and node.source is not None:
                self.full_read(c)
        if isinstance(pos, (tuple, list)):
            self._call(fs, fn, list(pos), dict(kw))
        elif isinstance(pos, types.GeneratorType) and pos.gi_frame is not None:
            # ``f(*gen)``: the interpreter runs the generator to a tuple, then calls ``f``. Its
            # frames run monitored; the call is handled when it returns, with what it yielded.
            collector: list = []
            self.yield_collectors[id(pos.gi_frame)] = collector
            self.star_calls[id(pos.gi_frame)] = (fs, ins.offset, fn, collector, dict(kw))
        elif type(pos) is map and peek_items(pos) is None and not _is_python_callable(fn) \
                and self._star_map(fs, fn, pos, dict(kw)):
            return
        else:
            self._call(fs, fn, _star_items(pos), dict(kw))

    def _star_map(self, fs: FrameState, fn, pos: map, kw: dict) -> bool:
        """``zip(*map(f, xs))`` with a Python ``f`` (mmdet's ``multi_apply``): the interpreter
        calls ``f`` on each item (monitored frames) to build the arguments, then calls the native
        ``fn``. The arguments are what those frames return, so the call is decided right after it
        ran, at the next instruction, with them. False: ``f`` is not Python code."""
        func = pos.__reduce__()[1][0]
        inner = func.func if type(func) is functools.partial else func
        inner = getattr(inner, "__func__", inner)
        code = getattr(inner, "__code__", None)
        if not isinstance(inner, types.FunctionType) or code in self.star_maps:
            return False
        collector: list = []
        self.star_maps[code] = (collector, fs.frame)
        self._pend(fs, self._post_star_map, (fn, collector, kw, code))
        return True

    def _post_star_map(self, fs, stack, data):
        fn, items, kw, code = data
        self.star_maps.pop(code, None)
        self._call(fs, fn, list(items), kw)   # (the decision the call would have had before it ran)
        if fs.pending is not None:
            post, pdata = fs.pending
            fs.pending = None
            self.opaque_frame = None
            post(fs, stack, pdata)

    def _star_generator_left(self, frame, fs: FrameState) -> None:
        """A generator unpacked by ``f(*gen)`` yielded or ended: on its return, ``f`` is next."""
        ins = fs.instrs.get(frame.f_lasti)
        if ins is not None and ins.real == "YIELD_VALUE":
            return
        outer, offset, fn, items, kw = self.star_calls.pop(id(frame))
        self.yield_collectors.pop(id(frame), None)
        if ins is None or not ins.real.startswith("RETURN") or self.broken is not None:
            return   # it raised: the call never happens
        try:
            self._call(outer, fn, list(items), kw)
        except BreakCompile as e:
            self._break(e.reason, outer, offset)
        except Unsupported as e:
            self._break(str(e), outer, offset)

    def op_YIELD_VALUE(self, fs, ins, stack):
        collector = self.yield_collectors.get(id(fs.frame))
        if collector is not None:
            collector.append(stack[-1])
        if self.scalar_nodes and self.holds_scalar(stack[-1]) and not self._resumed_by_python(fs.frame):
            # `sum(d for d in t.shape)`: native code computes with the number and its result is
            # nobody the graph follows; the run depends on the exact value.
            self.scalar_escape("yields to native code", stack[-1])

    def _resumed_by_python(self, frame) -> bool:
        """Is the generator ``frame`` being advanced by a monitored ``for`` or ``yield from``
        (which hand the yielded object on as it is), rather than by native code (``sum(gen)``)?"""
        back = frame.f_back
        bfs = self.frames.get(id(back)) if back is not None else None
        if bfs is None or bfs.frame is not back:
            return False
        at = bfs.instrs.get(back.f_lasti)
        return at is not None and at.real in ("FOR_ITER", "SEND", "YIELD_FROM")

