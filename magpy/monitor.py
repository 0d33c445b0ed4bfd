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

The per-opcode handlers (``op_<OPNAME>``) follow CPython 3.11 bytecode (``PRECALL``/``CALL``,
``KW_NAMES``, ``LOAD_METHOD``); :mod:`magpy.bytecode` holds the version-specific details they
rely on, :mod:`magpy.objmodel` the Python object-model questions (where an attribute lives,
what is immutable), :mod:`magpy.guards` the kinds of guard a read creates.
"""
from __future__ import annotations

import _abc
import abc
import collections
import contextvars
import functools
import operator as _operator
import random
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from . import capture
from .annotations import DYNAMIC, Annotation, lookup
from .annotations import torch_ops as T
from .annotations.numpy_ops import numpy_annotation
from .binding import bind_callee
from .bytecode import PASS_THROUGH, STRUCTURAL, catches_tensor_errors, catching_ranges, instructions
from .global_state import HARMLESS_NAMES, STATE_SETTER_NAMES, GlobalState, is_state_setter_name
from .graph import OpGraph, Unsupported
from .guards import (
    AbcTokenGuard,
    AbsentGuard,
    ContainsGuard,
    Guard,
    HasAttrGuard,
    IdGuard,
    KeysGuard,
    LeafGuard,
    LenGuard,
    ModuleCallGuard,
    NoHooksGuard,
    PresentGuard,
    SameGuard,
    TensorValueGuard,
    TypeGuard,
    ValueGuard,
    guard_for_object,
)
from .objmodel import (
    CONTAINER_TYPES,
    IMMUTABLE_TYPES,
    NO_NODE_TYPES,
    NO_VALUE,
    attr_location,
    has_instance_dict,
    has_python_call,
    is_immutable,
    is_numpy_number,
    is_python_class,
    module_has_hooks,
    relation_present,
)
from .refgraph import Const, RefGraph, ShadowNode
from .source import (
    AttrSource,
    CellSource,
    ConstSource,
    DerefSource,
    GlobalSource,
    ItemSource,
    Source,
)


class BreakCompile(Exception):
    """Compilation of this call stops here; ``reason`` is shown to users."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


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


def _skip_codes() -> set:
    """Framework frames that run between user frames and are not monitored themselves."""
    codes = set()
    M = torch.nn.Module
    for name in ("_wrapped_call_impl", "_call_impl", "__setattr__"):
        fn = getattr(M, name, None)
        if fn is not None:
            codes.add(fn.__code__)
    apply = getattr(torch.autograd.Function, "apply", None)
    if apply is not None and hasattr(apply, "__func__"):
        codes.add(apply.__func__.__code__)
    return codes


_SKIP = None
# MagPy's own call path (a compiled callable used inside a monitored program).
_MAGPY_RUNTIME_FILES = frozenset({__file__.rsplit("/", 1)[0] + "/api.py", "<magpy guard>", "<magpy mock>"})


class _Deleted:
    def __repr__(self):
        return "<deleted>"


_DELETED = _Deleted()

collections_deque = collections.deque
_functools_partial = functools.partial
_FUNCTION_APPLY = torch.autograd.Function.apply.__func__
_getitem = _operator.getitem

_CONTEXTVAR_METHODS = frozenset({contextvars.ContextVar.set, contextvars.ContextVar.reset, contextvars.ContextVar.get})

_SCALAR_READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__index__"})

_LOGGED_MUTATIONS = frozenset({list.append, list.insert, list.extend, collections.deque.append,
                               collections.deque.appendleft, set.add, dict.__setitem__})

ELEMENT_READERS = frozenset({sorted, min, max, any, all, set, frozenset, hash, str, repr, format,
                             list.sort, list.index, list.count, list.remove, tuple.index, tuple.count,
                             dict.fromkeys, abs, round})


class Monitor:
    """Monitors one call of ``fn`` and collects RefGraph, guards and the operator graph.

    ``param_sources`` maps the top frame's parameter names to their sources.
    After :meth:`run`, either ``broken`` holds a break reason or ``result`` holds the
    return value, and ``graph``/``rg``/``guards``/``writes`` describe the call.
    """

    def __init__(self, top_code, param_sources: dict[str, Source], param_values: dict[str, Any],
                 top_closure: tuple | None = None) -> None:
        global _SKIP
        if _SKIP is None:
            _SKIP = _skip_codes()
        self.top_code = top_code
        self.param_sources = param_sources
        self.param_values = param_values
        self.top_closure = top_closure or ()
        self.rg = RefGraph()
        self.graph = OpGraph()
        self.guards: list[Guard] = []
        self._guarded: set = set()
        self.frames: dict[int, FrameState] = {}
        self.opaque_frame: Any = None
        self.broken: str | None = None
        self.dynamic = False
        self.result: Any = None
        self.finished = False
        self.attr_writes: dict[int, dict[str, Any]] = {}   # node id -> {name: True}
        self.global_writes: dict[tuple, Any] = {}          # (id(globals), name) -> (globals, name)
        self.cell_writes: dict[int, Any] = {}               # id(cell) -> cell
        self.mutated: set[int] = set()                       # node ids changed in place
        self.yield_collectors: dict[int, list] = {}         # generator frame id -> values it yielded
        self.contextvars: dict[int, tuple] = {}             # id -> (ContextVar, value at first set)
        self.appends: dict[int, list] = {}                   # node id -> values appended (replayed)
        self.uses_modules = False
        self.top_frame = None
        self.grad_enabled = torch.is_grad_enabled()
        self.global_state = GlobalState.capture()   # one guard for every process-wide switch
        self.graph_mutates = False                   # an operator changed a tensor in place
        self._entered: set = set()                   # frames whose parameters were bound
        self.storage_groups: list = []               # tensors whose storages must keep their aliasing
        # Objects passed in are registered at entry: C code (zero-argument super(), method
        # binding) can hand them to other frames without a LOAD_FAST the monitor would see.
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
        fs = FrameState(frame, code, instructions(code), is_top)
        if is_top:
            fs.unwritten_params = set(self.param_sources)
        self.frames[id(frame)] = fs
        if not is_top and frame not in self._entered:
            self._entered.add(frame)
            try:
                bind_callee(self, frame, code)
            except BreakCompile as e:
                self._break(e.reason, fs, frame.f_lasti)
        return True

    def instruction(self, frame, offset: int, stack: list) -> None:
        if self.broken is not None:
            return
        fs = self.frames.get(id(frame))
        if fs is None or fs.frame is not frame:
            return
        try:
            if fs.pending is not None:
                post, data = fs.pending
                fs.pending = None
                self.opaque_frame = None
                post(fs, stack, data)
            ins = fs.instrs.get(offset)
            if ins is None:
                return
            handler = getattr(self, "op_" + ins.opname, None)
            if handler is None:
                self._default(fs, ins, stack)
            else:
                handler(fs, ins, stack)
        except BreakCompile as e:
            self._break(e.reason, fs, offset)
        except Unsupported as e:
            self._break(str(e), fs, offset)
        except Exception as e:  # an internal error: stop compiling, the call runs on eagerly
            self._break(f"internal MagPy error: {type(e).__name__}: {e}", fs, offset, internal=True)

    def leave_frame(self, frame, value) -> None:
        fs = self.frames.get(id(frame))
        if fs is None or fs.frame is not frame:
            return
        if self.broken is None and fs.pending is not None:
            # A frame can only return from RETURN_VALUE; a pending post is an exception exit.
            fs.pending = None
            self.opaque_frame = None
        del self.frames[id(frame)]
        if fs.is_top and self.broken is None:
            self.finished = True
            self.result = value

    def exception(self, frame, exc) -> None:
        fs = self.frames.get(id(frame))
        if fs is not None:
            pending, fs.pending = fs.pending, None
            self.opaque_frame = None
            if pending is not None and self.broken is None:
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
    def _break(self, reason: str, fs: FrameState, offset: int, internal: bool = False) -> None:
        line = None
        ins = fs.instrs.get(offset)
        if ins is not None and ins.positions is not None:
            line = ins.positions.lineno
        where = f"{fs.code.co_filename}:{line or fs.frame.f_lineno} in {fs.code.co_name}"
        self.broken = f"{reason} ({where})"
        self.internal_error = internal
        self.opaque_frame = None
        capture.stop()

    def _dynamic(self, reason: str):
        self.dynamic = True
        raise BreakCompile(reason)

    # -- RefGraph helpers -------------------------------------------------------------------------------
    def node(self, v) -> ShadowNode | None:
        return self.rg.get_node_by_var(v)

    def add_guard(self, guard: Guard) -> None:
        """Guard what the run read from outside (the first guard of equal ``dedup_key`` is kept)."""
        key = guard.dedup_key()
        if key in self._guarded:
            return
        self._guarded.add(key)
        self.guards.append(guard)

    def on_read(self, value: Any, source: Source, relation: tuple | None = None,
                owner: ShadowNode | None = None) -> None:
        """``value`` was read from outside through ``source``: give it a node and guards."""
        if is_immutable(value):
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
        node = self.rg.external(value, source, relation if owner is None else None)
        if owner is not None and relation is not None:
            self.rg.add_initial_ref(owner, relation, node.node_id)
        guard = guard_for_object(value, source)
        if guard is not None:
            self.add_guard(guard)
        if isinstance(value, types.MethodType) and not is_immutable(value.__self__):
            # The bound object is outside state too (its attributes are read by the method).
            self.on_read(value.__self__, AttrSource(source, "__self__"), ("attr", "__self__"), node)

    def _guard_class_attr(self, cls: type, name: str, after: type | None = None) -> None:
        """``cls.name`` resolved through the MRO: the class that defines it still holds the same
        object and no class before it in the MRO has gained one (methods, properties,
        staticmethods and class values replaced on a class, or reached through ``super()``,
        which starts the search ``after`` a class)."""
        mro = cls.__mro__
        if after is not None and after in mro:
            mro = mro[mro.index(after) + 1:]
        for klass in mro:
            ksrc = AttrSource(ConstSource(klass, klass.__qualname__), "__dict__")
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
        if node is not None and node.node_id in self.appends:
            # Read after logged changes: guard the state it had at entry (kept when the first
            # change was logged) and reproduce its final contents instead of replaying calls.
            del self.appends[node.node_id]
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
        elif isinstance(value, dict):
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
            self.add_guard(ValueGuard(src, frozenset(value) if isinstance(value, frozenset) else set(value)))
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
                if fn is len or fn is isinstance or self._value_guard(v):
                    continue   # len(tensor) is shape[0]: metadata
                self._dynamic(f"passes a tensor to `{getattr(fn, '__qualname__', fn)}`, which reads its value")
            if isinstance(v, (list, tuple, dict, set, frozenset, collections_deque)):
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
        if node.node_id not in self.appends:
            node.snapshot = type(obj)(obj) if type(obj) in (list, dict, set) else list(obj)
        self.appends.setdefault(node.node_id, []).append((method, list(args)))
        self.rg.inplace(node)
        return True

    def _value_guard(self, t: torch.Tensor) -> bool:
        """A read of a small tensor from outside (a buffer, a scalar argument): guard its value.

        Only where that is sound and cheap: a CPU tensor (reading a GPU value is a device
        sync on every call), not a trainable parameter (its value changes every step, so
        the guard would only recompile), read as it came in, before any operator of this
        run changed a tensor in place (through a view it may alias). NaN compares equal
        to NaN in the guard.
        """
        node = self.node(t)
        if node is None or node.source is None or t.numel() > 64 or t.requires_grad or t.device.type != "cpu" \
                or self.graph_mutates or type(t) is not torch.Tensor:
            return False
        n = self.graph.node_of(t)
        if n is not None and n.op != "placeholder":
            return False
        self.add_guard(TensorValueGuard(node.source, t.dtype, t.tolist()))
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

    # -- tensor operations -------------------------------------------------------------------------------
    def to_arg(self, v: Any, _depth: int = 0) -> Any:
        """Convert a runtime value to an fx argument: tensors become nodes, the rest is baked in."""
        if isinstance(v, torch.Tensor):
            n = self.graph.node_of(v)
            if n is not None:
                return n
            node = self.node(v)
            if node is not None and node.source is not None:
                return self.graph.placeholder(v, node.source)
            raise Unsupported(f"tensor of unknown origin ({type(v).__name__} {tuple(v.shape)}) used by an operator")
        t = type(v)
        if t in IMMUTABLE_TYPES or v is None:
            return v
        if is_numpy_number(v):
            return v.item()   # torch reads a numpy scalar as the Python number (generated code has no `np`)
        if _depth > 6:
            raise Unsupported("argument nested too deeply")
        if isinstance(v, (list, tuple)):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
            conv = [self.to_arg(e, _depth + 1) for e in v]
            if t is torch.Size:
                return torch.Size(conv) if all(type(c) is int for c in conv) else tuple(conv)
            if t is list or t is tuple:
                return t(conv)
            if hasattr(v, "_fields"):
                return tuple(conv)
            return tuple(conv) if isinstance(v, tuple) else list(conv)
        if isinstance(v, dict):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
            return {k: self.to_arg(e, _depth + 1) for k, e in v.items()}
        if t is slice:
            return slice(self.to_arg(v.start), self.to_arg(v.stop), self.to_arg(v.step))
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType)) and T.is_torch_function(v):
            return v
        if isinstance(v, torch.nn.Module):
            raise Unsupported(f"a module ({type(v).__name__}) passed to a tensor operator")
        if isinstance(v, (float, int, bool, str)):
            return v
        raise Unsupported(f"cannot pass a {t.__name__} to a tensor operator")

    def record_op(self, kind: str, target: Any, args: list, kwargs: dict, output: Any, inputs_have_tensor: bool,
                  name: str, versions: list | None = None) -> None:
        """Post-execution of a torch call: an fx node, a static value, or dynamic.

        ``versions`` are (tensor, ``_version``) of the tensor inputs before the call: a
        version that moved means the call changed that tensor in place (``+=``,
        ``inplace=True``, ``torch.relu_``, ``out=``, ``copy_``...), whatever its name says.
        """
        if name in T.DATA_DEPENDENT:
            self._dynamic(f"`{name}` reads tensor values")
        changed = [t for t, v in (versions or ()) if t._version != v]
        if changed or T.contains_tensor(output):
            fx_args = tuple(self.to_arg(a) for a in args)
            fx_kwargs = {k: self.to_arg(v) for k, v in kwargs.items()}
            n = self.graph.call(kind, target, fx_args, fx_kwargs)
            if T.contains_tensor(output):
                self._bind_output(n, output)
            for t in changed:
                self._tensor_mutated(t, n if t is output else None)
            return
        if name in T.META_METHODS or getattr(target, "__name__", "") in T.META_METHODS:
            return
        if target in T.GRAD_MODE_OPS or name in STATE_SETTER_NAMES:
            # Grad mode and autocast switches stay in the graph, in program order.
            fx_args = tuple(self.to_arg(a) for a in args)
            self.graph.call(kind, target, fx_args, {k: self.to_arg(v) for k, v in kwargs.items()})
            self.graph_mutates = True
            return
        if inputs_have_tensor:
            self._dynamic(f"`{name}` reads tensor values (returns {type(output).__name__})")
        if output is None and kind == "method":
            return
        if output is None and is_state_setter_name(name) and name not in HARMLESS_NAMES:
            # set_default_dtype, use_deterministic_algorithms, set_num_threads...: the record
            # would not replay the change.
            self._dynamic(f"`torch.{name}` changes global torch state")
        # A torch utility with no tensor in or out (torch.Size, torch.device...): a static value.

    def _bind_output(self, n, output) -> None:
        if isinstance(output, torch.Tensor):
            self.graph.bind(output, n)
            self._new_outputs([output])
            return
        if isinstance(output, (tuple, list)):
            for i, e in enumerate(output):
                if isinstance(e, torch.Tensor):
                    self.graph.bind(e, self.graph.getitem(n, i))
                elif isinstance(e, (tuple, list)) and T.contains_tensor(e):
                    self._bind_output(self.graph.getitem(n, i), e)
            self._new_outputs([output, *output])   # torch.return_types results are new objects too
            return
        raise Unsupported(f"operator returned a {type(output).__name__} holding tensors")

    def _tensor_mutated(self, t: torch.Tensor, n) -> None:
        """``t`` was changed in place by graph node ``n`` (its result when ``n`` returns ``t``)."""
        self.graph_mutates = True
        if n is not None:
            self.graph.bind(t, n)
        node = self.node(t)
        if node is not None:
            self.rg.inplace(node)   # a new ShadowVersion: Algorithm 1 lists it among the mock nodes
            if node.source is not None:
                self.mutated.add(node.node_id)

    # -- per-opcode handlers (CPython 3.11) -------------------------------------------------------------------
    def _pend(self, fs: FrameState, post, data=None, opaque: bool = False) -> None:
        fs.pending = (post, data)
        if opaque:
            self.opaque_frame = fs.frame

    def _post_new(self, fs, stack, n):
        self._new_outputs(stack[-n:] if n else ())

    def _default(self, fs: FrameState, ins, stack: list) -> None:
        if stack and isinstance(stack[-1], torch.Tensor) and ins.opname not in PASS_THROUGH \
                and ins.opname not in STRUCTURAL:
            raise BreakCompile(f"unsupported instruction {ins.opname} on a tensor")
        self._pend(fs, self._post_new, 1 if ins.opname not in PASS_THROUGH else 0)

    # loads and stores of locals
    def op_LOAD_FAST(self, fs, ins, stack):
        if fs.is_top and ins.argval in fs.unwritten_params:
            self._pend(fs, self._post_param, ins.argval)

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def _post_param(self, fs, stack, name):
        self.on_read(stack[-1], self.param_sources[name], ("arg", name))

    def op_STORE_FAST(self, fs, ins, stack):
        if fs.is_top:
            fs.unwritten_params.discard(ins.argval)

    op_DELETE_FAST = op_STORE_FAST

    def op_LOAD_DEREF(self, fs, ins, stack):
        name = ins.argval
        if fs.is_top and name in fs.unwritten_params:
            self._pend(fs, self._post_param, name)
            return
        code = fs.code
        if name in code.co_freevars:
            idx = code.co_freevars.index(name)
            cell = self._cell_of(fs, idx)
            if cell is not None and id(cell) not in self.cell_writes:
                self._pend(fs, self._post_cell, cell)

    op_LOAD_CLASSDEREF = op_LOAD_DEREF

    def _cell_of(self, fs, idx):
        if fs.is_top:
            return self.top_closure[idx] if idx < len(self.top_closure) else None
        fn = capture.backend().frame_function(fs.frame) if hasattr(capture.backend(), "frame_function") else None
        if fn is None or fn.__closure__ is None:
            return None
        fn_node = self.node(fn)
        if fn_node is not None and fn_node.source is None:
            return None   # a closure created during this call: its cells are internal
        return fn.__closure__[idx]

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
                self.cell_writes[id(cell)] = cell

    def op_LOAD_GLOBAL(self, fs, ins, stack):
        name = ins.argval
        g = fs.frame.f_globals
        if (id(g), name) in self.global_writes:
            return
        if name in g:
            self._pend(fs, self._post_global, (g, name))

    def _post_global(self, fs, stack, data):
        g, name = data
        # Imported modules, classes and functions are guarded like any other global:
        # rebinding `cfg`, `act` or `F` between calls is seen.
        self.on_read(stack[-1], GlobalSource(g, name), ("global", id(g), name))

    def op_STORE_GLOBAL(self, fs, ins, stack):
        g = fs.frame.f_globals
        self.global_writes[(id(g), ins.argval)] = (g, ins.argval)

    op_DELETE_GLOBAL = op_STORE_GLOBAL

    # attributes
    def op_LOAD_ATTR(self, fs, ins, stack):
        self._attr(fs, stack[-1], ins.argval, method=False)

    def op_LOAD_METHOD(self, fs, ins, stack):
        self._attr(fs, stack[-1], ins.argval, method=True)

    def _attr(self, fs, obj, name: str, method: bool) -> None:
        if isinstance(obj, torch.Tensor):
            if name == "is_leaf":
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.add_guard(LeafGuard(node.source, obj.is_leaf))   # not part of the tensor check
                elif node is None:
                    raise BreakCompile("reads `is_leaf` of a tensor of unknown origin")
            if name in T.META_ATTRS or method or callable(getattr(type(obj), name, None)):
                return   # metadata (guarded statically) or a bound method, classified when called
            if name in T.OP_ATTRS:
                self._pend(fs, self._post_tensor_attr, (obj, name), opaque=True)
                return
            raise BreakCompile(f"reads tensor attribute `{name}`")
        if type(obj) is super:
            self_cls = obj.__self_class__
            if self_cls is not None:
                self._guard_class_attr(self_cls, name, after=obj.__thisclass__)
        # A class or module reached without a path (`type(self)`, `cls` in a classmethod, a
        # module imported inside a function) is held by the record; its attributes are guarded.
        node = self._held_node(obj)
        if node is None and not is_immutable(obj) and not isinstance(obj, NO_NODE_TYPES):
            # An object MagPy never saw arrive (passed by C code it does not follow): its
            # attributes could be outside state with no path to guard them.
            raise BreakCompile(f"reads attribute `{name}` of a {type(obj).__name__} whose origin MagPy did not see")
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
            if has_instance_dict(obj):
                # Found on the class: an instance attribute of that name set later would shadow it.
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
        src = AttrSource(node.source, name, via)
        self._pend(fs, self._post_attr, (node, rel, src, method), opaque=True)

    def _post_attr(self, fs, stack, data):
        node, rel, src, method = data
        value = stack[-1] if not method or stack[-2] is capture.NULL else stack[-2]
        if method and stack[-2] is not capture.NULL:
            return   # an unbound function from the class; `self` stays as it was
        self.on_read(value, src, rel, node)

    def _post_new_attr(self, fs, stack, method):
        self._new_outputs(stack[-1:])

    def _post_tensor_attr(self, fs, stack, data):
        obj, name = data
        self.record_op("function", getattr, [obj, name], {}, stack[-1], True, name)

    def op_STORE_ATTR(self, fs, ins, stack):
        obj, value = stack[-1], stack[-2]
        if isinstance(obj, torch.Tensor):
            raise BreakCompile(f"writes tensor attribute `{ins.argval}`")
        node = self._held_node(obj)
        if attr_location(obj, ins.argval)[0] == "property":
            self._pend(fs, self._post_nothing, None)   # the setter runs monitored: its own writes count
            return
        if node is None:
            raise BreakCompile(f"writes attribute `{ins.argval}` of a {type(obj).__name__} whose origin "
                               "MagPy did not see, so the write could not be replayed")
        if node.source is None:
            self._pend(fs, self._post_nothing, None, opaque=True)
            return
        target = Const(value) if is_immutable(value) else self._node_id(value)
        self.rg.write(node, ("attr", ins.argval), target)
        self.attr_writes.setdefault(node.node_id, {})[ins.argval] = True
        self._pend(fs, self._post_nothing, None, opaque=True)

    def op_DELETE_ATTR(self, fs, ins, stack):
        obj = stack[-1]
        node = self._held_node(obj)
        if node is None:
            raise BreakCompile(f"deletes attribute `{ins.argval}` of an object of unknown origin")
        if node.source is not None:
            self.rg.write(node, ("attr", ins.argval), Const(_DELETED))
            self.attr_writes.setdefault(node.node_id, {})[ins.argval] = True
        self._pend(fs, self._post_nothing, None, opaque=True)

    def _node_id(self, value) -> int:
        node = self.node(value)
        if node is None:
            node = self.rg.new(value)
        return node.node_id

    def _post_nothing(self, fs, stack, data):
        pass

    # subscripts
    def op_BINARY_SUBSCR(self, fs, ins, stack):
        container, key = stack[-2], stack[-1]
        if isinstance(container, torch.Tensor):
            if T.has_bool_tensor(key):
                self._dynamic("indexes a tensor with a boolean mask (data-dependent shape)")
            self._pend_op(fs, "function", _getitem, [container, key], {}, "getitem")
            return
        node = self.node(container)
        if isinstance(key, torch.Tensor):
            raise BreakCompile("indexes a Python container with a tensor")
        if node is not None and node.source is not None and type(key) is not slice and is_immutable(key) \
                and isinstance(container, (list, tuple, dict)):
            rel = ("item", key)
            if self.rg.read(node, rel) is None and node.node_id not in self.mutated:
                self._pend(fs, self._post_item, (node, rel, ItemSource(node.source, key)))
                return
        elif node is not None and node.source is not None and isinstance(container, (list, tuple, dict)):
            self.full_read(container)
        self._pend(fs, self._post_new, 1)

    def _post_item(self, fs, stack, data):
        node, rel, src = data
        self.on_read(stack[-1], src, rel, node)

    def op_STORE_SUBSCR(self, fs, ins, stack):
        key, container, value = stack[-1], stack[-2], stack[-3]
        if isinstance(container, torch.Tensor):
            if T.has_bool_tensor(key):
                self._dynamic("assigns through a boolean mask")
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
        if isinstance(container, torch.Tensor):
            raise BreakCompile("deletes from a tensor")
        self._mutate(container)

    # operators
    def op_BINARY_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        sym = ins.argrepr
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            fn = T.BINARY_OPS.get(sym if isinstance(a, torch.Tensor) else sym.rstrip("="))
            if fn is None:
                raise BreakCompile(f"unsupported tensor operator {sym}")
            self._pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
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
        na, nb = self.node(a), self.node(b)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            # Tensors from outside are not identity-guarded: guard this relation itself.
            if na is not None and nb is not None and na.source is not None and nb.source is not None:
                self.add_guard(SameGuard(na.source, nb.source, a is b))
            elif (na is None or na.source is not None) and (nb is None or nb.source is not None) \
                    and not (a is None or b is None):
                raise BreakCompile("compares the identity of tensors of unknown origin")
            return
        self._guard_identity(a)
        self._guard_identity(b)

    def op_COMPARE_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            fn = T.COMPARE_OPS[ins.argval]
            self._pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
        for v in (a, b):
            if not isinstance(v, CONTAINER_TYPES) and not isinstance(type(v).__eq__, types.FunctionType):
                self._guard_identity(v)   # compared by identity or by a native __eq__ MagPy cannot see into
        self._read_args([v for v in (a, b) if isinstance(v, CONTAINER_TYPES)])

    def op_CONTAINS_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if isinstance(b, torch.Tensor) or isinstance(a, torch.Tensor):
            self._dynamic("`in` reads tensor values")
        node = self.node(b)
        if node is not None and node.source is not None and isinstance(b, (set, frozenset, dict)) \
                and (is_immutable(a) or isinstance(a, (type, types.FunctionType))) and node.node_id not in self.mutated:
            self._pend(fs, self._post_contains, (node, a, bool(ins.arg)))   # guard `(a in b) is result`
            return
        if isinstance(b, CONTAINER_TYPES) or isinstance(b, collections_deque):
            self._read_args([b])
            self._guard_identity(a)
            for e in (b if isinstance(b, (list, tuple, collections_deque)) else ()):
                self._guard_identity(e)   # `in` compares by identity first

    def _post_contains(self, fs, stack, data):
        node, needle, inverted = data
        self.add_guard(ContainsGuard(node.source, needle, bool(stack[-1]) != inverted))

    def _unary(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            fn = T.UNARY_OPS[ins.opname]
            self._pend_op(fs, "function", fn, [v], {}, fn.__name__)
            return
        self._pend(fs, self._post_new, 1)

    op_UNARY_NEGATIVE = op_UNARY_POSITIVE = op_UNARY_INVERT = _unary

    def op_UNARY_NOT(self, fs, ins, stack):
        self._truth(stack[-1])

    def _truth(self, v):
        if isinstance(v, torch.Tensor) and not self._value_guard(v):
            self._dynamic("branches on a tensor value")
        if isinstance(v, CONTAINER_TYPES) or isinstance(v, collections_deque):
            self._read_args([v])

    def _jump(self, fs, ins, stack):
        self._truth(stack[-1])

    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_FORWARD_IF_FALSE = _jump
    op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_FALSE = _jump
    op_JUMP_IF_TRUE_OR_POP = op_JUMP_IF_FALSE_OR_POP = _jump
    op_POP_JUMP_IF_TRUE = op_POP_JUMP_IF_FALSE = _jump

    def _pend_op(self, fs, kind: str, target: Any, args: list, kwargs: dict, name: str) -> None:
        """A tensor operation runs next: remember its inputs' versions to see in-place changes."""
        tensors = T.tensors_in(args, kwargs)
        if tensors and name not in T.META_METHODS and self._inside_except():
            self._dynamic(f"tensor operation `{name}` inside `try`/`except`: whether it raises depends on "
                          "tensor values, so the branch taken cannot be guarded")
        versions = [(t, t._version) for t in tensors]
        self._pend(fs, self._post_op, (kind, target, args, kwargs, name, versions), opaque=True)

    def _inside_except(self) -> bool:
        """Is some monitored frame inside a ``try`` whose ``except`` could catch a tensor error?"""
        for fs in self.frames.values():
            ranges = catching_ranges(fs.code)
            if ranges:
                at = fs.frame.f_lasti
                for start, end, caught in ranges:
                    if start <= at < end and catches_tensor_errors(caught, fs.frame):
                        return True
        return False

    def _post_op(self, fs, stack, data):
        kind, target, args, kwargs, name, versions = data
        has_t = any(T.contains_tensor(a) for a in args) or any(T.contains_tensor(v) for v in kwargs.values())
        self.record_op(kind, target, args, kwargs, stack[-1], has_t, name, versions)

    # iteration and unpacking
    def op_GET_ITER(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            self._pend(fs, self._post_tensor_iter, v, opaque=True)
            return
        if isinstance(v, (list, tuple, dict, set, frozenset, collections_deque)):
            self._read_args([v]) if not T.contains_tensor(v) else self.full_read(v)
        elif hasattr(type(v), "__next__"):
            self._check_stateful_iterator(v, "iterates over")
        self._pend(fs, self._post_new, 1)

    def _check_stateful_iterator(self, it, what: str) -> None:
        """An iterator is state: advancing one that exists outside the call cannot be replayed."""
        node = self.node(it)
        if node is None or node.source is not None:
            self._dynamic(f"{what} an iterator that exists outside the call ({type(it).__name__}): "
                          "each call advances it")

    def _post_tensor_iter(self, fs, stack, t):
        it = stack[-1]
        try:
            items = it.__reduce__()[1][0]
        except Exception as e:
            raise BreakCompile("iterates over a tensor in an unsupported way") from e
        n = self.graph.call("method", "unbind", (self.to_arg(t), 0), {})
        for i, e in enumerate(items):
            self.graph.bind(e, self.graph.getitem(n, i))

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
        self._pend(fs, self._post_new, ins.argval)

    def _post_tensor_unpack(self, fs, stack, data):
        t, n = data
        outs = list(reversed(stack[-n:]))
        node = self.graph.call("method", "unbind", (self.to_arg(t), 0), {})
        for i, e in enumerate(outs):
            self.graph.bind(e, self.graph.getitem(node, i))

    def op_UNPACK_EX(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            raise BreakCompile("star-unpacks a tensor")
        self._read_args([v]) if isinstance(v, CONTAINER_TYPES) and not T.contains_tensor(v) else self.full_read(v)
        self._pend(fs, self._post_new, 1)

    def op_FOR_ITER(self, fs, ins, stack):
        self._pend(fs, self._post_new, 1)

    def op_LIST_EXTEND(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            raise BreakCompile("extends a list with a tensor's rows")
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, dict):
            self.full_read(v)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_FORMAT_VALUE(self, fs, ins, stack):
        v = stack[-1] if (ins.arg & 0x04) == 0 else stack[-2]
        if isinstance(v, torch.Tensor) or T.contains_tensor(v):
            self._dynamic("formats a tensor as text (reads its values)")
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)

    # calls
    def op_KW_NAMES(self, fs, ins, stack):
        fs.kw_names = fs.code.co_consts[ins.arg]

    def op_CALL(self, fs, ins, stack):
        argc = ins.arg
        kwnames, fs.kw_names = fs.kw_names, ()
        if stack[-argc - 2] is capture.NULL:
            fn = stack[-argc - 1]
            args = stack[len(stack) - argc:]
        else:
            fn = stack[-argc - 2]
            args = stack[len(stack) - argc - 1:]
        nkw = len(kwnames)
        pos = args[:len(args) - nkw]
        kw = dict(zip(kwnames, args[len(args) - nkw:])) if nkw else {}
        self._call(fs, fn, pos, kw)

    def op_CALL_FUNCTION_EX(self, fs, ins, stack):
        if ins.arg & 1:
            fn, pos, kw = stack[-3], stack[-2], stack[-1]
        else:
            fn, pos, kw = stack[-2], stack[-1], {}
        for c in (pos, kw):
            node = self.node(c)
            if node is not None and node.source is not None:
                self.full_read(c)
        self._call(fs, fn, list(pos), dict(kw))

    def _call(self, fs, fn, args: list, kwargs: dict) -> None:
        if type(fn) is _functools_partial:
            # partial(f, *a, **k)(*args): the call is f(*a, *args, **k, **kwargs); the bound
            # arguments are reached from the (identity-guarded) partial object.
            self._partial_fields(fn)
            self._call(fs, fn.func, [*fn.args, *args], {**fn.keywords, **kwargs})
            return
        # Bound builtin methods (lst.append fetched by LOAD_ATTR) -> unbound form.
        if isinstance(fn, types.BuiltinMethodType) and lookup(fn) is None and not isinstance(getattr(fn, "__self__", None), types.ModuleType):
            self_ = fn.__self__
            if self_ is not None and not isinstance(self_, torch.Tensor) and not isinstance(self_, type):
                unbound = getattr(type(self_), fn.__name__, None)
                if unbound is not None:
                    fn, args = unbound, [self_, *args]
        if fn is _abc._abc_instancecheck or fn is _abc._abc_subclasscheck:
            # isinstance/issubclass against an ABC: a function of the (guarded) types and of the
            # ABC registries, whose every change (ABC.register) bumps abc.get_cache_token().
            self.add_guard(AbcTokenGuard(ConstSource(abc, "abc"), abc.get_cache_token()))
            self._pend(fs, self._post_new, 1)
            return
        if isinstance(fn, types.BuiltinMethodType) and fn.__name__ in ("__instancecheck__", "__subclasscheck__"):
            self._pend(fs, self._post_new, 1)   # super().__instancecheck__ in a metaclass: a type test
            return
        if type(fn).__name__ == "method-wrapper" and getattr(fn, "__objclass__", None) is not None:
            unbound = getattr(fn.__objclass__, fn.__name__, None)
            if unbound is not None and lookup(unbound) is not None:
                fn, args = unbound, [fn.__self__, *args]
        if (isinstance(fn, types.MethodType) and isinstance(fn.__self__, random.Random)) or (
                isinstance(fn, types.FunctionType) and args and isinstance(args[0], random.Random)):
            # (3.11's PRECALL unpacks bound methods: the function comes with self as args[0])
            self._dynamic(f"calls `random.{fn.__name__}`, which is not a pure closure (PureClosure=False)")
        if isinstance(fn, weakref.ref):
            node = self.node(fn)
            if node is not None and node.source is not None:
                self._pend(fs, self._post_deref, DerefSource(node.source))
            elif node is None:
                raise BreakCompile("dereferences a weak reference of unknown origin")
            else:
                self._pend(fs, self._post_new, 1)   # made in this call: its target was seen
            return
        if fn is id and len(args) == 1:
            node = self.node(args[0])
            if not is_immutable(args[0]) and (node is None or node.source is None):
                self._dynamic("uses `id()` of an object created in this call (a new number every call)")
            self._guard_identity(args[0])
        if fn is next and args:
            self._check_stateful_iterator(args[0], "calls `next` on")
        fn_cls = None
        if isinstance(fn, types.MethodType) and fn.__func__ is _FUNCTION_APPLY:
            fn_cls = fn.__self__
        elif fn is _FUNCTION_APPLY and args and isinstance(args[0], type):
            fn_cls = args[0]   # 3.11's PRECALL unpacked the bound classmethod
        if fn_cls is not None and torch.is_grad_enabled() and any(t.requires_grad for t in T.tensors_in(args, kwargs)):
            self._dynamic(f"calls custom autograd.Function `{fn_cls.__qualname__}` with gradients: "
                          "its backward would be lost in the graph")
        if isinstance(fn, types.MethodType) and isinstance(fn.__self__, type) is False \
                and not isinstance(fn.__self__, torch.Tensor) and lookup(fn) is None:
            # Python bound method: runs monitored.
            self._pend(fs, self._post_new, 1)
            return
        # tensor methods and torch functions -> operator nodes
        mname = T.tensor_method_name(fn, args)
        if mname is not None:
            if getattr(fn, "__self__", None) is not None and isinstance(fn.__self__, torch.Tensor):
                args = [fn.__self__, *args]
            if mname in T.DATA_DEPENDENT:
                if mname in _SCALAR_READS and self._value_guard(args[0]):
                    self._pend(fs, self._post_new, 1, opaque=True)
                    return
                self._dynamic(f"`Tensor.{mname}` reads tensor values")
            self._pend_op(fs, "method", mname, args, kwargs, mname)
            return
        if type(fn).__module__ == "magpy.api" and hasattr(fn, "_target"):
            # A compiled callable inside the monitored program runs its target as plain code.
            node = self.node(fn)
            if node is not None and node.source is not None:
                self.on_read(fn._target, AttrSource(node.source, "_target", "__dict__"), ("attr", "_target"), node)
            fn = fn._target
        if isinstance(fn, torch.nn.Module):
            self._call_module(fn)
            self._pend(fs, self._post_new, 1)
            return
        ann = lookup(fn)
        if ann is None and T.is_torch_function(fn):
            name = getattr(fn, "__name__", str(fn))
            if name in T.DATA_DEPENDENT:
                self._dynamic(f"`torch.{name}` reads tensor values or global RNG state")
            self._pend_op(fs, "function", fn, args, kwargs, name)
            return
        if fn is sum and args:
            self._sum(fs, args, kwargs)
            return
        if fn in _CONTEXTVAR_METHODS:
            self._contextvar(fs, fn, args)
            return
        if ann is None and isinstance(fn, type) and issubclass(fn, torch.nn.Module) \
                and fn.__module__.startswith("torch."):
            self._read_args(list(args) + list(kwargs.values()), None, fn)
            self._pend(fs, self._post_new, 1, opaque=True)   # torch's own module class: a new object
            return
        if ann is None:
            ann = numpy_annotation(fn)
        if ann is not None:
            self._call_annotated(fs, fn, ann, args, kwargs)
            return
        if isinstance(fn, (types.FunctionType, types.MethodType)) or is_python_class(fn) \
                or isinstance(fn, _functools_partial) or has_python_call(fn):
            self._pend(fs, self._post_new, 1)   # inlined: its frames run monitored (Figure 12, step 0)
            return
        if type(fn).__name__ == "method-wrapper" and getattr(fn, "__name__", "") in ("__init__", "__init_subclass__"):
            self._pend(fs, self._post_new, 1)
            return
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        # Figure 12, step 1: stop here. Reported as unsupported, not as dynamic behaviour:
        # an annotation (magpy.annotate) is all the function needs.
        raise BreakCompile(f"calls native function `{name}` that has no MagPy annotation")

    def _sum(self, fs, args, kwargs) -> None:
        """``sum`` folds ``+`` over its items in C: over tensors that is a chain of graph adds.

        The items are the container's elements, or the values a generator yields (collected
        at its YIELD_VALUE instructions while the call runs)."""
        it = args[0]
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        if isinstance(it, (list, tuple)):
            self._read_args([it])
            items = list(it)
            self._pend(fs, self._post_sum, (items, start, None))
        elif isinstance(it, types.GeneratorType):
            collector: list = []
            self.yield_collectors[id(it.gi_frame)] = collector
            self._pend(fs, self._post_sum, (collector, start, it.gi_frame))
        elif isinstance(it, (dict, set, frozenset, collections_deque)):
            self._read_args([it], None, sum)
            self._pend(fs, self._post_new, 1)
        else:
            self._pend(fs, self._post_new, 1)   # other iterators: an unseen tensor result breaks later

    def _post_sum(self, fs, stack, data):
        items, start, frame = data
        if frame is not None:
            self.yield_collectors.pop(id(frame), None)
        out = stack[-1]
        if not isinstance(out, torch.Tensor):
            if any(isinstance(i, torch.Tensor) for i in items):
                self._dynamic("`sum` over tensors returned a non-tensor")
            return
        acc = self.to_arg(start)
        for item in items:
            acc = self.graph.call("function", _operator.add, (acc, self.to_arg(item)), {})
        if not isinstance(acc, torch.fx.Node):
            raise Unsupported("`sum` produced a tensor MagPy could not follow")
        self.graph.bind(out, acc)
        self._new_outputs([out])

    def op_YIELD_VALUE(self, fs, ins, stack):
        collector = self.yield_collectors.get(id(fs.frame))
        if collector is not None:
            collector.append(stack[-1])

    def _contextvar(self, fs, fn, args) -> None:
        """ContextVar.set/reset inside the call are fine if they leave the variable as found;
        a get before any set in this call reads outside state that cannot be guarded."""
        var = args[0]
        if fn is contextvars.ContextVar.get and id(var) not in self.contextvars:
            self._dynamic(f"reads context variable {var.name!r} set outside the call")
        if fn is not contextvars.ContextVar.get and id(var) not in self.contextvars:
            self.contextvars[id(var)] = (var, var.get(NO_VALUE))
        self._pend(fs, self._post_new, 1)

    def _call_module(self, mod: torch.nn.Module) -> None:
        """``mod(x)`` runs ``Module.__call__`` (hooks, then ``forward``) in frames MagPy skips:
        guard that it still has no hooks, still uses its class's ``__call__`` and that no
        ``forward`` was set on the instance (or that it is still the one set)."""
        node = self.node(mod)
        self.uses_modules = True
        if type(mod).__call__ is not torch.nn.Module.__call__:
            return   # a Python __call__ of its own: its frame runs monitored
        if node is not None and node.source is not None:
            if "forward" in mod.__dict__:
                self.add_guard(NoHooksGuard(node.source))
                self.on_read(mod.__dict__["forward"], AttrSource(node.source, "forward", "__dict__"))
            else:
                self.add_guard(ModuleCallGuard(node.source, type(mod)))   # also: `__class__` not swapped
                self._guard_class_attr(type(mod), "forward")
        elif module_has_hooks(mod):
            raise BreakCompile(f"module {type(mod).__name__} has hooks")

    def _call_annotated(self, fs, fn, ann: Annotation, args, kwargs) -> None:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", str(fn))
        if ann is DYNAMIC or not ann.pure_closure:
            self._dynamic(f"calls `{name}`, which is not a pure closure (PureClosure=False)")
        if ann.meta:
            self._pend(fs, self._post_new, 1, opaque=True)
            return
        if ann.as_op_node is not None:
            # AsOpNode: the call itself becomes an operator-graph node (its native code never
            # runs on the matched path; the graph calls it).
            target = fn if ann.as_op_node == "function" else getattr(fn, "__name__", name)
            self._pend_op(fs, ann.as_op_node, target, list(args), dict(kwargs), name)
            return
        if ann.out_inplace and args:
            self._mutate(args[0])
        if fn in _LOGGED_MUTATIONS and args and self._log_mutation(args[0], fn.__name__, args[1:]):
            self._pend(fs, self._post_new, 1)
            return
        for i in ann.inplace:
            if i < len(args):
                self._mutate(args[i])
        if ann.relation is not None and args:
            rel = ann.relation(args, kwargs)
            if rel is not None and rel[0] in ("setattr", "delattr"):
                obj = args[0]
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.attr_writes.setdefault(node.node_id, {})[rel[1]] = True
                self._read_args(args[1:2])
                self._pend(fs, self._post_nothing, None, opaque=True)
                return
            if rel is not None:
                obj = args[0]
                node = self.node(obj)
                if isinstance(obj, torch.Tensor):
                    if rel[0] == "hasattr" or (rel[0] == "attr" and (rel[1] in T.META_ATTRS or
                                                                     callable(getattr(type(obj), str(rel[1]), None)))):
                        self._pend(fs, self._post_new, 1, opaque=True)
                        return
                    raise BreakCompile(f"`{name}` on a tensor")
                if node is not None and node.source is not None and is_immutable(rel[1]) \
                        and self.rg.read(node, (rel[0], rel[1])) is None and node.node_id not in self.mutated:
                    if rel[0] == "hasattr":
                        self._pend(fs, self._post_hasattr, (node, rel), opaque=True)
                        return
                    if rel[0] == "attr":
                        where, via = attr_location(obj, rel[1])
                        if where in ("class_fn",):
                            self._pend(fs, self._post_new, 1, opaque=True)
                            return
                        src = AttrSource(node.source, rel[1], via)
                    else:
                        if not isinstance(obj, (list, tuple, dict)):
                            self._pend(fs, self._post_new, 1)
                            return
                        src = ItemSource(node.source, rel[1])
                    default = len(args) > 2 or (rel[0] == "item" and fn is dict.get)
                    self._pend(fs, self._post_relation, (node, rel, src, default, obj), opaque=True)
                    return
                self._pend(fs, self._post_new, 1, opaque=isinstance(obj, torch.nn.Module))
                return
        self._read_args(args, ann, fn)
        self._read_args(list(kwargs.values()), None, fn)
        # Python callbacks (sorted(key=...), map(fn, ...)) run monitored.
        self._pend(fs, self._post_new, 1)

    def _post_relation(self, fs, stack, data):
        node, rel, src, has_default, obj = data
        value = stack[-1]
        if has_default:
            present = relation_present(obj, rel)
            self.add_guard(PresentGuard(src if rel[0] == "item" else AttrSource(node.source, rel[1]),
                                        rel, present))
            if not present:
                return
        self.on_read(value, src, rel, node)

    def _partial_fields(self, p) -> None:
        node = self.node(p)
        if node is None:
            raise BreakCompile("calls a functools.partial of unknown origin")
        if node.source is None:
            return   # made in this call: its fields were seen going in
        args_src = AttrSource(node.source, "args")
        for i, a in enumerate(p.args):
            self.on_read(a, ItemSource(args_src, i))
        if p.keywords:
            self.on_read(p.keywords, AttrSource(node.source, "keywords"))
            self.full_read(p.keywords)   # a dict: changed in place, so its contents are guarded

    def _post_deref(self, fs, stack, src):
        self.on_read(stack[-1], src)

    def _post_hasattr(self, fs, stack, data):
        node, rel = data
        self.add_guard(HasAttrGuard(node.source, rel[1], bool(stack[-1])))
