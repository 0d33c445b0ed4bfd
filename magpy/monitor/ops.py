"""Recording tensor operations during the monitor run: each one becomes an fx node.

A tensor method or torch function found by the call decision (:mod:`magpy.monitor.calls`) is
*pended* (:meth:`OpRecorder.pend_op`): the versions of its tensor inputs are noted, the
call runs in the real interpreter, and at the next instruction :meth:`OpRecorder.record_op`
sees its output and adds the operator-graph node:

* tensor arguments become graph nodes or placeholders with their source (:meth:`to_arg`);
  everything else is baked into the node as a constant;
* a tensor input whose ``_version`` moved was changed in place: a new ShadowVersion
  (InPlace) and a graph that mutates;
* a tensor operation that returns no tensor but reads tensor values is dynamic, and so is
  one inside a ``try`` whose ``except`` could catch a tensor error;
* a small CPU tensor read from outside may have its *value* guarded instead
  (:meth:`~magpy.monitor.reads.Reads.value_guard`).

Like :class:`~magpy.monitor.calls.CallRules`, :class:`OpRecorder` is a rule object of the run
(:mod:`magpy.monitor.rulebook`): these are steps of the same run over its state.
"""
from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

import torch

from ..annotations import torch_ops as T
from ..breaks import BreakCompile
from ..bytecode import catches_tensor_errors, catching_ranges, with_ranges
from ..bytecode.flow import may_swallow
from ..global_state import HARMLESS_NAMES, STATE_SETTER_NAMES, is_state_getter_name, is_state_setter_name
from ..graph import Unsupported, loop_index, range_len
from ..guards import array_same, array_snapshot, is_numeric_array
from ..lifted import LiftedInt
from ..objmodel import IMMUTABLE_TYPES, is_immutable, is_numpy_number, storage_key
from ..refgraph import forget_when_dead
from ..torch_support import version_counter
from .scalars import NUMPY_VALUES, shape_safe

if TYPE_CHECKING:
    from .frame import FrameState


_ITERATOR_TYPES = tuple({type(iter(())), type(iter([])), zip, enumerate, map, filter, reversed,
                         type(reversed([]))})


def array_tensor(t: torch.Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                 copy: Any = None) -> torch.Tensor:
    """``torch.from_numpy``/``as_tensor``/``tensor`` of an array the graph holds as tensor ``t``:
    a fresh tensor with the array's values (the graph's constant itself is never handed out)."""
    out = t.to(dtype=dtype if dtype is not None else t.dtype, device=device if device is not None else t.device,
               copy=True)
    return out.requires_grad_() if requires_grad else out


_PYTHON_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}

#: Metadata methods whose answer does not depend on the shape.
_VALUE_FREE_META = frozenset({"is_floating_point", "is_complex", "element_size", "get_device", "is_signed", "type",
                              "is_leaf", "is_inference", "is_pinned", "is_shared", "is_tensor", "has_names"})

_ARRAY_CONVERSIONS = frozenset({torch.from_numpy, torch.as_tensor, torch.asarray, torch.tensor})


def _row_sequences(out: Any, _depth: int = 0) -> list:
    """Tuples and lists of tensors in ``out`` or in the state of the iterators it holds."""
    if isinstance(out, (list, tuple)):
        found = [out] if out and all(isinstance(e, torch.Tensor) for e in out) else []
        if _depth < 2:
            for e in out:
                if isinstance(e, (list, tuple)) or type(e) in _ITERATOR_TYPES:
                    found.extend(_row_sequences(e, _depth + 1))
        return found
    if type(out) in _ITERATOR_TYPES and _depth < 6:
        try:
            state = out.__reduce__()[1]
        except Exception:  # noqa: BLE001 - an iterator without state to read: nothing found
            return []
        return [q for part in state for q in _row_sequences(part, _depth + 1)]
    return []


def _is_row_of(row: Any, t: torch.Tensor) -> bool:
    """Is ``row`` a view of ``t`` along its first dimension (one of ``t.unbind(0)``)?"""
    if not isinstance(row, torch.Tensor) or row.shape != t.shape[1:]:
        return False
    base = t._base if t._base is not None else t
    return row._base is base


#: Operator names (substrings) that draw random numbers: their results are no record constants.
_RANDOM_OPS = RANDOM_OPS = T.RANDOM_OPS


def _count_follows_rank(name: str, args: Any, kwargs: dict) -> bool:
    """Does the operator return one tensor per dimension of its input (``torch.where(cond)``,
    ``nonzero(as_tuple=True)``)? Ranks are guarded and never lifted: the count needs no assumption."""
    if name == "where":
        return len(args) == 1 and not kwargs
    if name == "nonzero":
        return kwargs.get("as_tuple") is True or (len(args) == 2 and args[1] is True)
    return False


_SCHEMA_RETURNS: dict[str, frozenset | None] = {}


def _count_fixed_by_schema(name: str, output: Any) -> bool:
    """Does the operator return a fixed number of tensors whatever its inputs (``lstm_cell``'s
    ``(h, c)``, ``sort``'s values and indices), as every ATen schema of that name says: no list
    among its returns, and as many returns as ``output`` holds? Then no size decides the count."""
    if name not in _SCHEMA_RETURNS:
        try:
            schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
        except Exception:
            schemas = []
        fixed = bool(schemas) and not any("List" in str(r.type) or "[]" in str(r.type)
                                          for sch in schemas for r in sch.returns)
        _SCHEMA_RETURNS[name] = frozenset(len(sch.returns) for sch in schemas) if fixed else None
    counts = _SCHEMA_RETURNS[name]
    return counts is not None and type(output) is tuple and len(output) in counts


def set_data(t: torch.Tensor, value: torch.Tensor) -> None:
    """``t.data = value`` as a node of the eager graph: ``t`` takes ``value``'s data and metadata
    (its storage shared with ``value``), as in the program."""
    t.data = value


_TORCH_FUNCTION_DEFAULTS = (torch.Tensor.__torch_function__.__func__, torch._C._disabled_torch_function_impl,
                            torch._C._disabled_torch_dispatch_impl)


def _own_torch_function(cls: type) -> bool:
    """Does tensor subclass ``cls`` override ``__torch_function__`` or ``__torch_dispatch__`` with
    code of its own (not torch's default, not disabled as ``nn.Parameter`` does, not torch's)?"""
    fn = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
    dispatch = getattr(cls.__torch_dispatch__, "__func__", cls.__torch_dispatch__)
    return any(f not in _TORCH_FUNCTION_DEFAULTS and not (getattr(f, "__module__", None) or "").startswith("torch")
               for f in (fn, dispatch))


class OpRecorder:
    """Tensor operations of the monitor run become operator-graph nodes (a rule object of the run);
    guards of values read through torch come from its reads (``value_guard``, ``state_read``:
    :mod:`magpy.monitor.reads`)."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("assume", "assume_tensor_read", "can_assume_read", "follows_sizes", "full_read",
            "go_dynamic", "holds_numpy", "holds_scalar", "mark_lifted_shape", "new_outputs", "node",
            "numpy_node", "pend", "read_storage_layout", "scalar_escape", "scalar_node",
            "shape_is_lifted", "state_read", "tracked_in", "where")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    def pend_op(self, fs: FrameState, kind: str, target: Any, args: list, kwargs: dict, name: str) -> None:
        """A tensor operation runs next: remember its inputs' versions to see in-place changes."""
        tensors = T.tensors_in(args, kwargs)
        own = next((t for t in tensors if type(t) is not torch.Tensor and _own_torch_function(type(t))), None)
        if own is not None and self.inside_except((Exception,)):
            # (the graph runs the subclass's Python code again, unmonitored: whether it raises, and
            # what, is whatever state it reads, not what the guards fix)
            raise BreakCompile(f"a tensor operation `{name}` inside `try`/`except` on a `{type(own).__qualname__}`, "
                               "a tensor subclass with its own `__torch_function__`/`__torch_dispatch__`")
        if tensors and name not in T.META_METHODS and self.inside_except():
            if not self.run.switches.raising_ok:
                self.go_dynamic(f"tensor operation `{name}` inside `try`/`except`: whether it raises depends on "
                              "tensor values, so the branch taken cannot be guarded")
            # Speculation: the record holds for calls on which the graph does not raise (as this
            # run's operator did not); one that raises is a miss, and the program runs again.
            self.run.speculative_ops.append(self.where())
        if self.run.other_sides is not None:
            self.run.other_sides.keep(self.run, tensors)   # (an in-place change of an outside tensor is undone after it)
        versions = [(t, version_counter(t)) for t in tensors]
        self.pend(fs, self.post_op, (kind, target, args, kwargs, name, versions), opaque=True)

    def raise_follows_metadata(self, kind: str, target: Any, args: Any, kwargs: dict, name: str) -> bool | str:
        """An operator raised in the monitor run (``try: x = x + self.pos_embed`` / ``except:``
        resize it): is that a function of what the guards fix? True for an out-of-place pointwise
        operator on floating-point tensors whose shapes are guarded (not lifted, not computed
        from values): it can only fail on shapes, dtypes or devices (a broadcast mismatch).
        Integer division by a zero element raises on values, so integer tensors do not count.
        ``"lifted"``: it would be, if the sizes were guarded (a lifted dimension is not)."""
        if name.endswith("_") or "out" in kwargs or not shape_safe(name):
            return False
        tensors = T.tensors_in(args, kwargs)
        if not tensors or self.holds_scalar(list(args)) or self.holds_scalar(list(kwargs.values())):
            return False
        if not all((t.is_floating_point() or t.is_complex()) and not self.is_value_shaped(t) for t in tensors):
            return False
        return "lifted" if any(self.shape_is_lifted(t) for t in tensors) else True

    def state_getter_raised(self, kind: str, target: Any, args: Any, kwargs: dict, name: str, exc: BaseException) -> bool:
        """A torch getter of process-wide state raised (``torch.cuda.is_current_stream_capturing()``
        on a build without CUDA, caught by the library's ``try``): whether it raises is a function
        of the process, like its answer, so the record guards that it raises the same class again."""
        if kind != "function" or kwargs or not is_state_getter_name(name) or not isinstance(exc, Exception) \
                or T.tensors_in(args, {}) or not all(is_immutable(a) for a in args):
            return False
        self.state_read(target, name, args, None, type(exc))
        return True

    def inside_except(self, errors: tuple | None = None) -> bool:
        """Is some monitored frame inside a ``try`` whose ``except`` could catch a tensor error
        (or one of ``errors``), or inside a ``with`` whose context manager could swallow it
        (``contextlib.suppress``)?"""
        for fs in self.run.frames.values():
            ranges = fs.catching
            if ranges is None:
                ranges = fs.catching = catching_ranges(fs.code)
            if ranges:
                at = fs.frame.f_lasti
                for start, end, caught in ranges:
                    if start <= at < end and catches_tensor_errors(caught, fs.frame, errors):
                        return True
            if fs.managers:
                at = fs.frame.f_lasti
                for start, end, entered in with_ranges(fs.code):
                    if start <= at < end and entered in fs.managers and may_swallow(fs.managers[entered]):
                        return True
        return False

    def post_op(self, fs, stack, data):
        """The pended operation ran: record it with its output."""
        kind, target, args, kwargs, name, versions = data
        has_t = any(T.contains_tensor(a) for a in args) or any(T.contains_tensor(v) for v in kwargs.values())
        self.record_op(kind, target, args, kwargs, stack[-1], has_t, name, versions)

    def is_value_shaped(self, t: Any) -> bool:
        """Was ``t`` computed (in this run) from an operator whose output shape depends on
        tensor values (a boolean mask, ``nonzero``...), directly or through other operators?"""
        return id(t) in self.run.value_shaped

    def _mark_value_shaped(self, output: Any) -> None:
        for t in T.tensors_in([output], {}):
            if id(t) not in self.run.value_shaped:
                self.run.value_shaped.add(id(t))
                forget_when_dead(t, self.run, "value_shaped", id(t))
            if self.run.switches.redraw_ok:
                # The backend serves changing sizes (as for lifted shapes): sizes read from this
                # tensor are graph nodes, followed like numbers read from tensor values.
                self.run.value_sizes_followed = True

    def check_shape_read(self, t: Any, what: str) -> None:
        """The program reads ``t``'s shape into Python: dynamic if that shape depends on values,
        unless the read is followed as a graph node (:meth:`shape_is_lifted`)."""
        if self.is_value_shaped(t) and not self.shape_is_lifted(t):
            self.go_dynamic(f"{what} of a tensor whose shape depends on tensor values")

    def bind_rows(self, t: torch.Tensor, rows: Any) -> None:
        """``rows`` are what iterating ``t`` gave (``Tensor.__iter__`` is ``iter(t.unbind(0))``):
        bind each to ``unbind(t, 0)[i]`` in the graph. Rows must be that unbind's outputs."""
        self.check_shape_read(t, "iterates over the rows")
        rows = list(rows)
        if t.dim() == 0 or len(rows) != t.shape[0] or not all(_is_row_of(r, t) for r in rows):
            raise BreakCompile("iterates over a tensor in a way MagPy cannot follow")
        n = self.run.graph.call("method", "unbind", (self.to_arg(t), 0), {})
        self.run.rows_count = None
        if self.shape_is_lifted(t):
            self.run.rows_count = self.run.graph.call("function", len, (n,), {})   # (a loop over the rows: magpy.dynamic.loops)
            self.assume("scalar", self.run.rows_count, len(rows))
            for e in rows:
                self.mark_lifted_shape(e)
        for i, e in enumerate(rows):
            self.run.graph.bind(e, self.run.graph.getitem(n, i))

    def bind_iterated_tensors(self, tensors: list, out: Any) -> None:
        """After a native (``zip``, ``enumerate``, ``map``, ``list``...) iterated ``tensors``:
        find each one's rows in ``out`` (a sequence, or iterators reached by ``__reduce__``)."""
        seqs = _row_sequences(out)
        for t in tensors:
            at = next((i for i, q in enumerate(seqs) if t.dim() and len(q) == t.shape[0] and q
                       and all(_is_row_of(r, t) and self.run.graph.node_of(r) is None for r in q)), None)
            if at is None:
                raise BreakCompile("iterates over a tensor in a way MagPy cannot follow")
            self.bind_rows(t, seqs.pop(at))   # (by position: `==` on sequences of tensors reads values)

    def _slice_bound(self, b: Any) -> Any:
        """A slice bound as the graph takes it. An integer tensor of one element is read by its
        ``__index__`` (``rel[512 - span:512 + span]`` with ``span = torch.tensor(256)``): where
        the graph computes it from no input, no draw and nothing changed in place since, it has
        that value on every call and the graph slices by the number; a backend then sees plain
        sizes instead of a size read from a tensor (Inductor: an unbacked symbol)."""
        if type(b) is torch.Tensor and b.dim() == 0 and not b.dtype.is_floating_point and not b.dtype.is_complex \
                and b.dtype is not torch.bool and b.device.type != "meta" and self.values_fixed(b):
            with torch._C.DisableTorchFunction():
                return int(b.item())
        return self.to_arg(b)

    def to_arg(self, v: Any, _depth: int = 0) -> Any:
        """Convert a runtime value to an fx argument: tensors become nodes, the rest is baked in."""
        if isinstance(v, torch.Tensor):
            n = self.run.graph.node_of(v)
            if n is not None:
                return n
            node = self.node(v)
            if node is not None and node.source is not None:
                return self.run.graph.placeholder(v, node.source)
            raise Unsupported(f"tensor of unknown origin ({type(v).__name__} {tuple(v.shape)}) used by an operator")
        t = type(v)
        if self.run.scalar_nodes and (t is float or t is LiftedInt or t is str or isinstance(v, NUMPY_VALUES)):
            node = self.scalar_node(v)
            if node is not None:
                return node
        if t in IMMUTABLE_TYPES or v is None:
            return v
        if t is type and v in _PYTHON_DTYPES:
            return _PYTHON_DTYPES[v]   # a Python type as a dtype (torch.eye(n, dtype=bool)), as torch reads it
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
                # A namedtuple (PackedSequence, torch.return_types are structseqs, not these):
                # the operator reads its fields by name, so the graph passes the same type.
                try:
                    return t(*conv)
                except TypeError:
                    return tuple(conv)
            return tuple(conv) if isinstance(v, tuple) else list(conv)
        if isinstance(v, dict):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
            return {k: self.to_arg(e, _depth + 1) for k, e in v.items()}
        if t is slice:
            return slice(self._slice_bound(v.start), self._slice_bound(v.stop), self._slice_bound(v.step))
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType)) and T.is_torch_function(v):
            return v
        if t.__name__ == "tensortype" and t.__module__ == "torch":
            # A legacy typed-tensor class (`t.type(torch.LongTensor)`): operators also take its
            # name, which the graph can hold.
            return f"{v.__module__}.{v.__name__}"
        if is_numeric_array(v):
            return self._array_constant(v)
        if isinstance(v, torch.nn.Module):
            raise Unsupported(f"a module ({type(v).__name__}) passed to a tensor operator")
        if isinstance(v, (float, int, bool, str)):
            return v
        if isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
            name = getattr(v, "__qualname__", None) or getattr(getattr(v, "func", None), "__qualname__", t.__name__)
            raise Unsupported(f"passes the Python function `{name}` to a native tensor operator, which would call "
                              "it where the monitor cannot follow (its reads and effects unseen)")
        raise Unsupported(f"cannot pass a {t.__name__} to a tensor operator")

    def _array_constant(self, arr: Any, aliasing: bool = False) -> Any:
        """A numpy array passed to a tensor operator becomes a tensor the graph holds.

        An array from outside is guarded by its contents (``ArrayGuard``); one converted by an
        ``aliasing`` operator (``from_numpy`` and ``as_tensor`` share its memory) stays
        unsupported, since the program could change it through the tensor. The array must keep
        its values to the end of the run (:meth:`check_array_constants`): a later change,
        through numpy or a tensor sharing its memory, would make the constant stale."""
        node = self.node(arr)
        if node is None:
            raise Unsupported("a numpy array of unknown origin passed to a tensor operator")
        if node.source is not None and aliasing:
            raise Unsupported("makes a tensor that shares memory with a numpy array from outside the call")
        self.run.array_constants.append((arr, array_snapshot(arr)))
        return self.run.graph.constant(torch.from_numpy(arr.copy()))

    def check_array_constants(self) -> None:
        for arr, snap in self.run.array_constants:
            if not array_same(arr, snap):
                raise Unsupported("a numpy array passed to a tensor operator changed later in the call")

    def record_op(self, kind: str, target: Any, args: list, kwargs: dict, output: Any, inputs_have_tensor: bool,
                  name: str, versions: list | None = None) -> None:
        """Post-execution of a torch call: an fx node, a static value, or dynamic.

        ``versions`` are (tensor, ``_version``) of the tensor inputs before the call: a
        version that moved means the call changed that tensor in place (``+=``,
        ``inplace=True``, ``torch.relu_``, ``out=``, ``copy_``...), whatever its name says.
        """
        if name in T.DATA_DEPENDENT and target is not torch.get_rng_state:   # (see Calls.decide_call)
            self.go_dynamic(f"`{name}` reads tensor values")
        if self.run.scalar_nodes and not shape_safe(name):
            # (an array read from tensor values passed to an operator is data, like a tensor: the
            # output's shape may follow the array's, so the output counts as value-shaped below)
            # (an int followed as a LiftedInt may be a size: fine where the run follows changing sizes,
            # the output's shape is then followed below; else its value is assumed, `zeros(int(t.item()))`)
            numbers = [v for v in self.tracked_in((args, kwargs), self.follows_sizes())
                       if not isinstance(v, NUMPY_VALUES[0])]
            if numbers:
                self.scalar_escape(f"passes to operator `{name}` (its output shape may depend on it)", numbers)
        value_shaped = any(self.is_value_shaped(t) for t in T.tensors_in(args, kwargs)) \
            or (bool(self.run.scalar_nodes) and self.holds_numpy((args, kwargs), arrays_only=True))
        fixed_lengths = False
        if T.shape_depends_on_values(name, args, kwargs):
            if name in ("_pack_padded_sequence", "_pad_packed_sequence"):
                # The sizes come from the values of `lengths` / `batch_sizes`: fine when those are
                # constants of the record (a list the program built, lengths assumed by tolist()).
                fixed_lengths = len(args) > 1 and (self.values_fixed(args[1]) or (
                    # lengths computed from inputs: their values are assumed (checked after the graph)
                    self.can_assume_read(args[1], "list") and self.assume_tensor_read(args[1], "list", args[1].tolist())))
                if not fixed_lengths:
                    self.go_dynamic(f"`{name}` returns a tensor whose shape depends on tensor values")
            else:
                value_shaped = True
        changed = [t for t, v in (versions or ()) if version_counter(t) != v]
        changed += [t for t in T.silently_written(target, args, kwargs) if not any(t is c for c in changed)]
        if changed or T.contains_tensor(output):
            if target in _ARRAY_CONVERSIONS and args and is_numeric_array(args[0]) and self.numpy_node(args[0]) is None:
                # the array is a constant tensor in the graph
                const = self._array_constant(args[0], aliasing=target is not torch.tensor)
                kind, target = "function", array_tensor
                fx_args = (const, *(self.to_arg(a) for a in args[1:]))
            else:
                fx_args = tuple(self.to_arg(a) for a in args)
            fx_kwargs = {k: self.to_arg(v) for k, v in kwargs.items()}
            n = self.run.graph.call(kind, target, fx_args, fx_kwargs)
            if T.contains_tensor(output):
                self._bind_output(n, output)
                if fixed_lengths and name == "_pack_padded_sequence" and isinstance(output, tuple):
                    self.run.graph.node_of(output[1]).meta["magpy_fixed"] = True   # batch_sizes: from lengths alone
                if value_shaped:
                    self._mark_value_shaped(output)
                if self.follows_sizes() and (
                        any(self.shape_is_lifted(t) for t in T.tensors_in(args, kwargs))
                                          or self.holds_scalar(args) or self.holds_scalar(kwargs)):
                    # the output's shape may follow a lifted size; how many tensors it holds is assumed
                    for t in T.tensors_in([output], {}):
                        self.mark_lifted_shape(t)
                    if isinstance(output, (tuple, list)) and not _count_follows_rank(name, args, kwargs) \
                            and not _count_fixed_by_schema(name, output):
                        count = self.run.graph.call("function", len, (n,), {})
                        self.assume("scalar", count, len(output))
                        self.run.loop_watcher.count_assumed(output, count)   # (its uses are watched: magpy.dynamic.loops)
            for t in changed:
                self.tensor_mutated(t, n if t is output else None)
            return
        if name in T.META_METHODS or getattr(target, "__name__", "") in T.META_METHODS:
            if name in ("storage_offset", "is_set_to"):
                self.read_storage_layout(kind, target, name, args, kwargs, output)
                return
            if value_shaped and name not in _VALUE_FREE_META and not (
                    name in ("dim", "ndimension") or (self.run.value_sizes_followed and T.tensors_in(args, kwargs))):
                self.go_dynamic(f"`{name}` reads the shape of a tensor whose shape depends on tensor values")
            if (self.run.lifted_shape or self.run.value_sizes_followed) and name not in _VALUE_FREE_META and name not in ("dim", "ndimension") \
                    and any(self.shape_is_lifted(t) for t in T.tensors_in(args, kwargs)):
                # metadata that follows a lifted shape (strides, contiguity, a size read otherwise than
                # magpy.monitor.scalars lifts it): the value read is assumed
                node = self.run.graph.call(kind, target, tuple(self.to_arg(a) for a in args),
                                       {k: self.to_arg(v) for k, v in kwargs.items()})
                self.assume("scalar", node, output)
            return
        if target in T.GRAD_MODE_OPS or name in STATE_SETTER_NAMES:
            # Grad mode and autocast switches stay in the graph, in program order.
            fx_args = tuple(self.to_arg(a) for a in args)
            self.run.graph.call(kind, target, fx_args, {k: self.to_arg(v) for k, v in kwargs.items()})
            self.run.graph_mutates = True
            return
        if inputs_have_tensor:
            self.go_dynamic(f"`{name}` reads tensor values (returns {type(output).__name__})")
        if self.run.scalar_nodes and (self.holds_scalar(args) or self.holds_scalar(kwargs)):
            # a value computed from numbers the graph follows (torch.broadcast_shapes of lifted
            # sizes) is used by Python as it is: those numbers are assumed
            self.scalar_escape(f"passes to `{name}`", args, kwargs)
        if output is None and kind == "method":
            return
        if output is None and is_state_setter_name(name) and name not in HARMLESS_NAMES:
            # set_default_dtype, use_deterministic_algorithms, set_num_threads...: the record
            # would not replay the change.
            self.go_dynamic(f"`torch.{name}` changes global torch state")
        if kind == "function" and output is not None and is_state_getter_name(name) and not kwargs \
                and all(is_immutable(a) for a in args) and is_immutable(output):
            # torch.is_anomaly_enabled(), torch.backends' flags: state that no argument shows.
            # (With an object as argument it is a question about that object: `torch.is_tensor(xs)`.)
            self.state_read(target, name, args, output)
        # A torch utility with no tensor in or out (torch.Size, torch.device...): a static value.

    def values_fixed(self, t: Any) -> bool:
        """Are ``t``'s values constants of the record: computed by the graph from literals alone
        (no graph input, no random operator, no unrolled loop's index or trip count upstream, no
        tensor upstream whose memory an operator changed in place: ``k[...] = x.argmax()`` keeps
        ``k``'s node), or marked so (``magpy_fixed``)?"""
        if not isinstance(t, torch.Tensor):
            return False
        start = self.run.graph.node_of(t)
        if start is None:
            return False
        seen, todo = set(), [start]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if len(seen) > 256 or n.op == "placeholder" or n.meta.get("storage") in self.run.mutated_storages:
                return False
            if n.meta.get("magpy_fixed"):
                continue
            if n.target is loop_index or n.target is range_len:
                return False
            name = getattr(n.target, "__name__", n.target) if n.op != "get_attr" else ""
            if isinstance(name, str) and any(r in name for r in _RANDOM_OPS):
                return False
            todo.extend(n.all_input_nodes)
        return True

    def _bind_output(self, n, output) -> None:
        """Bind each tensor of ``output`` (a tensor or nested tuples/lists) to ``n`` or its items."""
        if isinstance(output, torch.Tensor):
            self.run.graph.bind(output, n)
            self.new_outputs([output])
            return
        if isinstance(output, (tuple, list)):
            for i, e in enumerate(output):
                if isinstance(e, torch.Tensor):
                    self.run.graph.bind(e, self.run.graph.getitem(n, i))
                elif isinstance(e, (tuple, list)) and T.contains_tensor(e):
                    self._bind_output(self.run.graph.getitem(n, i), e)
                elif e is not None and is_immutable(e):
                    # a number (or text) the operator computed beside its tensors (a scripted
                    # function returning `(y, int(count))`): the record holds for that value
                    self.assume("scalar", self.run.graph.getitem(n, i), e)
                elif e is not None:
                    raise Unsupported(f"operator returned a {type(e).__name__} beside its tensors")
            self.new_outputs([output, *output])   # torch.return_types results are new objects too
            return
        raise Unsupported(f"operator returned a {type(output).__name__} holding tensors")

    def tensor_mutated(self, t: torch.Tensor, n) -> None:
        """``t`` was changed in place by graph node ``n`` (its result when ``n`` returns ``t``)."""
        self.run.graph_mutates = True
        self.run.inplace_changes += 1
        for loop in self.run.loop_watcher.active_loops:
            loop.fail(f"changes a tensor in place inside the loop ({self.where()})")
        ptr = storage_key(t)
        self.run.mutated_storages.add(ptr)
        if not self.run.mutates_outside:
            # Through any view: memory shared with a tensor from outside (a graph input) changed.
            self.run.mutates_outside = self.run.graph.in_input_memory(ptr, t)
        if n is not None:
            self.run.graph.bind(t, n)
        node = self.node(t)
        if node is not None:
            self.run.rg.inplace(node)   # a new ShadowVersion: Algorithm 1 lists it among the mock nodes
            if node.source is not None:
                self.run.mutated.add(node.node_id)
