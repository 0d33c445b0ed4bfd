"""Guard and mock generation (paper §4.2, Algorithm 1) as Python source compiled once per record.

The guard checks that everything the monitor run read from outside is as it was:
types and values of scalars and strings, container structure, tensor metadata (not
values), identity of modules/functions/classes, hooks, aliasing. It fetches each
source once into a local, so the path ``self._modules['conv']._parameters['weight']``
is walked once per call, and returns the locals the mock needs (None on failure).

The mock runs the compiled operator graph and reproduces the final state of the
monitor run: the return value, new objects stored outside, in-place changes of
pre-existing objects (attribute, item and global writes), with the same aliasing.

Both are straight-line code: no loops, no per-parameter dict lookups beyond the
path itself.
"""
from __future__ import annotations

import collections
import math
import operator
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None

from . import effects, side_effects
from .cache import MISS, UNHELD
from .capture import set_layout
from .graph import Unsupported
from .guard_batch import batch_held

try:   # the guard fast path (dict version tags), built from magpy/_speedups.c where possible
    from ._speedups import dict_versions as _dict_versions
    from ._speedups import versions_same as _versions_same
except ImportError:   # pragma: no cover - no compiler at install time, or CPython 3.14+
    _dict_versions = _versions_same = None
from .guards import AliasGuard, DictSnapshotGuard, IdGuard, KeysGuard, TensorGuard
from .loops import loop_index, range_len
from .monitor import Monitor
from .objmodel import NO_VALUE, is_immutable
from .redraw import DrawSource, restore_states, same_draw, save_states
from .refgraph import guard_nodes, mock_nodes
from .source import (
    ArgSource,
    AttrSource,
    CellSource,
    ConstPool,
    ConstSource,
    DerefSource,
    GlobalSource,
    ItemSource,
    SelfArgsSource,
    Source,
    literal,
)
from .tensor_ops import RANDOM_OPS


@dataclass
class GeneratedCode:
    """What code generation hands to the record."""

    guard: Callable
    mock_factory: Callable           # (compiled_graph) -> (mock, run, guard exceptions list, inputs)
    guard_source: str
    mock_source: str
    run_source: str
    guards_text: str
    graph_output_nodes: list
    input_sources: list
    guard_node_count: int
    mock_node_count: int


def _storage_pattern(tensors) -> tuple:
    """Which tensors share a storage, as the index of the first tensor with the same storage."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(t.untyped_storage().data_ptr(), i) for i, t in enumerate(tensors))


def _same_values(a, b) -> bool:
    """``a`` (what the graph computed) is ``b`` (what the run saw), for (nested lists of) numbers
    and numpy values: exactly, not as ``==`` says (a float zero's sign counts, NaN is NaN)."""
    tb = type(b)
    if tb is bool and _np is not None and type(a) is _np.bool_:
        return bool(a) is b   # (3.13's fused comparison and truth test saw the bool of a numpy bool)
    if _np is not None and isinstance(a, (_np.ndarray, _np.generic)):
        if not (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and bool(
                _np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))):
            return False
        if a.dtype.kind == "c":
            a, b = _np.concatenate([_np.ravel(a.real), _np.ravel(a.imag)]), _np.concatenate([_np.ravel(b.real), _np.ravel(b.imag)])
        return a.dtype.kind not in "fc" or bool(_np.array_equal(_np.signbit(a), _np.signbit(b)))
    if tb is float:
        if a == b:
            return b != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
        return a != a and b != b and type(a) is float and math.copysign(1.0, a) == math.copysign(1.0, b)
    if tb is list or tb is tuple:
        if a == b and 0.0 not in b and not any(type(e) is tb for e in b):
            return True   # (no zero whose sign == would not see: no 0, 0.0 or False in it)
        return type(a) is tb and len(a) == len(b) and all(map(_same_values, a, b))
    return a == b


#: Python functions of numbers a lifted-size guard may apply (what magpy.scalars records on sizes).
_SIZE_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                              operator.truediv, operator.pow, operator.neg, int, float, max, min, abs,
                              math.ceil, math.floor, math.trunc, operator.lt, operator.le, operator.gt,
                              operator.ge, operator.eq, operator.ne, range_len})


def _speculation_state() -> tuple:
    """What a speculative graph may change besides its outputs: the RNG states and grad mode."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda, torch.is_grad_enabled()


def _changes_global_state(mon: Monitor) -> bool:
    """May the graph change the RNG states or grad mode (a random operator, a grad-mode switch)?
    Only then does a matched path that can turn into a miss save them first (a few us a call)."""
    for n in mon.graph.graph.nodes:
        if n.op not in ("call_function", "call_method"):
            continue
        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        if not isinstance(name, str) or any(r in name for r in RANDOM_OPS) or "grad" in name or "seed" in name:
            return True
    return False


def _restore_state(state: tuple) -> None:
    cpu, cuda, grad = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    torch.set_grad_enabled(grad)


def _assumption_checks(mon: Monitor, mb, pool: ConstPool) -> tuple[list, list, list[str]]:
    """The assumptions of the run (see :meth:`ScalarFlow.assume`): ``(shape_checks, draw_checks,
    checks)``.

    An assumption on a number computed from the sizes of the graph's inputs alone (a lifted size
    used by Python) is a guard, ``(expr, value, kind)`` with ``expr(names)`` its source over the
    input variables. One that also involves numbers the mock draws (``random.random() < p``) is
    checked by the mock right after drawing, before the graph runs. Every other is one Python
    condition over the graph's outputs, checked after the graph runs; such a speculative graph
    must not change tensors from outside: when an assumption fails, the call goes on as a miss
    and the program runs again."""
    shape_checks, draw_checks, rest = [], [], []
    for a in mon.assumptions:
        expr = _size_expr(a[1], pool) if a[0] in ("scalar", "truth", "atleast") else None
        if expr is not None:
            shape_checks.append((expr, a[2], a[0]))
            continue
        expr = _size_expr(a[1], pool, draws=True) if a[0] in ("scalar", "truth", "atleast") and mon.draws else None
        if expr is not None:
            draw_checks.append((expr, a[2], a[0]))
        else:
            rest.append(a)
    if not rest and not mon.speculative_ops:
        return shape_checks, draw_checks, []
    changed = [mon.rg.sn[nid] for nid in mon.mutated if isinstance(mon.rg.sn[nid].obj, torch.Tensor)]
    if changed or mon.mutates_outside:
        # The graph changes tensors from outside in place: the mock keeps a copy of each graph
        # input whose memory the graph writes, and puts it back when an assumption fails (or the
        # graph raises), so the miss leaves them as the call found them (the undo log).
        mon.undo_inputs = _undo_inputs(mon, changed)
    # (a tensor operation inside try/except: the graph must not raise, see below)
    checks = [] if rest else ["True"]
    for kind, node, expected in rest:
        o = mb._graph_output(node)
        if kind == "truth":
            checks.append(f"bool({o}) is {bool(expected)!r}")
        elif kind == "item":
            checks.append(f"_same_values({o}.item(), {pool.ref(expected)})")
        elif kind == "list":
            checks.append(f"_same_values({o}.tolist(), {pool.ref(expected)})")
        elif kind == "atleast":
            checks.append(f"{o} >= {expected!r}")
        else:
            checks.append(f"_same_values({o}, {pool.ref(expected)})")
    return shape_checks, draw_checks, checks


def _undo_inputs(mon: Monitor, changed: list) -> list[int]:
    """Positions of the graph inputs the speculative graph writes in place (by storage), all
    with the shape, strides and dtype the call found; Unsupported when a change could not be
    undone by copying values back (a change of metadata, a tensor written that is no input)."""
    what = changed[0].source.describe() if changed else "a tensor from outside (through a view)"
    guards = {g.source: g for g in mon.guards if isinstance(g, TensorGuard)}
    undo = []
    for i, (src, v) in enumerate(mon.graph.inputs):
        if isinstance(v, torch.Tensor) and v.untyped_storage().data_ptr() in mon.mutated_storages:
            g = guards.get(src)
            if g is None or g.entry[:3] != (tuple(v.shape), tuple(v.stride()), v.dtype) or v.is_sparse \
                    or type(v) not in (torch.Tensor, torch.nn.Parameter):
                raise Unsupported(f"reads tensor values into Python and changes {what} in place in a way "
                                  "a failed check could not undo")
            undo.append(i)
    written = {id(mon.graph.inputs[i][1]) for i in undo}
    if not undo or any(id(n.obj) not in written for n in changed):
        raise Unsupported(f"reads tensor values into Python and changes {what} in place: "
                          "the values read cannot be checked before the change")
    return undo


def _undo_save(tensors: tuple) -> list:
    return [t.detach().clone() for t in tensors]


def _undo_restore(tensors: tuple, saved: list) -> None:
    with torch.no_grad():
        for t, s in zip(tensors, saved):
            t.copy_(s)


def _feeds_graph(node: Any, assumed: set) -> bool:
    """Does number input ``node`` reach an operator of the graph, or an assumption? (Python
    arithmetic on numbers alone the mock computes itself, see ``_MockBuilder._graph_output``.)"""
    todo, seen = list(node.users), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in assumed or n.op != "call_function" or n.target not in _SIZE_ARITHMETIC or n.kwargs:
            return True
        todo.extend(n.users)
    return False


def _check_code(expr: Callable, expected: Any, kind: str, names: dict, pool: ConstPool) -> tuple[str, str]:
    """``(condition that fails, readable)`` of an assumption computed before the graph runs."""
    code = expr(names)
    if kind == "truth":
        return f"bool({code}) is not {bool(expected)!r}", f"bool({code}) is {bool(expected)!r}"
    if kind == "atleast":   # (a rolled loop's trip count, magpy.loops)
        return f"{code} < {expected!r}", f"{code} >= {expected!r}"
    return f"not _same_values({code}, {pool.ref(expected)})", f"{code} == {expected!r}"


def _size_expr(node: Any, pool: ConstPool, depth: int = 0, draws: bool = False) -> Callable | None:
    """``names -> source`` of ``node`` as Python over the graph inputs' variables, if ``node`` is
    a number computed only from input sizes (``i0.size(1) * 4``), and with ``draws`` also from
    numbers the mock draws (``i3 < 0.5``, magpy.redraw); else None."""
    import torch.fx as fx

    if depth > 20:
        return None
    if not isinstance(node, fx.Node):
        if type(node) in (int, float, bool) or node is None:
            return lambda names: repr(node)
        return None
    if node.op == "placeholder" and node.meta.get("magpy_scalar") and (draws or not node.meta.get("magpy_draw")):
        name = node.name
        return lambda names: names[name]
    if node.op == "call_function" and node.target is loop_index:
        k = node.args[0]   # (an unrolled iteration's index: a constant of the record)
        return lambda names: repr(k)
    if node.op == "call_method" and node.target in ("size", "numel") and node.args \
            and isinstance(node.args[0], fx.Node) and node.args[0].op == "placeholder" \
            and all(type(a) is int for a in node.args[1:]) and not node.kwargs:
        base, rest = node.args[0].name, "".join(repr(a) for a in node.args[1:])
        return lambda names: f"{names[base]}.{node.target}({rest})"
    if node.op == "call_function" and node.target is len and len(node.args) == 1 and not node.kwargs \
            and isinstance(node.args[0], fx.Node):
        # how many rows iterating an input gave (`for x_t in x.unbind(0)`, an LSTM's time loop):
        # the input's size along that dimension
        rows = node.args[0]
        if ((rows.op == "call_method" and rows.target == "unbind") or (rows.op == "call_function"
                                                                      and rows.target is torch.unbind)) \
                and rows.args and isinstance(rows.args[0], fx.Node) and rows.args[0].op == "placeholder" \
                and not rows.args[0].meta.get("magpy_scalar"):
            dim = rows.args[1] if len(rows.args) > 1 else rows.kwargs.get("dim", 0)
            if type(dim) is int:
                base = rows.args[0].name
                return lambda names: f"{names[base]}.size({dim})"
        return None
    if node.op == "call_function" and node.target in _SIZE_ARITHMETIC and not node.kwargs:
        parts = [_size_expr(a, pool, depth + 1, draws) for a in node.args]
        if any(p is None for p in parts):
            return None
        fn = pool.ref(node.target)
        return lambda names: f"{fn}(" + ", ".join(p(names) for p in parts) + ")"
    return None


# -- objects of the call the mock rebuilds ------------------------------------------------------------
# An object the mock rebuilds is the object eager makes: the same exact class, the same contents
# in the same order, the same state besides (a defaultdict's factory, a deque's maxlen, instance
# attributes; a set's whole hash table). ``_MockBuilder.value`` decides whether an object can be
# rebuilt so, and how; what it cannot rebuild exactly it refuses (Unsupported: that part runs
# eagerly). The helpers below build with the builtin base's own methods: a subclass's
# ``__init__``/``__setitem__``/``add`` (user code, which may do more) is not run again.


def _rebuild_object(cls, state: dict):
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def _rebuild_mapping(cls, items: list, state: dict, factory: Any = NO_VALUE):
    obj = cls.__new__(cls)
    if factory is not NO_VALUE:
        obj.default_factory = factory   # (a defaultdict: what a missing key gets)
    _refill_mapping(obj, items)
    if state:
        obj.__dict__.update(state)
    return obj


def _refill_mapping(obj, items: list) -> None:
    """``obj`` holds exactly ``items``, in order (the builtin base's methods: an OrderedDict keeps
    its order list; a Counter's ``update`` would add counts; a subclass's ``__setitem__`` is not
    run twice)."""
    base = collections.OrderedDict if isinstance(obj, collections.OrderedDict) else dict
    base.clear(obj)
    setitem = base.__setitem__
    for k, v in items:
        setitem(obj, k, v)


def _rebuild_sequence(cls, items: list, state: dict):
    obj = cls.__new__(cls)
    list.extend(obj, items)
    if state:
        obj.__dict__.update(state)
    return obj


def _rebuild_tuple(cls, items: list, state: dict):
    obj = tuple.__new__(cls, items)   # (a namedtuple's class: its fields are its items)
    if state:
        obj.__dict__.update(state)
    return obj


def _rebuild_deque(cls, items: list, maxlen: int | None, state: dict):
    obj = cls.__new__(cls)
    collections.deque.__init__(obj, items, maxlen)
    if state:
        obj.__dict__.update(state)
    return obj


def _rebuild_set(cls, items: list, state: dict):
    """A set (or frozenset) built the one way the mock builds it: the items added one by one, in
    order, into an empty table. Where this gives the table eager's set has (see
    :func:`magpy.capture.set_layout`, checked when the record is made), it gives it every time:
    the same items hash alike."""
    if issubclass(cls, frozenset):
        obj = frozenset.__new__(cls, items)   # (from a list: added one by one, in order)
    else:
        obj = set.__new__(cls)
        add = set.add
        for x in items:
            add(obj, x)
    if state:
        obj.__dict__.update(state)
    return obj


def _probe(h: int, mask: int):
    """The slots a set's lookup of hash ``h`` visits, in order (CPython's ``set_add_entry``: a
    few linear probes, then a jump mixing in more bits of the hash)."""
    perturb = h & 0xFFFFFFFFFFFFFFFF   # (size_t)
    i = perturb & mask
    while True:
        yield from range(i, i + (9 if i + 9 <= mask else 0) + 1)
        perturb >>= 5
        i = (i * 5 + 1 + perturb) & mask


def _insertion_order(items: list, layout: tuple) -> list:
    """An order adding ``items`` in which gives a table where each sits in the slot it has in
    ``layout`` (without removals): an item whose lookup passed another's slot comes after it. A
    candidate only: the caller compares the table it gives with eager's."""
    fill, used, mask, _finger, keys = layout
    slot_of = {k: i for i, k in enumerate(keys) if k}
    if fill != used or len(slot_of) != len(items) or any(id(x) not in slot_of for x in items):
        return items
    owner = {slot_of[id(x)]: n for n, x in enumerate(items)}
    after: list[list[int]] = [[] for _ in items]
    for n, x in enumerate(items):
        for k, slot in enumerate(_probe(hash(x), mask)):
            if slot == slot_of[id(x)] or k > 4 * (mask + 1):
                break
            if slot in owner:
                after[n].append(owner[slot])
    order: list[int] = []
    placed: set[int] = set()
    while len(order) < len(items):   # (the earliest slot first among those whose turn has come)
        ready = [n for n in range(len(items)) if n not in placed and all(d in placed for d in after[n])]
        if not ready:
            return items   # (a cycle: no order of additions gives that table)
        order.append(ready[0])
        placed.add(ready[0])
    return [items[n] for n in order]


def _slot_members(cls: type) -> list:
    """The ``__slots__`` storage of ``cls``'s instances: the member descriptor of each slot."""
    members = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for n in ((slots,) if isinstance(slots, str) else slots):
            if n in ("__dict__", "__weakref__"):
                continue
            if n.startswith("__") and not n.endswith("__"):
                n = f"_{klass.__name__.lstrip('_')}{n}"   # (a private name is mangled)
            member = klass.__dict__.get(n)
            if type(member) is not types.MemberDescriptorType:
                raise Unsupported(f"cannot reproduce the slot {n!r} of a {cls.__qualname__} in the mock")
            members.append(member)
    return members


def _set_slots(obj, values: list) -> None:
    for member, value in values:
        member.__set__(obj, value)


_tensor_guard_factory = None


def _tensor_checker(tensors: list[torch.Tensor], dims: list[tuple[list, list]]) -> Callable:
    """One call that checks Python type, dtype, device, shape, strides, requires_grad of all inputs.
    ``dims``: per tensor, the sizes and strides to check (None: any, a lifted dimension).

    torch's C++ ``TensorGuards`` does it at about 0.1 us a tensor; a Python loop is the fallback.
    """
    assert len(dims) == len(tensors)
    try:
        from torch._C._dynamo.guards import TensorGuards

        with torch._C.DisableTorchFunctionSubclass():   # no user __torch_function__ for MagPy's reads
            tg = TensorGuards(*tensors, dynamic_dims_sizes=[d[0] for d in dims],
                              dynamic_dims_strides=[d[1] for d in dims])
            if tg.check(*tensors) and not tg.check(*[_retyped(t) for t in tensors]):
                return tg.check
    except Exception:   # pragma: no cover - fallback when the torch helper changes
        pass
    meta = [(type(t), t.dtype, t.device, d[0], d[1], t.requires_grad) for t, d in zip(tensors, dims)]

    def same(actual, expected) -> bool:
        return len(actual) == len(expected) and all(e is None or a == e for a, e in zip(actual, expected))

    def check(*ts):
        for t, (ty, dt, dev, shape, stride, rg) in zip(ts, meta):
            if type(t) is not ty or t.dtype != dt or t.device != dev or not same(t.shape, shape) \
                    or not same(t.stride(), stride) or t.requires_grad != rg:
                return False
        return True

    return check


class _OtherTensor(torch.Tensor):
    """Only used to confirm that the C++ checker compares Python types."""


def _retyped(t: torch.Tensor) -> torch.Tensor:
    return t.as_subclass(_OtherTensor)


class _Vars:
    """Locals of the generated guard: one per source, computed from its base's local.

    A local is defined when first asked for, but its line is only emitted when a check needs
    it (``get``) or at the end (``emit_rest``, for what only the mock uses), so the checks that
    fail most often are not preceded by fetches of everything the mock needs.
    """

    def __init__(self, pool: ConstPool):
        self.pool = pool
        self.var_of: dict = {}
        self._defs: dict[str, tuple[str, str | None]] = {}   # var -> (expression, base var)
        self._emitted: set[str] = set()
        self.lines: list[str] = []

    def get(self, src: Source, emit: bool = True) -> str:
        v = self._define(src)
        if emit:
            self._emit(v)
        return v

    def emit_rest(self) -> None:
        for v in self._defs:
            self._emit(v)

    def _emit(self, v: str) -> None:
        if v in self._emitted or v not in self._defs:
            return
        expr, base = self._defs[v]
        if base is not None:
            self._emit(base)
        self._emitted.add(v)
        self.lines.append(f"{v} = {expr}")

    def define_emitted(self, src: Source) -> str:
        """The local for ``src``, assigned by a line the caller writes itself."""
        v = self._define(src)
        self._emitted.add(v)
        return v

    def bind_const(self, src: Source, value: Any) -> None:
        """``src`` is known to hold ``value`` once an earlier check passed: refer to the constant."""
        self.var_of[_key(src)] = self.pool.ref(value)

    def _define(self, src: Source) -> str:
        key = _key(src)
        v = self.var_of.get(key)
        if v is not None:
            return v
        base = None
        if isinstance(src, AttrSource):
            base = b = self._define(src.base)
            if src.via == "__dict__":
                e = f"{b}.__dict__[{src.name!r}]"
            elif src.via:
                e = f"{b}.{src.via}[{src.name!r}]"
            elif src.name.isidentifier():
                e = f"{b}.{src.name}"
            else:
                e = f"getattr({b}, {src.name!r})"
        elif isinstance(src, ItemSource):
            base = self._define(src.base)
            e = f"{base}[{literal(src.key, self.pool)}]"
        elif isinstance(src, CellSource):
            base = self._define(src.base)
            e = f"{base}.cell_contents"
        elif isinstance(src, DerefSource):
            base = self._define(src.base)
            e = f"{base}()"
        elif isinstance(src, ConstSource):
            e = self.pool.ref(src.value)
            self.var_of[key] = e
            return e
        elif isinstance(src, (ArgSource, GlobalSource, SelfArgsSource)):
            e = src.expr(self.pool)
        else:
            raise Unsupported(f"unknown source {src!r}")
        v = f"v{len(self.var_of)}"
        self.var_of[key] = v
        self._defs[v] = (e, base if base in self._defs else None)
        return v


def _key(src: Source):
    if isinstance(src, ConstSource):
        return ("const", id(src.value))
    if isinstance(src, GlobalSource):
        return ("global", id(src.globals_dict), src.name)
    if isinstance(src, AttrSource):
        return ("attr", _key(src.base), src.name)
    if isinstance(src, ItemSource):
        try:
            hash(src.key)
            return ("item", _key(src.base), type(src.key), src.key)
        except TypeError:
            return ("item", _key(src.base), id(src.key))
    if isinstance(src, CellSource):
        return ("cell", _key(src.base))
    if isinstance(src, DerefSource):
        return ("deref", _key(src.base))
    if isinstance(src, SelfArgsSource):
        return ("selfargs", id(src.self_obj))
    return src


class _InputNames:
    """``placeholder name -> variable`` of the graph's inputs, fetched (by the guard) when used."""

    def __init__(self, mb: _MockBuilder):
        self.mb = mb

    def __getitem__(self, name: str) -> str:
        for k, (src, _) in enumerate(self.mb.mon.graph.inputs):
            if f"i{k}" == name:
                return self.mb.src(src)
        raise KeyError(name)


class _MockBuilder:
    def __init__(self, mon: Monitor, vars_: _Vars, pool: ConstPool):
        self.mon = mon
        self.vars = vars_
        self.pool = pool
        self.lines: list[str] = []
        self.memo: dict[int, str] = {}
        self.outputs: list = []
        self._out_index: dict = {}
        self.needed: list[str] = []
        self._n = 0

    def _fresh(self) -> str:
        self._n += 1
        return f"m{self._n}"

    def src(self, source: Source) -> str:
        if isinstance(source, DrawSource):
            return source.expr()   # drawn by the mock (never fetched by the guard)
        v = self.vars.get(source, emit=False)
        if v.startswith("v") and v not in self.needed:
            self.needed.append(v)
        return v

    def value(self, v: Any, depth: int = 0) -> str:
        if depth > 50:
            raise Unsupported("output structure nested too deeply")
        if self.mon.scalar_nodes:
            n = self.mon.scalar_node(v)
            if n is not None:
                return self._graph_output(n)   # a number (or numpy value) read from a tensor: the call's value
        if is_immutable(v) and not (type(v) is tuple and self.mon.holds_scalar(v)):
            return literal(v, self.pool)   # (a tuple holding numbers read from tensors is the call's)
        hit = self.memo.get(id(v))
        if hit is not None:
            return hit
        node = self.mon.node(v)
        if node is not None and node.source is not None:
            return self.src(node.source)
        if isinstance(v, torch.Tensor):
            n = self.mon.graph.node_of(v)
            if n is None:
                raise Unsupported(f"returns a tensor {tuple(v.shape)} whose computation MagPy did not see")
            return self._graph_output(n)
        t = type(v)
        if isinstance(v, (types.BuiltinFunctionType, type, types.ModuleType, types.MethodDescriptorType,
                          types.WrapperDescriptorType, types.ClassMethodDescriptorType)) \
                or (_np is not None and isinstance(v, _np.dtype)):
            return self.pool.ref(v)   # (a class's C method: a constant the guard reached through the class)
        if isinstance(v, types.MethodType):
            e = f"{self.pool.ref(types.MethodType)}({self.value(v.__func__, depth + 1)}, {self.value(v.__self__, depth + 1)})"
            var = self._fresh()
            self.lines.append(f"{var} = {e}")
            self.memo[id(v)] = var
            return var
        if isinstance(v, types.FunctionType):
            if v.__closure__:
                raise Unsupported(f"returns a closure `{v.__qualname__}` created during the call")
            return self.pool.ref(v)
        if isinstance(v, torch.nn.Module):
            raise Unsupported(f"returns a {t.__name__} module created during the call")
        members = _slot_members(t) if t not in (list, tuple, dict, set) else []
        if t is list:
            e = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
        elif t is tuple:
            e = "(" + "".join(self.value(x, depth + 1) + ", " for x in v) + ")"
        elif isinstance(v, tuple) and hasattr(t, "_fields"):
            items = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
            e = f"_rebuild_tuple({self.pool.ref(t)}, {items}, {self._state(v, depth)})"
        elif t is torch.Size:
            # (sizes read from a lifted shape are the call's, from the graph)
            e = f"{self.pool.ref(torch.Size)}([" + ", ".join(self.value(x, depth + 1) for x in v) + "])" \
                if self.mon.holds_scalar(v) else self.pool.ref(v)
        elif t is dict:
            e = "{" + ", ".join(f"{self._key(k)}: {self.value(x, depth + 1)}" for k, x in v.items()) + "}"
        elif isinstance(v, (set, frozenset)):
            e = self._set(v, depth)
        elif isinstance(v, dict):
            items = "[" + ", ".join(f"({self._key(k)}, {self.value(x, depth + 1)})" for k, x in v.items()) + "]"
            factory = f", {self.value(v.default_factory, depth + 1)}" if isinstance(v, collections.defaultdict) else ""
            e = f"_rebuild_mapping({self.pool.ref(t)}, {items}, {self._state(v, depth)}{factory})"
        elif isinstance(v, list):
            items = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
            e = f"_rebuild_sequence({self.pool.ref(t)}, {items}, {self._state(v, depth)})"
        elif isinstance(v, collections.deque):
            items = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
            e = f"_rebuild_deque({self.pool.ref(t)}, {items}, {v.maxlen!r}, {self._state(v, depth)})"
        elif hasattr(v, "__dict__") and not hasattr(t, "__slots__") and t.__new__ is object.__new__ \
                and type(t) is type:
            e = f"_rebuild_object({self.pool.ref(t)}, {self._state(v, depth)})"
        else:
            raise Unsupported(f"cannot reproduce an output of type {t.__module__}.{t.__qualname__} in the mock")
        var = self._fresh()
        self.lines.append(f"{var} = {e}")
        self.memo[id(v)] = var
        if members:   # (the slots set, unset ones left unset)
            filled = []
            for m in members:
                try:
                    filled.append((m, m.__get__(v)))
                except AttributeError:
                    pass
            self.lines.append(f"_set_slots({var}, [" + ", ".join(
                f"({self.pool.ref(m)}, {self.value(x, depth + 1)})" for m, x in filled) + "])")
        return var

    def _graph_output(self, n) -> str:
        drawn = n.meta.get("magpy_draw") if n.op == "placeholder" else None
        if drawn is not None:
            return drawn.expr()   # a number the mock drew itself
        expr = _size_expr(n, self.pool, draws=True) if self.mon.lifted_value_nodes or self.mon.draws else None
        if expr is not None:
            # A number computed from the graph's number inputs (and sizes) alone (`scale / 2` of a
            # lifted argument): the mock computes it in Python. (A compiled graph need not hand back
            # Python numbers it computed from numbers: TorchDynamo may fold them as constants.)
            return expr(_InputNames(self))
        idx = self._out_index.get(n)
        if idx is None:
            idx = len(self.outputs)
            self.outputs.append(n)
            self._out_index[n] = idx
        return f"o[{idx}]"

    def _key(self, k) -> str:
        if self.mon.scalar_node(k) is not None:
            raise Unsupported("a number read from a tensor value is a dict key")
        if not is_immutable(k):
            raise Unsupported(f"output dict with a non-constant key of type {type(k).__name__}")
        return literal(k, self.pool)

    def _set(self, v, depth) -> str:
        """A set made in the call: its iteration order (and how it grows, pops) depends on the
        history of its table, not only on its items. Rebuilt only where adding its items in
        order to an empty set gives exactly eager's table, with items that are the same on every
        call (constants, numbers read from tensors whose values the record assumes)."""
        t = type(v)
        items = list(v)
        assumed = {id(a[1]) for a in self.mon.assumptions if a[0] == "scalar"}
        if not all(is_immutable(x) and all(id(self.mon.scalar_node(e)) in assumed for e in self.mon._tracked_in(x))
                   for x in items):
            # (a number read from a tensor is hashed into a set: its value is assumed, exactly)
            raise Unsupported(f"returns a {t.__name__} of objects made during the call")
        layout = set_layout(v)
        if layout is not None and set_layout(_rebuild_set(t, items, {})) != layout:
            items = _insertion_order(items, layout)   # (one added after another it collided with)
        if layout is None or set_layout(_rebuild_set(t, items, {})) != layout:
            raise Unsupported(f"returns a {t.__name__} whose iteration order comes from its history "
                              "(removals, growth): the mock cannot rebuild it exactly")
        return f"_rebuild_set({self.pool.ref(t)}, [" + ", ".join(self.value(x, depth + 1) for x in items) \
            + f"], {self._state(v, depth)})"

    def _state(self, v, depth) -> str:
        d = getattr(v, "__dict__", None) or {}
        return "{" + ", ".join(f"{k!r}: {self.value(x, depth + 1)}" for k, x in d.items()) + "}"


def generate(mon: Monitor, call_shape: tuple, graph_mod_factory: Callable) -> GeneratedCode:
    """Build guard and mock for one finished monitor run (raises Unsupported for what it cannot mock)."""
    with torch._C.DisableTorchFunctionSubclass():   # MagPy's reads of example tensors are not the user's
        return _generate(mon, call_shape, graph_mod_factory)


def _generate(mon: Monitor, call_shape: tuple, graph_mod_factory: Callable) -> GeneratedCode:
    mon.check_array_constants()
    pool = ConstPool()
    vars_ = _Vars(pool)
    # Before any local is defined: checks batched in C decide which sources are constants.
    alias_guards = [AliasGuard(a, n.source) for n in mon.rg.sn[1:] if n.source is not None for a in n.aliases]
    batched, pinned = _batch_identity_items(list(mon.guards) + alias_guards, vars_)
    batched, held = batch_held(batched, pinned)
    for src, obj in held.pinned_sources():
        vars_.bind_const(src, obj)
    held_objs = {id(o) for _, o in held.pinned_sources()}
    plan = side_effects.replay_plan(mon.rg)   # Algorithm 1 GetMockNodes, step by step from their versions
    direct_writes = {(s.node.node_id, s.key) for s in plan
                     if s.kind == "attr" and _direct_module_write(mon, held, held_objs, s.node, s.key)}

    # -- the mock's plan first: it decides the graph outputs and which sources it needs --------
    mb = _MockBuilder(mon, vars_, pool)
    rg = mon.rg
    writes = [line for step in plan for line in _replay_lines(step, mb, pool, direct_writes)]
    for var, before in mon.contextvars.values():
        if var.get(NO_VALUE) is not before:
            raise Unsupported(f"leaves context variable {var.name!r} changed")
    ret = mb.value(mon.result)
    shape_checks, draw_checks, checks = _assumption_checks(mon, mb, pool)
    prints = []   # (replayed effects, magpy.effects: print, logging, sleep)

    def replayed(kind, v):
        return mb._graph_output(v) if kind == "node" else pool.ref(v) if kind == "ref" else mb.value(v)

    if mon.effects and mon.draws and any(fn is time.sleep for fn, *_ in mon.effects):
        raise Unsupported("sleeps in a call that reads the clock (the mock sleeps after the graph)")
    for fn, eargs, ekwargs, where in mon.effects:
        parts = [replayed(*a) for a in eargs]
        kparts = [f"{k}={replayed(*a)}" for k, a in ekwargs.items()]
        if where is None:
            prints.append(f"{pool.ref(fn)}({', '.join(parts + kparts)})")
        else:   # called from a frame that names the user's file, line and function (logging's caller)
            kw = ", ".join(f"{k!r}: {replayed(*a)}" for k, a in ekwargs.items())
            tramp = effects.trampoline(*where)
            prints.append(f"{pool.ref(tramp)}({pool.ref(fn)}, ({''.join(p + ', ' for p in parts)}), {{{kw}}})")

    # -- a tensor changed in place is the graph's to replay; Algorithm 1 as the check of the
    # guard: every object read from outside (GetGuardNodes) must carry a guard on its source.
    for step in plan:
        if step.kind == "graph" and not mon.graph_mutates:
            raise Unsupported(f"internal: the in-place change of tensor {step.node.source.describe()} is not in the graph")
    for g in mon.guards:
        changed = g.changed_in_place() if isinstance(g, TensorGuard) else None
        if changed is not None:
            raise Unsupported(changed)   # (the batched tensor check reads these from the tensor itself)
    guarded_sources = {g.source for g in mon.guards}
    for node in guard_nodes(rg)[1:]:
        if node.source is not None and not isinstance(node.source, ConstSource) and node.source not in guarded_sources:
            raise Unsupported(f"internal: {node.source.describe()} was read from outside without a guard")

    # -- graph inputs: placeholders in order, fetched by the guard ------------------------------------
    input_vars = [mb.src(src) for src, _ in mon.graph.inputs]
    # A graph that changes tensors in place (or switches grad mode/autocast) runs even when
    # the mock needs none of its outputs.
    gm_needed = bool(mb.outputs) or mon.graph_mutates
    # -- guard ------------------------------------------------------------------------------------------
    nargs, kwnames = call_shape
    body = ["try:"]
    body.append(f"    if len(args) != {nargs} or len(kwargs) != {len(kwnames)}: return None")
    if kwnames:
        body.append(f"    if sorted(kwargs) != {list(kwnames)!r}: return None")
    ns: dict[str, Any] = {}
    body.append("    " + mon.global_state.guard_line(ns))
    if mon.global_state.hook_tables is not None and mon.global_state.cpp is not None:
        held.hook_tables.extend(mon.global_state.hook_tables)   # "no global module hooks", batched
    readable: list[str] = [f"call shape: {nargs} positional, keywords {list(kwnames)}",
                           mon.global_state.description]
    tensor_vars: list[str] = []
    tensor_vals: list[torch.Tensor] = []
    tensor_dims: list[tuple] = []
    object_vars: list[str] = []   # mutable objects guarded by type only
    # The caller's arguments change most between calls: check them (and their tensors, in one
    # C++ call) before walking module trees, so a miss is found early.
    all_guards = batched
    arg_guards = [g for g in all_guards if _root(g.source) is ArgSource]
    other_guards = [g for g in all_guards if _root(g.source) is not ArgSource]
    for g in arg_guards + [None] + other_guards:
        if g is None:
            _flush(vars_, body)
            arg_tensor_count = len(tensor_vars)
            always, slow, vdicts = held.lines(ns)
            readable.extend(held.described)
            names = [vars_.define_emitted(src) for _, _, src, _ in held.tensors]
            if names:
                # Tensors held in pinned tables (parameters, buffers) fetched in one C-level pass.
                ns["_HF_C"] = tuple(c for c, _, _, _ in held.tensors)
                ns["_HF_K"] = tuple(k for _, k, _, _ in held.tensors)
                tensor_vars.extend(names)
                tensor_vals.extend(t for _, _, _, t in held.tensors)
                tensor_dims.extend(held.tensor_dims)
            fetch = f"{', '.join(names)}, = map(_getitem, _HF_C, _HF_K)" if names else None
            if slow and _dict_versions is not None:
                # Checks that only read dict contents run again only when a version tag moved.
                ns["_dict_versions"], ns["_VD"], ns["_STATE"] = _dict_versions, tuple(vdicts), [(None, ())]
                ns["_versions_same"] = _versions_same
                cache_tensors = fetch is not None and held.tensors_versioned
                body.append("    _st = _STATE[0]")
                body.append("    if not _versions_same(_VD, _st[0]):")
                body.append("        _vs = _dict_versions(_VD)   # read before the checks: a later change is seen next call")
                body.extend("        " + line for line in slow)
                if cache_tensors:
                    body.append("        " + fetch)
                    body.append(f"        _STATE[0] = (_vs, ({', '.join(names)},))")
                    body.append("    else:")
                    body.append(f"        {', '.join(names)}, = _st[1]")
                else:
                    body.append("        _STATE[0] = (_vs, ())")
                    if fetch:
                        body.append("    " + fetch)
            else:
                body.extend("    " + line for line in slow)
                if fetch:
                    body.append("    " + fetch)
            body.extend("    " + line for line in always)
            continue
        v = g.fetch(vars_)
        _flush(vars_, body)
        line = g.check_line(v, vars_, pool)
        _flush(vars_, body)
        if line is not None:
            body.append("    " + line)
        readable.append(g.describe())
        tensor = g.batched_tensor
        if tensor is not None and v not in tensor_vars:
            tensor_vars.append(v)
            tensor_vals.append(tensor)
            tensor_dims.append((g.sizes(), g.strides()) if isinstance(g, TensorGuard)
                               else (list(tensor.size()), list(tensor.stride())))
        if g.distinct_object and v not in object_vars:
            object_vars.append(v)
    vars_.emit_rest()
    _flush(vars_, body)
    if tensor_vars:
        ns["_TG"] = _tensor_checker(tensor_vals, tensor_dims)
        body.append(f"    if not _TG({', '.join(tensor_vars)}): return None")
    # Distinctness: with writes in the record, two outside objects that were distinct must stay
    # distinct (the same list passed twice, `self.a is self.b` after a rebinding), and argument
    # tensors must alias each other's storage as they did (overlapping views).
    has_writes = bool(plan or mon.graph_mutates)   # (every node in `mon.mutated` has a step in the plan)
    if has_writes and len(object_vars) > 1:
        body.append(f"    if len({{id(o) for o in ({', '.join(object_vars)},)}}) != {len(object_vars)}: return None")
        readable.append("distinct objects: " + ", ".join(object_vars))
    if tensor_vars:
        if (mon.mutated or mon.graph_mutates) and len(tensor_vars) > 1:
            body.append(f"    if len({{id(t) for t in ({', '.join(tensor_vars)},)}}) != {len(tensor_vars)}: return None")
        if mon.graph_mutates and arg_tensor_count > 1:
            args_t = ", ".join(tensor_vars[:arg_tensor_count])
            pattern = _storage_pattern(tensor_vals[:arg_tensor_count])
            body.append(f"    if _storage_pattern(({args_t},)) != {pattern!r}: return None")
            readable.append(f"argument tensors share storage as {pattern}")
    names = {f"i{k}": mb.src(src) for k, (src, _) in enumerate(mon.graph.inputs)} \
        if shape_checks or draw_checks else {}
    for expr, expected, kind in shape_checks:
        # Lifted shapes: what the run assumed of its inputs' sizes, checked before anything runs.
        fails, said = _check_code(expr, expected, kind, names, pool)
        body.append(f"    if {fails}: return None")
        readable.append(f"lifted sizes: {said}")
    needed = list(dict.fromkeys(mb.needed))
    body.append(f"    return ({''.join(n + ', ' for n in needed)})")
    # A path that no longer exists is a miss, so is a value that no longer compares (a dict that
    # held numbers now holds a numpy array: `!=` raises ValueError; a lifted size's expression on
    # a number it cannot take, `int(inf)`: ArithmeticError); any other exception is a MagPy bug
    # that the caller reports instead of treating it as a miss forever.
    body.append("except (LookupError, AttributeError, TypeError, ValueError, ArithmeticError):")
    body.append("    return None")
    guard_src = "def guard(args, kwargs):\n" + "\n".join("    " + line for line in body) + "\n"

    # -- mock ----------------------------------------------------------------------------------------------
    mlines = []
    if needed:
        mlines.append(f"{''.join(n + ', ' for n in needed)}= fetched")
    # Random draws (magpy.redraw): drawn again, in the run's order, before the graph that takes them.
    draw_lines = [d.call_code(pool) for d in mon.draws]
    # A clock read after operators ran, that no operator takes, is read after the graph ran (where
    # the program read it: `elapsed = time.perf_counter() - t0` measures the graph).
    assumed = {a[1] for a in mon.assumptions}
    used = {n.meta["magpy_draw"] for n in mon.graph.graph.nodes
            if n.op == "placeholder" and n.meta.get("magpy_draw") is not None and _feeds_graph(n, assumed)}
    late_draws = {d for d in mon.draws
                  if d.generator is None and d.after_ops and d not in used and d.pinned is None}
    late = [line for d, line in zip(mon.draws, draw_lines) if d in late_draws]
    early = [(d, line) for d, line in zip(mon.draws, draw_lines) if d not in late_draws]
    draws = [line for _, line in early]   # (emitted once, before the graph)
    # (the graph does not use a late reading: it gets the run's value in its place)
    input_vars = [literal(v, pool) if src in late_draws else var
                  for (src, v), var in zip(mon.graph.inputs, input_vars)]
    restore = "_restore_state(_state)"
    if mon.draws:
        ns["_G"] = tuple(dict.fromkeys(d.generator for d in mon.draws))
        ns.update(_save_draws=save_states, _restore_draws=restore_states, _same_draw=same_draw)
        readable.extend(f"draws again: {d.describe()}" for d in mon.draws)
        restore += "; _restore_draws(_G, _gs)"
    pinned = [d for d in mon.draws if d.pinned is not None]
    if draw_checks or pinned:
        # What the run's path assumed of the numbers drawn, and the values it pinned, checked as
        # soon as they are drawn: a call that draws another path is a miss with the generators
        # put back.
        mlines.append("_gs = _save_draws(_G)")
        for d, line in early:
            mlines.append(line)
            if d.pinned is not None:
                mlines.append(f"if {d.check_code(pool)}:")
                mlines.append("    _restore_draws(_G, _gs)")
                mlines.append("    return _UNHELD")
                readable.append(f"draw {d.index} is pinned: {d.pinned[0]!r}"[:200])
        draws = []
        for expr, expected, kind in draw_checks:
            fails, said = _check_code(expr, expected, kind, names, pool)
            mlines.append(f"if {fails}:")
            mlines.append("    _restore_draws(_G, _gs)")
            mlines.append("    return _UNHELD")
            readable.append(f"drawn numbers: {said}")
    if checks:
        # Speculation (magpy.scalars): the graph computed values the run's path depended on. If
        # one differs, or the graph fails, the record does not hold: the call is a miss, as if
        # the graph had not run (it changed nothing outside but the RNGs, which are put back).
        mlines.append("_state = _speculation_state()")
        if mon.undo_inputs:
            undo_vars = "(" + "".join(f"{input_vars[i]}, " for i in mon.undo_inputs) + ")"
            mlines.append(f"_saved = _undo_save({undo_vars})")
            restore += f"; _undo_restore({undo_vars}, _saved)"
        if mon.draws and not (draw_checks or pinned):
            mlines.append("_gs = _save_draws(_G)")
        mlines += draws
        mlines.append("try:")
        mlines.append(f"    o = _graph({', '.join(input_vars)})")
        mlines.append("except Exception:")
        mlines.append(f"    {restore}")
        mlines.append("    return _UNHELD")
        mlines.append(f"if not ({' and '.join(checks)}):")
        mlines.append(f"    {restore}")
        mlines.append("    return _UNHELD")
    elif (gm_needed or prints) and (writes or prints) and not mon.draws and not mon.mutates_outside \
            and not any(isinstance(mon.rg.sn[nid].obj, torch.Tensor) for nid in mon.mutated):
        # The record has outside effects, replayed after the graph; eager made the ones its code
        # reaches before an operator raises (`self.count += 1` before a shape error). A graph that
        # raises changed nothing outside (but the RNGs, put back): the call is a miss, and the
        # program runs as eager runs it, effects and exception included.
        keeps_state = _changes_global_state(mon)
        if keeps_state:
            mlines.append("_state = _speculation_state()")
        mlines.append("try:")
        mlines.append(f"    o = _graph({', '.join(input_vars)})")
        mlines.append("except Exception:")
        if keeps_state:
            mlines.append("    _restore_state(_state)")
        mlines.append("    return _UNHELD")
    elif gm_needed or prints:
        mlines += draws
        mlines.append(f"o = _graph({', '.join(input_vars)})")
    else:
        mlines += draws   # (drawn for their effect on the generators: nothing uses them)
    mlines += late
    mlines += mb.lines
    mlines += prints   # (after the graph and its checks: printed once, with the call's values)
    mlines += writes
    mlines.append(f"return {ret}")
    mock_src = "def mock(fetched):\n" + "\n".join("    " + line for line in mlines) + "\n"

    ns.update(pool.namespace())
    ns.update(_speculation_state=_speculation_state, _restore_state=_restore_state, _UNHELD=UNHELD,
              _undo_save=_undo_save, _undo_restore=_undo_restore)
    ns.update(_same_values=_same_values, _storage_pattern=_storage_pattern, _rebuild_object=_rebuild_object, _rebuild_mapping=_rebuild_mapping,
              _rebuild_sequence=_rebuild_sequence, _rebuild_tuple=_rebuild_tuple, _rebuild_deque=_rebuild_deque,
              _rebuild_set=_rebuild_set, _refill_mapping=_refill_mapping, _set_slots=_set_slots)
    guard_ns = dict(ns)
    exec(compile(guard_src, "<magpy guard>", "exec"), guard_ns)

    # -- the matched path: guard and mock fused into one function ------------------------------------
    # What a call runs when this record is tried: no fetched tuple built and unpacked, one frame.
    # A miss returns MISS. The guard part keeps its own try: a path that is gone is a miss, any
    # other exception there is MagPy's bug (kept in ``_BUGS`` for the caller to report, then a
    # miss). The mock part runs outside it, so the user's exceptions propagate as eager's would.
    run_lines = ["try:"]
    run_lines += [line.replace("return None", "return _MISS") for line in body[1:-3]]
    run_lines += ["except (LookupError, AttributeError, TypeError, ValueError, ArithmeticError):", "    return _MISS",
                  "except Exception as e:", "    _BUGS.append(e)", "    return _MISS"]
    run_lines += mlines[1:] if needed else mlines
    run_src = "def run(args, kwargs):\n" + "\n".join("    " + line for line in run_lines) + "\n"

    # The graph's inputs from what the guard fetched (for benchmarks that time the bare graph).
    inputs_lines = ([f"{''.join(n + ', ' for n in needed)}= fetched"] if needed else []) + draw_lines + \
        [f"return [{', '.join(input_vars)}]"]
    inputs_src = "def inputs(fetched):\n" + "\n".join("    " + line for line in inputs_lines) + "\n"

    def mock_factory(compiled_graph):
        mock_ns = dict(ns)
        mock_ns["_graph"] = compiled_graph
        exec(compile(mock_src, "<magpy mock>", "exec"), mock_ns)
        exec(compile(inputs_src, "<magpy inputs>", "exec"), mock_ns)
        run_ns = dict(ns)
        run_ns.update(_graph=compiled_graph, _MISS=MISS, _BUGS=[])
        exec(compile(run_src, "<magpy run>", "exec"), run_ns)
        # (popped: a function in its own globals is a reference cycle, which would keep what
        # the record holds alive until the cyclic collector runs, after the record is dropped)
        return mock_ns.pop("mock"), run_ns.pop("run"), run_ns["_BUGS"], mock_ns.pop("inputs")

    return GeneratedCode(
        guard=guard_ns.pop("guard"), mock_factory=mock_factory, guard_source=guard_src, mock_source=mock_src,
        run_source=run_src,
        guards_text="\n".join(readable), graph_output_nodes=list(mb.outputs),
        input_sources=[s for s, _ in mon.graph.inputs],
        guard_node_count=len(guard_nodes(rg)), mock_node_count=len(mock_nodes(rg)),
    )


_MODULE_TABLES = ("_parameters", "_buffers", "_modules")


def _direct_module_write(mon: Monitor, held, held_objs: set, node, name: str) -> bool:
    """Can the mock replay ``module.name = v`` as ``module.__dict__[name] = v``?

    ``nn.Module.__setattr__`` is Python code that checks the value's type against Parameter,
    Module and Buffer (a metaclass ``__instancecheck__``) and the name against three tables:
    several microseconds on every matched call. For a plain value (a number, a string, a tuple,
    a tensor made in the call) on a held module it ends in ``object.__setattr__``, i.e. a write
    of the instance dict, as long as: the module keeps its class, the class still resolves
    ``__setattr__`` to ``Module.__setattr__`` and has no data descriptor of that name, the module
    keeps its ``__dict__`` and its three tables, and none of the tables holds the name. Those
    conditions become held-state checks (dict version tags cover all but the class and the
    instance dict, which the per-call C pass checks).
    """
    obj = node.obj
    if not isinstance(obj, torch.nn.Module) or node.source is None or not (
            isinstance(node.source, ConstSource) or id(obj) in held_objs):
        return False
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict) or name not in d:
        return False
    v = d[name]
    if isinstance(v, torch.Tensor):
        if type(v) is not torch.Tensor or mon.node(v) is not None or mon.graph.node_of(v) is None:
            return False   # only a plain tensor the graph makes (never a Parameter or an outside tensor)
    elif not is_immutable(v):
        return False
    cls = type(obj)
    tables = [d.get(t) for t in _MODULE_TABLES]
    if any(type(t) is not dict or name in t for t in tables):
        return False
    id_rows, absent_rows = [], []
    for attr in ("__setattr__", name):
        for klass in cls.__mro__:
            kd = klass.__dict__
            if attr in kd:
                found = kd[attr]
                if attr == "__setattr__" and found is not torch.nn.Module.__setattr__:
                    return False
                if attr == name and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
                    return False   # a property or other data descriptor: object.__setattr__ calls it
                id_rows.append((kd, attr, found))
                break
            absent_rows.append((kd, attr))
    held.types.append((obj, cls))
    held.dict_pins.append((obj, "__dict__", d))
    held.id_items.extend(id_rows + [(d, t, tbl) for t, tbl in zip(_MODULE_TABLES, tables)])
    held.absent.extend(absent_rows + [(tbl, name) for tbl in tables])
    held.described.append(f"{node.source.describe()}.{name} is written as a plain instance attribute: "
                          f"same class, Module.__setattr__, no descriptor or parameter/buffer/submodule {name!r}")
    return True


def _batch_identity_items(guards: list, vars_: _Vars) -> list:
    """A dict read whole whose values are all identity-guarded objects compared by identity
    (an nn.Module's ``_modules``) is checked by one snapshot comparison in C instead of a fetch
    and an ``is`` per item; the items are then the snapshot's constants."""
    ids = {g.source: g for g in guards if isinstance(g, IdGuard)}
    out, dropped, pinned = [], set(), {}
    for g in guards:
        if isinstance(g, KeysGuard) and g.keys:
            items = [ids.get(ItemSource(g.source, k)) for k in g.keys]
            if all(i is not None and type(i.obj).__eq__ is object.__eq__ for i in items):
                snap = {k: i.obj for k, i in zip(g.keys, items)}
                out.append(DictSnapshotGuard(g.source, snap, g.keys))
                for i in items:
                    dropped.add(id(i))
                    vars_.bind_const(i.source, i.obj)
                    pinned[i.source] = i.obj
                continue
        if id(g) not in dropped:
            out.append(g)
    return [g for g in out if id(g) not in dropped], pinned


def _root(src: Source) -> type:
    while hasattr(src, "base"):
        src = src.base
    return type(src)


def _replay_lines(step: side_effects.Step, mb: _MockBuilder, pool: ConstPool, direct_writes: set) -> list[str]:
    """The mock's lines for one step of the replay plan (:mod:`magpy.side_effects`): the final
    value each changed reference holds, read from the runtime object."""
    node, obj = step.node, step.node.obj
    if step.kind == "global":
        g, name = step.holder, step.key
        return [f"{pool.ref(g)}[{name!r}] = {mb.value(g[name])}" if name in g else f"{pool.ref(g)}.pop({name!r}, None)"]
    if step.kind == "cell":
        try:
            return [f"{pool.ref(obj)}.cell_contents = {mb.value(obj.cell_contents)}"]
        except ValueError:
            return [f"del {pool.ref(obj)}.cell_contents"]
    if step.kind == "graph":
        return []   # (a tensor changed in place: the operator graph does it)
    var = mb.src(node.source)
    if step.kind == "attr":
        name = step.key
        if isinstance(obj, torch.nn.Module):
            present = name in obj.__dict__ or any(name in obj.__dict__.get(t, {}) for t in
                                                  ("_parameters", "_buffers", "_modules"))
        else:
            present = hasattr(obj, name)
        if (node.node_id, name) in direct_writes:
            return [f"{pool.ref(obj.__dict__)}[{name!r}] = {mb.value(obj.__dict__[name])}"]
        if present:
            return [f"setattr({var}, {name!r}, {mb.value(getattr(obj, name))})"]
        return [f"if hasattr({var}, {name!r}): delattr({var}, {name!r})"]
    if step.kind == "call":
        method, margs = step.key, step.args
        if method == "__setitem__":
            return [f"{var}[{mb._key(margs[0])}] = {mb.value(margs[1])}"]
        if method == "extend":
            return [f"{var}.extend([{', '.join(mb.value(x) for x in margs[0])}])"]
        if method == "insert":
            return [f"{var}.insert({literal(margs[0], pool)}, {mb.value(margs[1])})"]
        return [f"{var}.{method}({', '.join(mb.value(x) for x in margs)})"]
    # "refill": the final contents (a subclass's own __setitem__/extend, user code, is not run)
    if isinstance(obj, list):
        items = "[" + ", ".join(mb.value(x) for x in obj) + "]"
        return [f"{var}[:] = {items}" if type(obj) is list else f"{pool.ref(list.__setitem__)}({var}, slice(None), {items})"]
    if isinstance(obj, dict):
        items = ", ".join(f"({mb._key(k)}, {mb.value(x)})" for k, x in obj.items())
        return [f"_refill_mapping({var}, [{items}])"]
    if isinstance(obj, set):
        # Emptied and refilled, a set's table is not the one eager's changes leave (the
        # order it iterates in, where it grows): only changes replayed one by one are exact.
        raise Unsupported(f"changes the set {node.source.describe()} in a way the mock cannot replay exactly")
    if isinstance(obj, collections.deque):
        dq = pool.ref(collections.deque)
        return [f"{dq}.clear({var}); {dq}.extend({var}, [" + ", ".join(mb.value(x) for x in obj) + "])"]
    raise Unsupported(f"cannot reproduce an in-place change of a {type(obj).__name__}")


def _flush(vars_: _Vars, body: list[str]) -> None:
    for line in vars_.lines:
        body.append("    " + line)
    vars_.lines.clear()

