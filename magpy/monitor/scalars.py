"""Tensor values read into Python numbers, kept in the graph (paper §6.1, lifting).

``scale = float(w.abs().max()); y = torch.round(x / scale) * scale`` reads a tensor value
into a Python float, computes with it, and hands it back to operators. Guarding the value
would recompile on every call (it changes whenever the weights do) and breaking would
send the call to eager; the paper's Quantized model does exactly this in every layer.
Instead the read becomes an ``item`` node of the operator graph, and so does every
Python computation on the number (``+``, ``max(s, 1e-8)``, ``math.sqrt``): at run time the
compiled graph reads the value and computes with it exactly as the program did, so the
number reaches the operators it fed as it does in eager.

This holds as long as the number only flows: through locals, containers, arguments of
Python functions, attributes and items, and into tensor operators whose output *shape*
cannot depend on it (pointwise operators, fill values). Anything that reads the number
in a way the graph cannot repeat is dynamic, as the read itself used to be: a branch or
comparison (``if s > 0``), formatting, hashing (a dict key, a set), indexing, a native
function outside the numeric ones below, an operator that may take it as a size
(``F.interpolate(scale_factor=s)``). A number stored outside the call or returned is
handed out by the graph (it is a graph output), so the mock writes the value of the call.

Tracking is by identity: every float a read or a computation produces is a new object,
held by the run, so its ``id`` names it while the run lasts. A result that is an existing
object (``max(s, 1e-8)`` returns one of its arguments, possibly a constant shared by the
code) is replaced on the value stack by a fresh copy (:func:`magpy.capture.replace_top`),
so two meanings never share one identity. Integers cannot be tracked this way (small
ints are shared by the interpreter), so an ``int`` read stays dynamic.

Numpy values read from tensors (``t.numpy()``, ``np.asarray(t)``) are followed the same way
(:meth:`ScalarFlow.numpy_op`): numpy functions, methods, operators and indexing on them are
graph nodes (marked ``magpy_python``: a backend other than eager compiles the tensor regions
around them), a float drawn from them is a tracked float, and any other use is an assumption on
the value; changing an array in place is dynamic.
"""
from __future__ import annotations

import builtins
import math
import operator
import types
import warnings
from typing import Any

import torch

from .. import capture
from ..annotations.torch_ops import contains_instance
from ..breaks import BreakCompile
from ..lifted import LiftedInt, delift
from ..objmodel import NO_VALUE, SEQUENCE_ITERATORS, is_instance
from ..realtype import callable_attr
from ..redraw import SizedArg, as_argument
from ..refgraph import forget_when_dead
from ..size_exprs import checked_before_the_mock, size_expr
from ..source import ConstPool


def format_text(value: Any, conversion: int, spec: str = "") -> str:
    """What an f-string's ``{value!conversion:spec}`` makes of ``value`` (a text node of the graph)."""
    if conversion == 1:
        value = str(value)
    elif conversion == 2:
        value = repr(value)
    elif conversion == 3:
        value = ascii(value)
    return format(value, spec)


def join_text(*parts: str) -> str:
    """An f-string's pieces joined (``BUILD_STRING``), a text node of the graph."""
    return "".join(parts)


def percent_text(template: str, values: Any) -> str:
    """``template % values`` (a text node of the graph)."""
    return template % values


def call_text(template: str, name: str, *args: Any, **kwargs: Any) -> str:
    """``template.format(...)``, ``str(v)``, ``repr(v)``... as a text node: ``name`` is the method
    of ``str`` (``"format"``), or ``"str"``/``"repr"``/``"ascii"``/``"format_builtin"`` for the builtins."""
    if name == "format":
        return template.format(*args, **kwargs)
    if name == "join":
        return template.join(*args)
    if name == "str":
        return str(*args)
    if name == "repr":
        return repr(*args)
    if name == "ascii":
        return ascii(*args)
    return format(*args)


#: Text builtins whose result is a text node when given values read from tensors.
TEXT_BUILTINS = ((builtins.str, "str"), (builtins.repr, "repr"), (builtins.ascii, "ascii"),
                 (builtins.format, "format_builtin"))


#: Native functions of numbers that the graph repeats as they are (numbers in, a number out).
NUMERIC_FUNCTIONS = frozenset({
    builtins.max, builtins.min, builtins.abs, builtins.float, builtins.int, builtins.pow, builtins.round, math.ceil,
    math.floor,
    math.trunc,
    math.sqrt, math.exp, math.log, math.log2, math.log10, math.log1p, math.expm1, math.pow, math.fabs,
    math.sin, math.cos, math.tan, math.tanh, math.sinh, math.cosh, math.atan, math.atan2, math.asin,
    math.acos, math.erf, math.erfc, math.hypot, math.copysign, math.fmod,
})

#: Python operators on numbers by the bytecode's symbol (augmented forms included: floats are immutable).
NUMBER_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
                    "//": operator.floordiv, "%": operator.mod, "**": operator.pow}

#: Operators whose output shape comes from tensors or explicit sizes, never from a number
#: passed as a value, beyond the pointwise ones (``torch.Tag.pointwise``).
_VALUE_ARGUMENT_OPS = frozenset({
    "fill_", "masked_fill", "masked_fill_", "full", "full_like", "new_full", "tensor", "scalar_tensor",
    "as_tensor", "new_tensor", "normal_", "uniform_", "floor_divide", "floor_divide_", "index_fill",
    "index_fill_", "addcmul", "addcdiv", "addcmul_", "addcdiv_", "clamp", "clip", "clamp_", "clip_", "roll",
})

_NUMBERS = (int, float, bool, LiftedInt)
#: What Python arithmetic on followed numbers may raise on other values (``1 / n``, ``math.log(s)``).
_NUMBER_ERRORS = (ArithmeticError, ValueError, TypeError, IndexError)
#: Integer dtypes whose ``item()`` is followed as a LiftedInt (not bool: a truth is assumed).
_INT_DTYPES = frozenset({torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8})
_TRACKED = (float, LiftedInt, str)   # (text: a str made from values read from tensors, ScalarFlow.text_op)
#: Values that never carry a followed number (ScalarFlow.blind_to_numbers; a LiftedInt is not an int here).
_PLAIN_ATOMS = frozenset({int, bool, type(None), bytes, complex, type(Ellipsis), type(NotImplemented),
                          torch.dtype, torch.device, torch.layout, torch.memory_format,
                          type(capture.NULL)})   # (the stack's NULL below a called function)
#: Iterators whose exhaustion follows a length only (ScalarFlow.blind_to_exhaustion).
_SEQUENCE_ITERATORS = SEQUENCE_ITERATORS | {type(it) for it in (iter({}), iter({}.values()), iter({}.items()),
                                                                   iter(set()))}
try:
    import numpy as _np

    #: numpy values read from tensors (``t.numpy()`` and what numpy computes from it) are followed too.
    NUMPY_VALUES: tuple = (_np.ndarray, _np.generic)
    _PLAIN_OBJECTS: tuple = (_np.dtype,)   # (a dtype holds no number: `np.issubdtype`'s `issubclass` on one)
except ImportError:   # pragma: no cover
    _np = None
    NUMPY_VALUES = ()
    _PLAIN_OBJECTS = ()
_pointwise_cache: dict[str, bool] = {}


def shape_safe(name: str) -> bool:
    """Can a number passed to operator ``name`` change only its values, never its shape?"""
    hit = _pointwise_cache.get(name)
    if hit is None:
        base = name.strip("_") if name.startswith("__") else name
        hit = name in _VALUE_ARGUMENT_OPS or base in _OPERATOR_NAMES or _aten_pointwise(base) \
            or (base.endswith("_") and _aten_pointwise(base[:-1]))
        _pointwise_cache[name] = hit
    return hit


# The operator module's names the monitor records tensor operators under (``operator.truediv``),
# their reflected dunders and torch's spellings of the same arithmetic.
_OPERATOR_NAMES = frozenset({
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs",
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
    "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rdiv", "div", "true_divide",
    "lt", "le", "gt", "ge", "eq", "ne",
})


def _aten_pointwise(name: str) -> bool:
    packet = getattr(torch.ops.aten, name, None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    try:
        return any(torch.Tag.pointwise in getattr(packet, o).tags for o in packet.overloads())
    except Exception:   # noqa: BLE001 - an odd packet: not known to be pointwise
        return False


def make_size(*sizes: int) -> torch.Size:
    """A ``torch.Size`` of sizes the graph computes (text of a lifted shape)."""
    return torch.Size(sizes)


def replace_top(fs: Any, stack: list, value: Any, below: int = 0) -> None:
    """The program goes on with ``value`` on top of the stack, or ``below`` slots under it (and so
    do the monitor's handlers of the instruction about to run, which were handed ``stack`` as read
    before)."""
    capture.replace_top(fs.frame, value, below=below)
    stack[-1 - below] = value


class _NotText(Exception):
    """A value text cannot be formatted from in the graph (an object of the call, a tensor subclass)."""


class ScalarFlow:
    """The tracked numbers of a monitor run: a rule object of the run, whose tables
    (``scalar_nodes``, ``assumptions``, ``lifted_shape``) are the run's state."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("from_outside", "full_read", "go_dynamic", "inside_except", "new_outputs", "node",
            "pend", "post_new", "read_type", "to_arg", "truth_taken", "where")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)


    def init_scalars(self) -> None:
        self.run.scalar_nodes = {}       # id -> (the float, held alive so the id stays its name; fx node)
        self.run._scalar_inputs = ()     # the arguments of the numeric call in flight
        self.run.assumptions = []        # (kind, fx node, value the run saw): checked after the graph runs
        self.run.assumed_at = []         # file:line of each
        self.run.lifted_shape = set()    # ids of tensors whose shape derives from a lifted input dimension
        # A size of a value-shaped tensor (a boolean mask's result) was followed as a graph node:
        # from then on any tensor computed in the call may have a shape that follows it.
        self.run.value_sizes_followed = False

    # -- assumptions ---------------------------------------------------------------------------------------
    def assume(self, kind: str, node: Any, expected: Any) -> None:
        """The rest of the run depends on what ``node`` computes: the record holds only when the
        graph computes the same again. ``kind``: ``"truth"`` (``bool(value)``), ``"item"``
        (``tensor.item()``), ``"list"`` (``tensor.tolist()``), ``"scalar"`` (a Python number)."""
        if self.run.loop_watcher.holds_by_construction(node):
            return   # a number computed from loop indexes alone: it holds while the loop is unrolled
        if _np is not None and isinstance(expected, _np.ndarray):
            expected = expected.copy()   # (the program may change its array after the run)
        elif kind == "scalar" and any(k == kind and n is node for k, n, _ in self.run.assumptions[-8:]):
            return   # (the same value read again: `counts.get(key)` then `counts[key] = ...`)
        where = self.where()
        if kind == "scalar" and self.run.in_call_event and where in self.run.switches.split_escapes:
            # earlier records assumed other values here: split the call at this native instead
            raise BreakCompile("passes a number read from a tensor, which changes between calls, to a native")
        self.run.assumptions.append((kind, node, expected))
        self.run.assumed_at.append(where)
        if self.run.loop_watcher.active_loops:
            self.run.loop_watcher.on_assume(kind, node, expected)
        if kind == "truth":
            self.run.branch_watcher.on_assume("truth", node, expected)   # (a conditional jump on it: magpy.dynamic.branches)

    def assumed_beyond_sizes(self) -> bool:
        """Has the run assumed something the guard cannot check before the mock runs (a value the
        graph computes, checked after it; see codegen.speculation.assumption_checks)? Then what
        the mock does before the graph is speculative: a failed check makes the call a miss."""
        return not all(checked_before_the_mock(kind, node) for kind, node, _ in self.run.assumptions)

    def describe_assumptions(self) -> list[str]:
        """One line per assumption: what the graph recomputes, the value the run saw, where."""
        what = {"truth": "the truth of", "item": "the value of", "list": "the values of", "scalar": "the number",
                "atleast": "the trip count"}
        def name(node):
            if getattr(node, "target", None) == "clone" and node.args:
                node = node.args[0]   # (the copy assume_tensor_read takes)
            return getattr(node, "name", node)

        return [f"{'the text' if isinstance(expected, str) else what[kind]} `{name(node)}` is "
                f"{'at least ' if kind == 'atleast' else ''}{expected!r} ({where})"
                for (kind, node, expected), where in zip(self.run.assumptions, self.run.assumed_at)]

    def can_assume_read(self, t: Any, kind: str) -> bool:
        """Can a read of ``t``'s value of this kind be an assumption: a plain tensor the graph
        computes or reads from outside, one element (up to 64 for ``tolist``)?"""
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or (kind != "list" and t.numel() != 1) or t.numel() > 64:
            return False
        if self.run.graph.node_of(t) is not None:
            return True
        node = self.node(t)
        return node is not None and node.source is not None

    def assume_tensor_read(self, t: torch.Tensor, kind: str, value: Any) -> bool:
        """The program reads ``t``'s value into Python (``bool(t)``, ``t.item()``, ``t.tolist()``)
        and saw ``value``: assume it, if the graph can compute ``t``. False if it cannot."""
        if not self.can_assume_read(t, kind):
            return False
        # (a copy: the graph may change t in place later, and the check reads it after the graph)
        self.assume(kind, self.run.graph.call("method", "clone", (self.to_arg(t),), {}), value)
        return True

    def scalar_node(self, v: Any) -> Any:
        """The graph node that computes ``v``, if ``v`` is a tracked number; else None."""
        if type(v) in _TRACKED or is_instance(v, NUMPY_VALUES):
            hit = self.run.scalar_nodes.get(id(v))
            if hit is not None and hit[0] is v:
                return hit[1]
        return None

    def numpy_node(self, v: Any) -> Any:
        """The graph node that computes ``v``, if ``v`` is a numpy value read from tensors."""
        return self.scalar_node(v) if self.run.scalar_nodes and is_instance(v, NUMPY_VALUES) else None

    def holds_numpy(self, v: Any, arrays_only: bool = False) -> bool:
        """Is a numpy value read from tensors ``v`` or inside it (``arrays_only``: an ndarray)?"""
        kinds = (_np.ndarray,) if arrays_only else NUMPY_VALUES
        return bool(self.run.scalar_nodes) and any(isinstance(e, kinds) for e in self._tracked_in(v))

    def holds_scalar(self, v: Any, floats: bool = False) -> bool:
        """Is a tracked number ``v`` or inside it (lists, tuples, dicts, slices, a bound method's
        self)? ``floats``: only numbers read from tensor values count, not lifted sizes."""
        return bool(self.run.scalar_nodes) and next(self._tracked_in(v, floats), None) is not None

    def track_scalar(self, fs: Any, stack: list, node: Any, below: int = 0) -> None:
        """The result on top of ``fs``'s stack (or ``below`` slots under it) is what ``node`` computes."""
        value = stack[-1 - below]
        held, self.run._scalar_inputs = self.run._scalar_inputs, ()
        if type(value) in (int, bool) and type(value) is not bool:
            # a plain int has no identity of its own: the program goes on with a LiftedInt
            value = LiftedInt(value)
            replace_top(fs, stack, value, below)
        elif type(value) is not float and type(value) is not LiftedInt:
            self.go_dynamic(f"reads a tensor value into a Python {type(value).__name__}")
        elif id(value) in self.run.scalar_nodes or any(value is a for a in held):
            # An existing object (an argument of max/min, a constant of the code) would now mean
            # something else too: the program goes on with a fresh copy of it.
            value = value * 1.0 if type(value) is float else LiftedInt(value)
            replace_top(fs, stack, value, below)
        self.run.scalar_nodes[id(value)] = (value, node)

    def draw_arguments(self, args: Any, kwargs: dict) -> tuple[tuple, dict]:
        """A random draw's arguments as the mock passes them (magpy.redraw): a size that changes
        between calls (``random.randrange(x.shape[0])``, lifted) is a :class:`SizedArg` the mock
        computes from the call's inputs; on any other followed number the draw depends exactly
        (an assumption, as a lifted ``self.p``)."""
        def one(a: Any) -> Any:
            node = self.scalar_node(a) if type(a) is LiftedInt else None
            if node is not None and size_expr(node, ConstPool()) is not None:
                return SizedArg(node, int(a))
            counted = self.run.loop_watcher.take_range(a) if type(a) is range else None   # (`range(x.shape[0])`)
            if counted is not None:
                if all(size_expr(n, ConstPool()) is not None for n in counted):
                    return SizedArg(counted[0], a, counted[1:])
                self.run.loop_watcher.range_used([a])
            if self.holds_scalar(a):
                self.scalar_escape("passes to a random draw", a)
            return as_argument(delift(a))
        return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}

    def scalar_escape(self, what: str, *values: Any) -> None:
        """Tracked numbers in ``values`` are read in a way the graph cannot repeat (``what``
        says how): from here on the run depends on their exact values, which become assumptions."""
        for v in self._tracked_in(values):
            self.assume("scalar", self.scalar_node(v), v)

    def tracked_in(self, v: Any, floats: bool = False):
        """The tracked numbers in ``v`` (code generation reads them through the run's Trace)."""
        return self._tracked_in(v, floats)

    def _tracked_in(self, v: Any, floats: bool = False, depth: int = 0):
        """The tracked numbers in ``v`` (see :meth:`holds_scalar`)."""
        t = type(v)
        if t in _TRACKED or issubclass(t, NUMPY_VALUES):
            if (t is not LiftedInt or not floats) and self.scalar_node(v) is not None:
                yield v
            return
        if depth > 6:
            return
        if issubclass(t, (list, tuple)):
            for e in v:
                yield from self._tracked_in(e, floats, depth + 1)
        elif issubclass(t, dict):
            for k, e in v.items():
                yield from self._tracked_in(k, floats, depth + 1)
                yield from self._tracked_in(e, floats, depth + 1)
        elif t is slice:
            yield from self._tracked_in((v.start, v.stop, v.step), floats, depth + 1)
        elif callable(v):
            owner = callable_attr(v, "__self__")
            if type(owner) in _TRACKED or is_instance(owner, NUMPY_VALUES):
                yield from self._tracked_in(owner, floats, depth + 1)

    def blind_to_numbers(self, values: list) -> bool:
        """Could an operation on ``values`` (the operands of one that raised, with some stack below
        them) not have raised because of a number the run follows (a lifted size or value, a number
        read from a tensor)? True when every value is plain data that holds none: text, constants,
        functions, classes, modules, and lists/tuples/dicts/sets of them (a KeyError of
        ``Mapping.get`` with a name). Anything else (a tensor, an object, an iterator, a range,
        what holds a tracked number) may carry one: False."""
        return all(self._plain_data(v, 0) for v in values)

    def blind_key_lookup(self, container: Any, key: Any) -> bool:
        """Could ``container[key]`` on a plain dict not have raised because of a number the run
        follows? Its KeyError follows the key and the dict's keys only, never its values (the
        memo of ``copy.deepcopy``, keyed by ``id()``, holds the copied tensors): True when the
        key and every key are plain data."""
        if type(container) is not dict or len(container) > 4096 or not self._plain_data(key, 0):
            return False
        return all(self._plain_data(k, 0) for k in container)

    def blind_to_exhaustion(self, values: list) -> bool:
        """Could a ``StopIteration`` of an operation on ``values`` not follow a number the run
        follows? True when every value is plain data (``blind_to_numbers``) or an iterator over a
        list, tuple, dict or set (``next(iter(losses))``): it is exhausted by its length, never by
        what its elements hold, and a length the program built follows control flow the record
        guards already. (Not a range: its bounds may be lifted numbers.)"""
        return all(type(v) in _SEQUENCE_ITERATORS or self._plain_data(v, 0) for v in values)

    def _plain_data(self, v: Any, depth: int) -> bool:
        t = type(v)
        if t in _PLAIN_ATOMS or is_instance(v, _PLAIN_OBJECTS):
            return True
        if t in _TRACKED or is_instance(v, NUMPY_VALUES):
            return self.scalar_node(v) is None and t is not LiftedInt
        if is_instance(v, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)):
            # (a builtin bound method, `vals.index`, carries what its object holds)
            owner = getattr(v, "__self__", None) if isinstance(v, types.BuiltinFunctionType) else None
            return owner is None or isinstance(owner, (types.ModuleType, type)) or self._plain_data(owner, depth + 1)
        if depth >= 3 or t not in (list, tuple, dict, set, frozenset) or len(v) > 64:
            return False
        items = [x for kv in v.items() for x in kv] if t is dict else v
        return all(self._plain_data(x, depth + 1) for x in items)

    def scalar_compare(self, fs: Any, fn: Any, a: Any, b: Any) -> None:
        """``a < b`` (any comparison) with a tracked number: the graph computes the comparison
        and its outcome is assumed (the number may change as long as the outcome does not)."""
        if type(a) in _NUMBERS and type(b) in _NUMBERS:
            self.pend(fs, self.post_assumed, ("function", fn, (self.scalar_arg(a), self.scalar_arg(b))))
        else:
            self.scalar_escape("compares", a, b)

    def assume_key_order(self, fn: Any, keys: list, reverse: bool = False) -> None:
        """``sorted``/``list.sort``/``min``/``max`` compared ``keys`` (what a Python key function
        returned, in the order the elements came) in C. Where numbers read from tensors are among
        them, the result depends on their order, not their values: the graph compares the keys
        the result's order rests on, and those outcomes are assumed. For a sort, each pair
        adjacent in the result (``<=`` where the earlier element came first, ``<`` where it did
        not: the sort is stable); for ``min``/``max``, the chosen key against every other (the
        first extreme one wins). Keys that are not all numbers (tuples...), or a NaN among them,
        are assumed by value."""
        if not any(True for _ in self._tracked_in(keys)):
            return
        if not all(type(k) in _NUMBERS for k in keys) or any(k != k for k in keys):
            self.scalar_escape("compares as keys", *keys)
            return
        n = len(keys)
        pairs = []   # (i, j, strict): key i comes before key j
        if fn in (min, max):
            extreme = keys.index(min(keys) if fn is min else max(keys))
            for j in range(n):
                if j != extreme:
                    lo, hi = (extreme, j) if fn is min else (j, extreme)
                    pairs.append((lo, hi, j < extreme))
        else:
            order = sorted(range(n), key=keys.__getitem__, reverse=reverse)
            for a, b in zip(order, order[1:]):
                lo, hi = (b, a) if reverse else (a, b)
                pairs.append((lo, hi, a > b))
        for i, j, strict in pairs:
            ki, kj = self.scalar_arg(keys[i]), self.scalar_arg(keys[j])
            if isinstance(ki, torch.fx.Node) or isinstance(kj, torch.fx.Node):
                compare = operator.lt if strict else operator.le
                self.assume("truth", self.run.graph.call("function", compare, (ki, kj), {}), True)

    def post_assumed(self, fs, stack, data):
        kind, target, args = data
        self.assume("truth", self.run.graph.call(kind, target, args, {}), self.truth_taken(fs, stack, bool(stack[-1])))

    # -- the producers -----------------------------------------------------------------------------------
    def start_scalar_read(self, fs: Any, t: torch.Tensor, ints: bool = False) -> bool:
        """``t.item()`` / ``float(t)`` runs next: keep it in the graph if the result is a float
        of a tensor the graph computes, or (``ints``: ``t.item()``) an int of an integer tensor
        (``mask.sum().item()``), which the program goes on with as a LiftedInt. Returns False
        when it is not (the caller decides)."""
        if type(t) is not torch.Tensor or t.numel() != 1 \
                or not (t.is_floating_point() or (ints and t.dtype in _INT_DTYPES)):
            return False
        node = self.to_arg(t)
        self.pend(fs, self._post_scalar, ("method", "item", (node,)), opaque=True)
        return True

    def scalar_binary(self, fs: Any, sym: str, a: Any, b: Any) -> bool:
        """``a <sym> b`` with a tracked number on either side; False if it is not arithmetic on numbers
        (or text: ``"%.3f" % s``, ``prefix + text``)."""
        if sym in ("%", "%=") and isinstance(a, str):
            return self.text_op(fs, percent_text, (a, b))
        if sym in ("+", "+=") and isinstance(a, str) and isinstance(b, str):
            return self.text_op(fs, join_text, (a, b))
        fn = NUMBER_OPERATORS.get(sym.rstrip("=") if sym.endswith("=") and sym not in ("==", "!=") else sym)
        if fn is None or type(a) not in _NUMBERS or type(b) not in _NUMBERS:
            return False
        self.pend(fs, self._post_scalar, ("function", fn, (self.scalar_arg(a), self.scalar_arg(b))))
        return True

    def scalar_unary(self, fs: Any, opname: str, v: Any) -> None:
        if opname == "UNARY_NEGATIVE":
            self.pend(fs, self._post_scalar, ("function", operator.neg, (self.scalar_arg(v),)))
        elif opname != "UNARY_POSITIVE":   # (+x of a float is x itself)
            self.scalar_escape(f"applies {opname} to", v)

    def scalar_call(self, fs: Any, fn: Any, args: list, kwargs: dict) -> bool:
        """A call with a tracked number among its arguments. True: handled (a graph node, or
        the call only passes the number on); False: not a number function, the caller goes on."""
        if fn is builtins.float and len(args) == 1 and not kwargs and type(args[0]) is float:
            return True   # float(x) is x
        if (fn in NUMERIC_FUNCTIONS or fn in (builtins.sum, builtins.round, builtins.len)) and not kwargs \
                and self.holds_numpy(args):
            self.numpy_op(fs, "function", fn, tuple(args), {})   # float(np.percentile(a, 95)), abs(s), max(a)
            return True
        if fn is builtins.int and len(args) == 1 and not kwargs and type(args[0]) is LiftedInt:
            self.pend(fs, self._post_rewrap, args[0])   # int(n) is n, as a plain int
            return True
        if fn in NUMERIC_FUNCTIONS and not kwargs:
            seq = len(args) == 1 and type(args[0]) in (list, tuple) and fn in (builtins.max, builtins.min)
            flat = list(args[0]) if seq else list(args)
            if all(type(a) in _NUMBERS for a in flat):
                mapped = [self.scalar_arg(a) for a in flat]
                self.run._scalar_inputs = tuple(flat)
                self.pend(fs, self._post_scalar, ("function", fn, (type(args[0])(mapped),) if seq else tuple(mapped)),
                           opaque=True)
                return True
        return False

    def _post_rewrap(self, fs, stack, lifted):
        new = LiftedInt(stack[-1])
        replace_top(fs, stack, new)
        self.run.scalar_nodes[id(new)] = (new, self.scalar_node(lifted))

    # -- lifted shapes ---------------------------------------------------------------------------------

    def follows_changing_numbers(self) -> bool:
        """Does the graph take or compute numbers that change between the calls the record serves
        (lifted sizes and values, draws, sizes of value-shaped tensors)? Then the backend compiles
        it for changing sizes, and the run's LiftedInts left outside go back to plain ints."""
        return bool(self.run.lifted_dims or self.run.lifted_value_nodes or self.run.draws or self.run.value_sizes_followed)

    def follows_sizes(self) -> bool:
        """Does the run follow sizes that change between the calls its record serves (lifted
        shapes, ints lifted from outside, sizes of value-shaped tensors)? Then an int it follows
        may be passed to an operator as a size, and the output's shape is followed in turn."""
        return bool(self.run.lifted_shape or self.run.value_sizes_followed or self.run.lifted_value_nodes)

    def made_lifted_ints(self) -> bool:
        """Did the run hand the program LiftedInts (numbers it followed: read from tensors, sizes)?
        Those it left outside go back to plain ints when the run ends, whatever the record."""
        return self.follows_changing_numbers() or any(type(v) is LiftedInt for v, _ in self.run.scalar_nodes.values())

    def shape_is_lifted(self, t: Any) -> bool:
        """Can ``t``'s shape differ between calls this record serves? In a run with lifted inputs,
        every tensor's can, but a tensor from outside that its guard pins (a parameter, an argument
        whose sizes are all guarded): a tensor computed in the call may derive from a lifted size
        by any path, and one that does not is only read through a graph node it need not have."""
        if not self.run.lifted_shape and not self.run.value_sizes_followed:
            return False
        if id(t) in self.run.lifted_shape:
            return True
        node = self.node(t)
        return node is None or node.source is None

    def mark_lifted_shape(self, t: torch.Tensor) -> None:
        if id(t) not in self.run.lifted_shape:
            self.run.lifted_shape.add(id(t))
            forget_when_dead(t, self.run, "lifted_shape", id(t))

    def start_size_read(self, fs: Any, t: torch.Tensor, what: str, args: tuple = ()) -> None:
        """``t.size(d)``, ``t.size()``, ``t.shape``, ``len(t)``, ``t.numel()`` of a tensor whose
        shape is lifted: the numbers read are graph nodes (``t.size(d)``), followed like any
        number read from a tensor."""
        self.pend(fs, self._post_size_read, (t, what, args), opaque=True)

    def lift_value(self, fs: Any, stack: list, source: Any, below: int = 0) -> bool:
        """An ``int`` or ``float`` just read from outside through ``source`` (an argument, an
        attribute, an item, a global) that changed between records (``self.step``, a ``scale=``
        argument): instead of a guard on its value it is a graph input (the guard checks its
        type), followed as a LiftedInt or a tracked float. False if ``source`` is not lifted or
        the value is no such number. (``below``: the value is that many slots under the top, the
        first of two locals one instruction pushes.)"""
        value = stack[-1 - below]
        if not (type(value) is int or (type(value) is float and self.run.switches.float_inputs_ok and value == value)) \
                or source.describe() not in self.run.lifted_values:
            return False   # (a NaN: guarded as the very object, ValueGuard)
        node = self.run.lifted_value_nodes.get(source)
        if node is None:
            self.read_type(source, value)
            node = self.run.lifted_value_nodes[source] = self.run.graph.scalar_input(value, source)
        seen = self.run.lifted_reads.get(source)
        if seen is not None and seen[0] is value and self.scalar_node(seen[1]) is node:
            # The same object read again: the same followed number (eager's identity: a NaN
            # is found by `in`, `list.index` and as a dict key only as the very object).
            replace_top(fs, stack, seen[1], below)
            return True
        if type(value) is float:
            # The float from outside may be the very object of a code constant (the compiler
            # shares equal constants across a module's code objects: `SCALES = [1.0, ...]` and
            # `math.copysign(1.0, s)`): followed by identity, the constant would read as this
            # input. The program goes on with a copy of its own.
            replace_top(fs, stack, value * 1.0, below)
        self.track_scalar(fs, stack, node, below)
        self.run.lifted_reads[source] = (value, stack[-1 - below])
        return True

    def _post_size_read(self, fs, stack, data):
        t, what, args = data
        node = self.to_arg(t)
        out = stack[-1]
        if what in ("size", "shape") and not args:
            sizes = []
            for d in range(t.dim()):
                v = LiftedInt(out[d])
                self.run.scalar_nodes[id(v)] = (v, self.run.graph.call("method", "size", (node, d), {}))
                sizes.append(v)
            new = torch.Size(sizes)
            replace_top(fs, stack, new)
            self.new_outputs([new])
            return
        if what == "size":
            target = ("method", "size", (node, args[0]))
        elif what == "len":
            target = ("method", "size", (node, 0))
        else:
            target = ("method", "numel", (node,))
        self.track_scalar(fs, stack, self.run.graph.call(*target, {}))

    def scalar_arg(self, v: Any) -> Any:
        node = self.scalar_node(v)
        return v if node is None else node

    # -- numpy values ----------------------------------------------------------------------------------
    def numpy_op(self, fs: Any, kind: str, target: Any, args: tuple, kwargs: dict) -> None:
        """A numpy computation on values read from tensors (``t.numpy()``, ``np.percentile(a, 99)``,
        ``a.argsort()``, ``a > p``): a graph node that runs it, its result followed like a number
        read from a tensor (:meth:`track_value`)."""
        fx_args = tuple(self._numpy_arg(a) for a in args)
        fx_kwargs = {k: self._numpy_arg(v) for k, v in kwargs.items()}
        self.pend(fs, self._post_numpy, (kind, target, fx_args, fx_kwargs), opaque=True)

    def _numpy_arg(self, v: Any) -> Any:
        """An argument of a numpy node: a dtype or scalar type (``astype(np.float32)``) as it is,
        anything else as operators take it (``to_arg``)."""
        if _np is not None and (isinstance(v, _np.dtype) or any(v is k for k in (float, int, bool, complex)) or (
                isinstance(v, type) and issubclass(v, _np.generic))):
            return _np.dtype(v).str   # (a dtype's string, which generated code can spell: '<f4')
        if _np is not None and isinstance(v, _np.generic) and v.dtype.kind in "biufc" and self.scalar_node(v) is None:
            # A numpy scalar keeps its type here: numpy's promotion reads it (a float32 array
            # times np.float64(3.0) is float64, times 3.0 stays float32), where torch's operators
            # (and to_arg) read the Python number. Its value and type are guarded where it was read.
            return self.python_node("function", type(v), (v.item(),), {})
        if type(v) in (list, tuple) and _np is not None and any(isinstance(e, _np.generic) for e in v):
            node = self.node(v)
            if node is not None and node.source is not None:
                self.full_read(v)
            return type(v)(self._numpy_arg(e) for e in v)   # np.array([s, np.float32(1)])
        return self.to_arg(v)

    def python_node(self, kind: str, target: Any, args: tuple, kwargs: dict, reads_modes: bool = True) -> Any:
        """A graph node that runs Python, not a tensor operator (numpy on read values, text): a
        backend other than eager compiles the regions around it (``backends.compile_regions``);
        ``explain()`` lists it with the user's file:line. ``reads_modes``: what it runs may read
        a mode natives read in C (numpy's error state and print options, the warning filters)."""
        changed = self.mode_set_in_call() if reads_modes else None
        if changed is not None:
            # numpy reads its error state (np.errstate, a context variable) and Python its
            # warning filters in C, as the call left them at this point; the graph's node runs
            # under what the call started with
            self.go_dynamic(f"runs `{getattr(target, '__name__', target)}` on values read from tensors while "
                            f"{changed} the call set differs from the call's start: the graph would run it "
                            "without that mode")
        node = self.run.graph.call(kind, target, args, kwargs)
        node.meta["magpy_python"] = True
        node.meta["magpy_where"] = self.where()
        return node

    def mode_set_in_call(self) -> str | None:
        """What process-wide mode natives read in C the call changed and has not put back yet: a
        context variable (numpy's error state under ``np.errstate``, ``decimal.localcontext``)
        or the warning filters (``warnings.catch_warnings``, ``simplefilter``); else None."""
        for var, entry in self.run.contextvars.values():
            if var.get(NO_VALUE) is not entry:
                return f"context variable {var.name!r}"
        filters, entry = self.run.warning_filters
        if warnings.filters is not filters or tuple(filters) != entry:
            return "the warning filters"
        return None

    def _post_numpy(self, fs, stack, data):
        kind, target, args, kwargs = data
        node = self.python_node(kind, target, args, kwargs)
        if self.inside_except(_NUMBER_ERRORS):
            # (`try: np.log(a)` / `except FloatingPointError`, `np.linalg.inv` / `LinAlgError`: a
            # call on which the graph's numpy raises is a miss, as for tensor operations)
            self.run.speculative_ops.append(self.where())
        self.track_value(fs, stack, node)

    def track_value(self, fs: Any, stack: list, node: Any) -> None:
        """The result on top of the stack is what ``node`` computes from tensor values: a numpy
        array or scalar is followed by identity, a float as a tracked number, a tuple of arrays
        element by element; anything else (an int, a list, a bool) is assumed."""
        value = stack[-1]
        if isinstance(value, NUMPY_VALUES):
            self.run.scalar_nodes[id(value)] = (value, node)
        elif type(value) is float:
            self.track_scalar(fs, stack, node)
        elif type(value) is tuple and value and all(isinstance(e, NUMPY_VALUES) for e in value):
            for i, e in enumerate(value):
                self.run.scalar_nodes[id(e)] = (e, self.run.graph.call("function", operator.getitem, (node, i), {}))
        else:
            self.assume("scalar", node, value)
            self.post_new(fs, stack, 1)   # (an object of the call from here on: a dtype, a list)

    # -- text ------------------------------------------------------------------------------------------
    def text_op(self, fs: Any, fn: Any, args: tuple, kwargs: dict | None = None) -> bool:
        """Text made from values read from tensors, or from a tensor (``f"{loss.item():.3f}"``,
        ``"%.2f" % s``, ``str(t)``): a graph node that formats the call's values (run in Python,
        like a numpy node), its result (a new str object) followed by identity. Only with backends that
        serve changing values; False when an argument cannot be a graph argument."""
        if not self.run.switches.redraw_ok:
            return False
        try:
            fx_args = tuple(self._text_arg(a) for a in args)
            fx_kwargs = {k: self._text_arg(v) for k, v in (kwargs or {}).items()}
        except _NotText:
            return False
        self.pend(fs, self._post_text, (fn, fx_args, fx_kwargs, (*args, *(kwargs or {}).values())), opaque=True)
        return True

    def _text_arg(self, v: Any, depth: int = 0) -> Any:
        node = self.scalar_node(v)
        if node is not None:
            return node
        t = type(v)
        if isinstance(v, torch.Tensor):
            # (a subclass's text, or a grad_fn name, could differ from the graph's tensor: only a
            # graph run op by op, the eager backend's, has eager's grad_fn)
            if t is not torch.Tensor or (v.requires_grad and not self.run.switches.eager_graph) or not (
                    self.run.graph.node_of(v) is not None or self.from_outside(v)):
                raise _NotText
            return self.to_arg(v)
        if v is None or t in (str, int, float, bool, bytes):
            return v
        if t is slice:
            return slice(*(self._text_arg(e, depth + 1) for e in (v.start, v.stop, v.step)))
        if t in (tuple, list) and depth < 4:
            return t(self._text_arg(e, depth + 1) for e in v)
        if t is torch.Size:
            # `f"{x.shape}"` with lifted sizes: the Size is rebuilt from the sizes in the graph
            items = tuple(self._text_arg(e, depth + 1) for e in v)
            if all(type(e) is int for e in items):
                return v
            return self.python_node("function", make_size, items, {})
        if t is dict and depth < 4 and all(type(k) is str for k in v):
            return {k: self._text_arg(e, depth + 1) for k, e in v.items()}
        raise _NotText

    def _post_text(self, fs, stack, data):
        fn, args, kwargs, inputs = data
        # Text of tensors, Python numbers and strings reads no context variable or warning filter
        # (numpy values do: numpy's print options are a context variable).
        node = self.python_node("function", fn, args, kwargs, reads_modes=contains_instance(inputs, NUMPY_VALUES))
        value = stack[-1]
        if type(value) is not str or len(value) <= 1:
            # No new object of its own: a str the interpreter shares (single characters, the empty
            # string), or no str at all (a __format__ of a class): its value is assumed.
            self.assume("scalar", node, value)
            if type(value) is not str:
                self.post_new(fs, stack, 1)
            return
        if id(value) in self.run.scalar_nodes or any(value is a for a in inputs):
            # An input handed back (a format that changes nothing this time) or an object that
            # already means something: the program goes on with a fresh copy of the text.
            value = value[:1] + value[1:]
            replace_top(fs, stack, value)
        self.run.scalar_nodes[id(value)] = (value, node)   # (held by the run: its id names it while the run lasts)

    def _post_scalar(self, fs, stack, data):
        kind, target, args = data
        node = self.run.graph.call(kind, target, args, {})
        if self.inside_except(_NUMBER_ERRORS):
            # (`try: s = -math.log(eps)` / `except ValueError`: the graph computes it; a call on
            # which it raises is a miss, and the program runs again, as for tensor operations)
            self.run.speculative_ops.append(self.where())
        self.track_scalar(fs, stack, node)
