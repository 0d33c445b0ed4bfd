"""The update rules of a monitor run: one per bytecode event (paper §4.1, Table 1).

Each ``op_<EVENT>`` sees the value stack before the event's instruction runs (its inputs) and,
where the outputs matter, pends a post rule that sees them at the next event of the same frame
(:meth:`~magpy.monitor.run.Monitor.pend`). The rules here are the events that are not reads
from outside: stores and deletes (a write the mock replays is a new RefGraph version), new
objects, operators, truth tests, iteration and unpacking, f-strings and calls (decided by
:mod:`magpy.monitor.calls`). Reads from outside are :mod:`magpy.monitor.reads` and
:mod:`magpy.monitor.attrs`; tensor operations become graph nodes in :mod:`magpy.monitor.ops`.
"""
from __future__ import annotations

import array
import collections
import decimal
import operator as _operator
import types
from typing import Any

import torch

from .. import capture
from ..annotations import torch_ops as T
from ..breaks import BreakCompile
from ..bytecode import DECODER
from ..bytecode.flow import flow_of, suspended_at_yield
from ..graph import Unsupported
from ..objmodel import (
    CONTAINER_TYPES,
    MAPPINGS,
    NO_NODE_TYPES,
    attr_location,
    exact_key,
    is_immutable,
    is_instance,
    is_python_class,
    peek_items,
    write_hook,
)
from ..refgraph import Change
from .attrs import raw_cell
from .frame import FrameState
from .ops import set_data
from .scalars import NUMPY_VALUES, format_text, join_text, replace_top


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


# Opcodes that hash what they put in a set or dict (see UpdateRules._check_hashed).
_HASHING = frozenset({"BUILD_SET", "BUILD_MAP", "SET_ADD", "MAP_ADD", "SET_UPDATE"})
#: The augmented assignments (``x += y``): on a mutable ``x``, a write of ``x`` ...
_AUGMENTED = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^=", "@="})
#: ... but these types make a new value (a tensor's in-place operator is the graph's, counted there).
NEW_VALUE_TYPES = (int, float, complex, str, bytes, tuple, frozenset, type(None), torch.Tensor)

collections_deque = collections.deque


class UpdateRules:
    """The update rules of the events that are not reads from outside (a rule object of the run):
    they ask the reads (``on_read``, ``full_read``, ``read_args``...), the call decision
    (``decide_call``) and the operator recording (``pend_op``, ``record_op``, ``to_arg``)."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("assume", "assume_tensor_read", "bind_iterated_tensors", "bind_rows", "break_run",
            "cell_of", "check_stateful_iterator", "decide_call", "drained", "from_outside",
            "full_read", "go_dynamic", "guard_identity", "held_node", "holds_scalar", "node",
            "numpy_node", "numpy_op", "pend", "pend_op", "post_assumed", "post_contains",
            "post_nested_param", "post_param", "post_param_pair", "read_args", "read_cell",
            "read_native_state", "scalar_binary", "scalar_compare", "scalar_escape", "scalar_node",
            "scalar_unary", "star_map", "subscr", "tensor_mutated", "text_op", "to_arg",
            "unguarded_items", "value_guard")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    # -- writes and new objects ---------------------------------------------------------------------
    def note_write(self, obj: Any, kind: str, key: Any = None) -> None:
        """Record in the RefGraph that the instruction running writes ``obj`` (a :class:`~magpy.refgraph.Write`),
        whatever its origin: a write to an object from outside is also a version the mock
        replays (made where the rule handles it); one to an object made in the call is only this
        record, which the dynamic watchers ask (did a loop iteration or an arm write anything)."""
        self.run.rg.note_write(self.node(obj) if obj is not None else None, Change(kind, key), obj)

    def log_mutation(self, obj, method: str, args: list) -> bool:
        """Changes that do not read the container (append, insert, d[k] = v...) are replayed
        by the mock as the same calls, so the container's contents need no guard."""
        node = self.node(obj)
        if node is None or node.source is None or node.full_read or node.node_id in self.run.mutated:
            return False
        if method == "extend":
            if not isinstance(args[0], (list, tuple)):
                return False
            args = [list(args[0])]
        if method in ("insert", "__setitem__") and not is_immutable(args[0]):
            return False
        if not self.run.rg.has_logged_calls(node):
            node.snapshot = type(obj)(obj) if type(obj) in (list, dict, set) else list(obj)
            if type(obj) is set:   # (a copy need not iterate in the set's order: keep the order seen)
                self.run.set_entry_keys[node.node_id] = exact_key(obj)
        self.run.rg.log_call(node, method, args)
        return True

    def mutate(self, obj: Any) -> None:
        """An in-place change of ``obj`` (InPlace=True): full guard first, then a new version."""
        node = self.node(obj)
        if node is None and not is_instance(obj, torch.Tensor):
            raise BreakCompile(f"changes a {type(obj).__name__} whose origin MagPy did not see in place")
        if node is None or node.source is None:
            return
        if is_instance(obj, (list, dict, set, collections_deque)):
            self.full_read(obj)
        elif not is_instance(obj, torch.Tensor):
            raise BreakCompile(f"in-place change of a {type(obj).__name__} from outside is not reproducible")
        self.run.rg.inplace(node)
        self.run.mutated.add(node.node_id)

    def new_outputs(self, values) -> None:
        for v in values:
            if v is capture.NULL or is_immutable(v) or is_instance(v, NO_NODE_TYPES):
                continue
            if self.node(v) is None:
                self.run.rg.new(v)

    # -- per-event update rules (every CPython version) ------------------------------------------
    def post_new(self, fs, stack, n):
        self.new_outputs(stack[-n:] if n else ())

    def op_PASS(self, fs: FrameState, ins, stack: list) -> None:
        """Moves references only (stack shuffles, jumps, constants): nothing to track."""
        if self.run.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)

    def op_NEW(self, fs: FrameState, ins, stack: list) -> None:
        """Leaves a new object on top that only references its inputs (a container, a function)."""
        if self.run.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)
        self.pend(fs, self._post_new_function if ins.real == "MAKE_FUNCTION" else self.post_new, 1)

    def _post_new_function(self, fs, stack, n):
        """A function made in the call: which frame made it (its closure holds that frame's cells,
        which a split that resumes both must share, magpy.splits)."""
        self.post_new(fs, stack, n)
        fn = stack[-1]
        if isinstance(fn, types.FunctionType):
            # (the frame is held until the run ends: its id names its cells, and must not be reused;
            # the mock rebuilds a function made in the call that the call returns or stores)
            self.run.made_functions[id(fn)] = (fn, fs.frame)

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
            self.pend(fs, self.post_param, ins.argval)

    op_LOAD_FAST_CHECK = op_LOAD_FAST

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
        if name in self.run.param_values and value is self.run.param_values[name]:
            fs.unwritten_params.add(name)
        else:
            fs.unwritten_params.discard(name)

    def op_LOAD_FAST_LOAD_FAST(self, fs, ins, stack):
        if fs.is_top and (ins.argval[0] in fs.unwritten_params or ins.argval[1] in fs.unwritten_params):
            self.pend(fs, self.post_param_pair, ins.argval)

    def op_STORE_FAST_LOAD_FAST(self, fs, ins, stack):
        if fs.is_top:
            self._store_local(fs, ins.argval[0], stack[-1])
            if ins.argval[1] in fs.unwritten_params and ins.argval[1] not in fs.code.co_cellvars:
                self.pend(fs, self.post_param, ins.argval[1])

    def op_STORE_FAST_STORE_FAST(self, fs, ins, stack):
        if fs.is_top:
            self._store_local(fs, ins.argval[0], stack[-1])
            self._store_local(fs, ins.argval[1], stack[-2])

    def op_LOAD_DEREF(self, fs, ins, stack):
        name = ins.argval
        if fs.is_top and name in fs.unwritten_params:
            self.pend(fs, self.post_param, name)
            return
        code = fs.code
        if name in code.co_freevars:
            cell = self.cell_of(fs, code.co_freevars.index(name))
            if cell is not None:
                if not self.run.rg.cell_written(cell):
                    self.read_cell(fs, cell)
                return
        if name in self.run.param_values:
            # A comprehension, generator expression, lambda or inner function made during the
            # call reads a cell of the frame that made it: the compiled frame's cell of an
            # argument holds that argument until a frame stores to it, and where only nested
            # code reads it, no load of the compiled frame ever saw it. (The compiled frame
            # itself, after a store gave the cell back: an inlined comprehension's, 3.12+.)
            self.pend(fs, self.post_nested_param, name)

    op_LOAD_CLASSDEREF = op_LOAD_DEREF

    def op_STORE_DEREF(self, fs, ins, stack, deleted: bool = False):
        name = ins.argval
        self.note_write(None, "cell", name)
        if fs.is_top:
            fs.unwritten_params.discard(name)
            self.run.rebound_cells.add(name)   # (a parameter's cell no longer holds the argument: trace.param_cells)
        code = fs.code
        if name in code.co_freevars:
            c = raw_cell(fs.frame, code.co_freevars.index(name))
            self.run.rebound_cells.add(id(c) if c is not None else "?")   # ("?": some cell, not told which)
            cell = self.cell_of(fs, code.co_freevars.index(name))
            if cell is not None:   # (a cell that outlives the call: the mock replays its last contents)
                self.run.rg.write_cell(cell, *(() if deleted else (stack[-1],)))

    def op_DELETE_DEREF(self, fs, ins, stack):
        """``del y`` of a cell variable: a store that leaves the cell empty."""
        self.op_STORE_DEREF(fs, ins, stack, deleted=True)

    def op_STORE_GLOBAL(self, fs, ins, stack):
        self.run.rg.write_global(fs.frame.f_globals, ins.argval, stack[-1])

    def op_DELETE_GLOBAL(self, fs, ins, stack):
        self.run.rg.write_global(fs.frame.f_globals, ins.argval)

    # attribute writes
    def op_STORE_ATTR(self, fs, ins, stack):
        self.attr_write(fs, stack[-1], ins.argval, stack[-2])

    def _post_requires_grad(self, fs, stack, data):
        t, value = data
        self.run.graph.call("method", "requires_grad_", (self.to_arg(t), value), {})

    def _post_set_data(self, fs, stack, data):
        t, value = data
        self.run.graph.call("function", set_data, (self.to_arg(t), self.to_arg(value)), {})
        outside = self.from_outside(t) or any(x is t for _, x in self.run.graph.inputs)
        self.tensor_mutated(t, None)
        self.run.mutates_outside = self.run.mutates_outside or outside

    def attr_write(self, fs, obj, name: str, value) -> None:
        """``obj.name = value`` (``STORE_ATTR`` or the builtin ``setattr``, which both go through
        ``type(obj).__setattr__``): a write the mock replays, or a property setter monitored."""
        self.note_write(obj, "attr", name)
        if is_instance(obj, torch.Tensor):
            if name == "requires_grad" and value is obj.requires_grad:
                # A no-op (`mask.requires_grad = False` on a tensor that has none): for a tensor from
                # outside, its requires_grad is part of the tensor guard.
                self.pend(fs, self.post_nothing, None, opaque=True)
                return
            if name == "requires_grad" and type(value) is bool and type(obj) is torch.Tensor \
                    and obj.grad_fn is None and self.run.graph.node_of(obj) is not None and not self.from_outside(obj):
                # `out = torch.zeros(...); out.requires_grad = True`: a leaf the call made becomes one
                # autograd records, as `requires_grad_` in the graph, in program order.
                self.pend(fs, self._post_requires_grad, (obj, value), opaque=True)
                return
            if name == "data" and isinstance(value, torch.Tensor) and self.run.switches.eager_graph \
                    and type(obj) in (torch.Tensor, torch.nn.Parameter) and type(value) in (torch.Tensor, torch.nn.Parameter) \
                    and all(self.run.graph.node_of(t) is not None or self.from_outside(t) for t in (obj, value)):
                # `u.data = l2normalize(w @ v)` (power iteration on a buffer, spectral norm): `set_data`
                # in the graph, in program order; the eager graph runs it on the very tensor.
                self.pend(fs, self._post_set_data, (obj, value), opaque=True)
                return
        node = self.held_node(obj)
        if type(obj) is torch.Tensor and not hasattr(type(obj), name) and self.run.graph.node_of(obj) is not None \
                and not self.from_outside(obj) and (node is None or node.source is None):
            # `out.stop_gradient = True` on a tensor the call made: an entry of its own __dict__,
            # which the mock sets on the graph's output (magpy.codegen.mock) where it reaches outside
            self.pend(fs, self.post_nothing, None, opaque=True)
            return
        if is_instance(obj, torch.Tensor) and (hasattr(type(obj), name) or node is None or node.source is None):
            raise BreakCompile(f"writes tensor attribute `{name}`")
        # (`x.grid = None` on a tensor from outside: an attribute of the object's own __dict__,
        # no tensor property, replayed by the mock like any attribute write)
        if attr_location(obj, name)[0] == "property":
            self.pend(fs, self.post_nothing, None)   # the setter runs monitored: its own writes count
            return
        if node is None:
            raise BreakCompile(f"writes attribute `{name}` of a {type(obj).__name__} whose origin "
                               "MagPy did not see, so the write could not be replayed")
        if write_hook(obj, name) is not None:
            # the class's own Python code does the write (`__setattr__` that logs, a descriptor's
            # `__set__`): it runs monitored and its reads and writes count, as a property's setter
            # does; no version of the attribute is replayed (that would run the code twice, and
            # a record that rebuilds an object made in the call would skip it)
            self.pend(fs, self.post_nothing, None)
            return
        if node.source is None:
            self.pend(fs, self.post_nothing, None, opaque=True)
            return
        self.run.rg.write_attr(node, name, value)
        self.pend(fs, self.post_nothing, None, opaque=True)

    def op_DELETE_ATTR(self, fs, ins, stack):
        obj = stack[-1]
        self.note_write(obj, "attr", ins.argval)
        node = self.held_node(obj)
        if node is None:
            raise BreakCompile(f"deletes attribute `{ins.argval}` of an object of unknown origin")
        if write_hook(obj, ins.argval, delete=True) is not None:
            self.pend(fs, self.post_nothing, None)   # a Python `__delattr__`/`__delete__` runs monitored
            return
        if node.source is not None:
            self.run.rg.write_attr(node, ins.argval)
        self.pend(fs, self.post_nothing, None, opaque=True)

    def post_nothing(self, fs, stack, data):
        pass

    # subscripts
    def op_BINARY_SUBSCR(self, fs, ins, stack):
        self.subscr(fs, stack[-2], stack[-1])

    def op_BINARY_SLICE(self, fs, ins, stack):
        self.subscr(fs, stack[-3], slice(stack[-2], stack[-1]))

    def op_STORE_SUBSCR(self, fs, ins, stack):
        self._store_subscr(fs, stack[-2], stack[-1], stack[-3])

    def op_STORE_SLICE(self, fs, ins, stack):
        self._store_subscr(fs, stack[-3], slice(stack[-2], stack[-1]), stack[-4])

    def _store_subscr(self, fs, container, key, value) -> None:
        self.note_write(container, "item")
        if self.numpy_node(container) is not None:
            self.go_dynamic("changes an array read from tensor values in place (item assignment)")
        if self.run.loop_watcher.loop_indexes and self.run.loop_watcher.is_loop_element(container, key):
            self.pend(fs, self.post_new, 1)   # xs[i] in `for i in range(len(xs))` (magpy.dynamic.loops)
            return
        if self.run.scalar_nodes and not isinstance(container, torch.Tensor) and self.holds_scalar(key):
            self.scalar_escape("indexes a container with", key)
        if isinstance(container, torch.Tensor):
            # (through a boolean mask too: the container keeps its shape; a value of the wrong
            # length fails in the graph as it does in eager)
            self.pend(fs, self._post_setitem, (container, key, value), opaque=True)
            return
        if not isinstance(container, MAPPINGS) and T.tensor_in_index(key):   # (`xs[:n] = ys`: which items change depends on tensor values)
            raise BreakCompile("assigns to items of a Python container indexed with a tensor")
        if isinstance(container, (dict, list)) and is_immutable(key) and \
                self.log_mutation(container, "__setitem__", [key, value]):
            self.pend(fs, self.post_nothing, None)
            return
        self.mutate(container)
        self.pend(fs, self.post_nothing, None)

    def _post_setitem(self, fs, stack, data):
        container, key, value = data
        self.run.graph.call("function", _operator.setitem,
                        (self.to_arg(container), self.to_arg(key), self.to_arg(value)), {})
        self.tensor_mutated(container, None)

    def op_DELETE_SUBSCR(self, fs, ins, stack):
        container = stack[-2]
        self.note_write(container, "item")
        if self.holds_scalar(stack[-1]):
            self.scalar_escape("indexes a container with", stack[-1])
        if isinstance(container, torch.Tensor):
            raise BreakCompile("deletes from a tensor")
        if not isinstance(container, MAPPINGS) and T.tensor_in_index(stack[-1]):
            raise BreakCompile("deletes items of a Python container indexed with a tensor")
        self.mutate(container)

    # operators
    def op_BINARY_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        sym = ins.argrepr
        if sym in _AUGMENTED and not isinstance(a, NEW_VALUE_TYPES):
            self.note_write(a, "call", sym)   # (`lst += [x]` changes the list; on a tensor: the graph's in-place op)
        if self.run.scalar_nodes and not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor) \
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
            self.pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
        capture.announce_operator(sym, a, b)
        if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
            self.go_dynamic(f"applies `{sym}` to a Decimal (the result follows the thread's decimal context)")
        if sym.endswith("=") and isinstance(a, (list, dict, set, collections_deque, bytearray, array.array)):
            self.mutate(a)
            self.read_args([b])
        else:
            for v in (a, b):
                if isinstance(v, CONTAINER_TYPES):
                    self.read_args([v])
        self.pend(fs, self.post_new, 1)

    def op_COMPARE_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            fn = T.COMPARE_OPS[ins.argval]
            if (a is None or b is None) and ins.argval in ("==", "!=") \
                    and type(a if b is None else b) in (torch.Tensor, torch.nn.Parameter):
                # (`mask == None`: the tensor's __eq__ gives NotImplemented, Python compares identities)
                self.pend(fs, self.post_new, 1)
                return
            if ins.to_bool:
                # 3.13: the comparison and its truth test in one instruction: the graph computes the
                # comparison, the outcome the run saw is assumed (magpy.monitor.scalars)
                if not all(type(v) is torch.Tensor or type(v) in (int, float, bool) for v in (a, b)) \
                        or any(isinstance(v, torch.Tensor) and v.numel() != 1 for v in (a, b)):
                    self.go_dynamic("branches on a tensor value (a tensor comparison used as a condition)")
                self.pend(fs, self.post_assumed, ("function", fn, (self.to_arg(a), self.to_arg(b))), opaque=True)
                return
            self.pend_op(fs, "function", fn, [a, b], {}, fn.__name__)
            return
        if self.holds_scalar(a) or self.holds_scalar(b):
            if self._numpy_operator(fs, ins.argval, a, b):
                return   # (3.13's comparison used as a condition leaves a bool: its outcome is assumed)
            self.run.loop_watcher.whiles.on_compare(fs, ins, self.run.at_instruction[1], a, b)   # (a counted while loop's test: magpy.dynamic.loops)
            self.scalar_compare(fs, T.COMPARE_OPS[ins.argval], a, b)
            return
        capture.announce_operator(ins.argval, a, b)
        for v in (a, b):
            if not isinstance(v, CONTAINER_TYPES) and not isinstance(type(v).__eq__, types.FunctionType):
                self.guard_identity(v)   # compared by identity or by a native __eq__ MagPy cannot see into
        self.read_args([v for v in (a, b) if isinstance(v, CONTAINER_TYPES)])
        self.pend(fs, self.post_new, 1)   # (a new object, when not a bool: numpy's elementwise `arr > p`)

    def op_CONTAINS_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if self.holds_scalar(a) or self.holds_scalar(b):
            self.scalar_escape("tests membership with", a, b)
        if isinstance(a, torch.Tensor) and type(b) in (set, frozenset, dict) and self.node(b) is not None \
                and self.node(b).source is None:
            # A set or dict made in the call (a memo of parameters seen): tensors hash by
            # identity, so membership is identity, which the guards already fix.
            return
        if type(b) is torch.Tensor and (type(a) in (int, float, bool) or type(a) is torch.Tensor):
            # `pad_id in ids`: Tensor.__contains__, Python code computing `(a == b).any().item()`,
            # which the monitor follows (the value read is an assumption like any other)
            return
        if isinstance(b, torch.Tensor) or isinstance(a, torch.Tensor):
            self.go_dynamic("`in` reads tensor values")
        node = self.node(b)
        if node is not None and node.source is not None and isinstance(b, (set, frozenset, *MAPPINGS)) \
                and (is_immutable(a) or isinstance(a, (type, types.FunctionType))) and node.node_id not in self.run.mutated:
            self.pend(fs, self.post_contains, (node, a, bool(ins.arg)))   # guard `(a in b) is result`
            return
        self.unguarded_items(b, "tests membership in")
        if isinstance(b, CONTAINER_TYPES) or isinstance(b, collections_deque):
            self.read_args([b])
            self.guard_identity(a)
            for e in (b if isinstance(b, (list, tuple, collections_deque)) else ()):
                self.guard_identity(e)   # `in` compares by identity first

    def _numpy_operator(self, fs, sym: str, a, b) -> bool:
        """``a <sym> b`` with a numpy value read from tensors (``arr * 2``, ``arr > p``, ``s + 1``):
        a graph node. In place on an array (``arr += 1``) is dynamic."""
        if self.numpy_node(a) is None and self.numpy_node(b) is None:
            return False
        inplace = sym.endswith("=") and sym not in ("==", "!=", "<=", ">=")
        if inplace and isinstance(a, NUMPY_VALUES[0]) and self.numpy_node(a) is not None:
            self.go_dynamic(f"changes an array read from tensor values in place (`{sym}`)")
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
        if self.run.scalar_nodes and self.scalar_node(v) is not None:
            self.scalar_unary(fs, ins.opname, v)
            return
        if isinstance(v, torch.Tensor):
            fn = T.UNARY_OPS[ins.opname]
            self.pend_op(fs, "function", fn, [v], {}, fn.__name__)
            return
        self.pend(fs, self.post_new, 1)

    op_UNARY_NEGATIVE = op_UNARY_POSITIVE = op_UNARY_INVERT = _unary

    def op_TRUTH(self, fs, ins, stack):
        """A conditional jump, ``not`` or 3.13's ``TO_BOOL`` reads the truth of the top value."""
        v = stack[-1]
        if self.run.scalar_nodes and self.scalar_node(v) is not None:
            self.assume("truth", self.scalar_node(v), self.truth_taken(fs, stack, bool(v)))
        if isinstance(v, torch.Tensor) and not self.value_guard(v) \
                and not self.assume_tensor_read(v, "truth", self.truth_taken(fs, stack, bool(v))):
            self.go_dynamic("branches on a tensor value")
        if isinstance(v, CONTAINER_TYPES) or isinstance(v, collections_deque):
            self.read_args([v])

    def truth_taken(self, fs, stack, natural: bool) -> bool:
        """The truth of a value the graph computes that the program goes on with: ``natural``,
        but in an other-side run the other one where that run takes the other side (put on the
        stack for the conditional jump; magpy.dynamic.other_side)."""
        if self.run.other_sides is None or not self.run.branch_watcher.takes_other_side(natural):
            return natural
        replace_top(fs, stack, not natural)
        self.run.other_sides.flipped += 1
        return not natural

    # iteration and unpacking
    def op_GET_ITER(self, fs, ins, stack):
        v = stack[-1]
        if self.run.loop_watcher.loop_ranges and self.run.loop_watcher.iter_over_range(fs, v):
            return   # (`for i in range(n)` of a tracked count: a counted loop, magpy.dynamic.loops)
        if self.run.loop_watcher.counted and self.run.loop_watcher.iter_over_sequence(fs, v):
            return   # (`for x in xs` over an unbind of a lifted size: a counted loop)
        if isinstance(v, torch.Tensor):
            self.pend(fs, self._post_tensor_iter, v, opaque=True)
            return
        if isinstance(v, (*CONTAINER_TYPES, collections_deque, types.MappingProxyType)):
            self.read_args([v]) if not T.contains_tensor(v) else self.full_read(v)
        elif hasattr(type(v), "__next__"):
            if self.run.switches.split_shape is not None and ins.real == "GET_ITER" and self.outside_iterator(v) \
                    and fs.instrs.get(flow_of(fs.code).next_offset(ins.offset) or -1, ins).real == "FOR_ITER":
                # (a `for` loop of this frame: its steps may split the call, op_FOR_ITER; `iter(it)`
                # gives `it` itself. Passed on, to a comprehension or a generator, it stays dynamic.)
                self.run.outside_iterators[id(v)] = v
                self.pend(fs, self._post_outside_iter, v)
                return
            self.check_stateful_iterator(v, "iterates over")
        else:
            self.unguarded_items(v, "iterates over")
        self.pend(fs, self.post_new, 1)

    def _post_tensor_iter(self, fs, stack, t):
        self.bind_iterated_tensors([t], stack[-1])
        if self.run.rows_count is not None:
            # `for row in t` over a lifted first size: a counted loop (magpy.dynamic.loops)
            self.run.loop_watcher.loop_over_rows(fs, self.run.rows_count, t.shape[0], stack[-1])
            self.run.rows_count = None

    op_GET_YIELD_FROM_ITER = op_GET_ITER

    def _post_outside_iter(self, fs, stack, v):
        if stack[-1] is not v:   # (an `__iter__` of its own that gives another iterator)
            self.check_stateful_iterator(v, "iterates over")

    def outside_iterator(self, it) -> bool:
        """Is ``it`` an iterator that exists outside the call (each call advances it)?"""
        node = self.node(it)
        return node is None or node.source is not None or id(it) in self.run.outside_iterators

    def op_UNPACK_SEQUENCE(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            self.pend(fs, self._post_tensor_unpack, (v, ins.argval), opaque=True)
            return
        if isinstance(v, (list, tuple, dict)):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
        else:
            self.unguarded_items(v, "unpacks")
        self.pend(fs, self.post_new, ins.argval)

    def _post_tensor_unpack(self, fs, stack, data):
        t, n = data
        self.bind_rows(t, reversed(stack[-n:]))   # the first row is left on top

    def op_UNPACK_EX(self, fs, ins, stack):
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            self.pend(fs, self._post_tensor_unpack_ex, (v, ins.arg & 0xFF, ins.arg >> 8), opaque=True)
            return
        self.unguarded_items(v, "unpacks")
        self.read_args([v]) if isinstance(v, CONTAINER_TYPES) and not T.contains_tensor(v) else self.full_read(v)
        self.pend(fs, self.post_new, 1)

    def _post_tensor_unpack_ex(self, fs, stack, data):
        """``a, *rest, b = t``: the targets are left first on top, ``rest`` a new list of rows."""
        t, before, after = data
        left = list(reversed(stack[-(before + 1 + after):]))
        rows = [*left[:before], *left[before], *left[before + 1:]]
        self.bind_rows(t, rows)
        self.new_outputs([left[before]])

    def op_FOR_ITER(self, fs, ins, stack):
        if self.run.loop_watcher.loop_iters and self.run.loop_watcher.on_loop_back(fs, stack[-1]):
            return   # (an iteration of a counted loop, magpy.dynamic.loops)
        it = stack[-1]
        if id(it) in self.run.outside_iterators or ((node := self.node(it)) is not None and node.source is not None):
            # A step of an iterator from outside (passed in, or resumed after an earlier step split
            # the call): the call splits here, each step runs eagerly (magpy.splits); where it
            # cannot, the call is dynamic (break_run).
            why = f"iterates over an iterator that exists outside the call ({type(it).__name__}): each call advances it"
            if self.run.switches.split_shape is None:
                self.go_dynamic(why)
            raise BreakCompile(why)
        self.pend(fs, self.post_new, 1)

    def _outside_display(self, ins, stack, below: int) -> None:
        """A list, set or dict display or comprehension adds to the container it builds, which is
        made in the call, except in a frame resumed after a split (magpy.splits), where it came
        in from outside: then the addition is an in-place change the mock replays."""
        target = stack[-(ins.arg + below)]
        if ins.real in ("LIST_APPEND", "SET_ADD", "MAP_ADD"):
            self.note_write(target, "build", ins.real)
        node = self.node(target)
        if node is None or node.source is None:
            return
        if ins.real == "LIST_APPEND" and self.log_mutation(target, "append", [stack[-1]]):
            return
        if ins.real == "MAP_ADD" and self.log_mutation(target, "__setitem__", [stack[-2], stack[-1]]):
            return
        self.mutate(target)

    def op_CONTAINER_ADD(self, fs, ins, stack):
        if self.run.scalar_nodes and ins.real in _HASHING:
            self._check_hashed(ins, stack)
        self._outside_display(ins, stack, 2 if ins.real == "MAP_ADD" else 1)

    def op_LIST_EXTEND(self, fs, ins, stack):
        self._outside_display(ins, stack, 1)
        v = stack[-1]
        if isinstance(v, torch.Tensor):
            if ins.real != "LIST_EXTEND":
                raise BreakCompile("builds a set of a tensor's rows (hashes them)")
            self.pend(fs, self._post_list_extend, (v, ins.argval), opaque=True)
            return
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)
        else:
            self.unguarded_items(v, "unpacks")

    def _post_list_extend(self, fs, stack, data):
        """``[*t]``: the list below the popped tensor ends with its rows."""
        t, depth = data
        target = stack[-depth]
        self.bind_rows(t, target[len(target) - t.shape[0]:] if t.dim() else ())

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, fs, ins, stack):
        self._outside_display(ins, stack, 1)
        v = stack[-1]
        if self.run.scalar_nodes and isinstance(v, dict) and self.holds_scalar(list(v)):
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
            self.go_dynamic("formats a tensor as text (reads its values)")
        if self.holds_scalar(v):
            self.scalar_escape("formats", v)
        if isinstance(v, CONTAINER_TYPES):
            self.full_read(v)
        self.read_native_state(v)

    def op_BUILD_STRING(self, fs, ins, stack):
        """An f-string's pieces joined: a text node when one of them is (``ScalarFlow.text_op``)."""
        parts = stack[len(stack) - ins.arg:] if ins.arg else []
        if self.run.scalar_nodes and self.holds_scalar(parts) and not self.text_op(fs, join_text, tuple(parts)):
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
        self.decide_call(fs, fn, pos, kw)

    def op_CALL_FUNCTION_EX(self, fs, ins, stack):
        fn, pos, kw = DECODER.call_ex_operands(ins, stack)
        for c in (pos, kw):
            node = self.node(c)
            if node is not None and node.source is not None:
                self.full_read(c)
        if type(pos) in (map, filter) and peek_items(pos) is None:
            if type(pos) is map and not _is_python_callable(fn) and self.star_map(fs, fn, pos, dict(kw)):
                return   # (a native's call, decided after it ran with what the map's frames returned)
            pos = self.drained(fs, pos, stack) or pos   # (f(*map(g, xs)): a generator draws it, monitored)
        if isinstance(pos, (tuple, list)):
            self.decide_call(fs, fn, list(pos), dict(kw))
        elif isinstance(pos, types.GeneratorType) and pos.gi_frame is not None:
            # ``f(*gen)``: the interpreter runs the generator to a tuple, then calls ``f``. Its
            # frames run monitored; the call is handled when it returns, with what it yielded.
            collector: list = []
            self.run.yield_collectors[id(pos.gi_frame)] = collector
            self.run.star_calls[id(pos.gi_frame)] = (fs, ins.offset, fn, collector, dict(kw))
        else:
            self.decide_call(fs, fn, _star_items(pos), dict(kw))

    def star_generator_left(self, frame, fs: FrameState) -> None:
        """A generator unpacked by ``f(*gen)`` yielded or ended: on its return, ``f`` is next."""
        if suspended_at_yield(fs.code, frame.f_lasti):
            return   # (3.13 leaves f_lasti at the RESUME after the yield)
        ins = fs.instrs.get(frame.f_lasti)
        outer, offset, fn, items, kw = self.run.star_calls.pop(id(frame))
        self.run.yield_collectors.pop(id(frame), None)
        if ins is None or not ins.real.startswith("RETURN") or self.run.broken is not None:
            return   # it raised: the call never happens
        try:
            self.decide_call(outer, fn, list(items), kw)
        except BreakCompile as e:
            self.break_run(e.reason, outer, offset)
        except Unsupported as e:
            self.break_run(str(e), outer, offset)

    def op_RAISE_VARARGS(self, fs, ins, stack):
        """``raise e`` writes the exception object (its ``__traceback__``, ``__context__``, and
        ``__cause__`` with ``from``): an exception object from outside would be left as the
        record's replay cannot leave it (no raise happens there)."""
        exc = stack[-ins.arg] if ins.arg else None
        if isinstance(exc, BaseException) and self.from_outside(exc):
            self.go_dynamic(f"raises an exception object from outside ({type(exc).__name__}), which "
                            "raising changes (its __traceback__)")

    def op_YIELD_VALUE(self, fs, ins, stack):
        self.note_write(None, "yield")   # (control passes to a consumer whose state no watcher compares)
        collector = self.run.yield_collectors.get(id(fs.frame))
        if collector is not None:
            collector.append(stack[-1])
        if self.run.scalar_nodes and self.holds_scalar(stack[-1]) and not self._resumed_by_python(fs.frame):
            # `sum(d for d in t.shape)`: native code computes with the number and its result is
            # nobody the graph follows; the run depends on the exact value.
            self.scalar_escape("yields to native code", stack[-1])

    def _resumed_by_python(self, frame) -> bool:
        """Is the generator ``frame`` being advanced by a monitored ``for`` or ``yield from``
        (which hand the yielded object on as it is), rather than by native code (``sum(gen)``)?"""
        back = frame.f_back
        bfs = self.run.frames.get(id(back)) if back is not None else None
        if bfs is None or bfs.frame is not back:
            return False
        at = bfs.instrs.get(back.f_lasti)
        return at is not None and at.real in ("FOR_ITER", "SEND", "YIELD_FROM")
