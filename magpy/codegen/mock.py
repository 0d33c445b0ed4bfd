"""The mock (paper §4.2, Algorithm 1): the run's final state rebuilt from the graph's outputs.

The mock runs the compiled operator graph and reproduces what the monitor run left: the return
value, new objects stored outside, in-place changes of pre-existing objects (attribute, item,
global and cell writes), replayed effects, with the same aliasing. :class:`MockBuilder` turns each
value into an expression of the generated code; :func:`plan_writes` and :func:`replayed_effects`
give the lines that change outside state, the writes from the replay plan that
:mod:`magpy.replay_plan` reads off the RefGraph's versions (Algorithm 1 GetMockNodes);
:func:`check_plan` checks what the graph and the guard must still do.
"""
from __future__ import annotations

import collections
import time
import types
from typing import Any

import torch

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None

from .. import replayed_effects as effects
from ..capture import set_layout
from ..graph import Unsupported
from ..guards import TensorGuard
from ..objmodel import NO_VALUE, is_identity_key, is_immutable, is_mutable_class, mentions_number, write_hook
from ..realtype import has_stored_attr, instance_dict, is_instance, runs_lookup_hook, stored_attr
from ..redraw import DrawSource
from ..refgraph import guard_nodes
from ..replay_plan import Step
from ..size_exprs import size_expr
from ..source import ConstPool, ConstSource, Source, literal
from ..trace import Trace
from .guard import Vars

# -- objects of the call the mock rebuilds ------------------------------------------------------------
# An object the mock rebuilds is the object eager makes: the same exact class, the same contents
# in the same order, the same state besides (a defaultdict's factory, a deque's maxlen, instance
# attributes; a set's whole hash table). ``MockBuilder.value`` decides whether an object can be
# rebuilt so, and how; what it cannot rebuild exactly it refuses (Unsupported: that part runs
# eagerly). The helpers below build with the builtin base's own methods: a subclass's
# ``__init__``/``__setitem__``/``add`` (user code, which may do more) is not run again.


# torch's grad-mode context managers (``torch.no_grad()``, ``torch.enable_grad()``) have a
# ``__new__`` for their use as a bare decorator; called with the class alone it is object's.
_GRAD_CM_NEW = getattr(getattr(getattr(torch.utils, "_contextlib", None), "_NoParamDecoratorContextManager", None),
                       "__new__", object.__new__)


def _rebuild_object(cls, state: dict):
    obj = object.__new__(cls)
    if state:
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


def _plain_layout(cls: type) -> bool:
    """Is all the state of a ``cls`` instance in its ``__dict__`` and slots, so that
    ``object.__new__`` and those give the object eager made? (Python classes only, down to
    ``object``: a builtin base holds state of its own; no ``__new__`` of their own, but for
    torch's grad-mode context managers, whose ``__new__`` given the class alone is object's.
    The metaclass is ``type`` or one written in Python (``ABCMeta``, a library's registry
    metaclass): it shapes the class, not where an instance keeps its state.)"""
    meta = type(cls)
    return (meta is type or is_mutable_class(meta)) \
        and (cls.__new__ is object.__new__ or cls.__new__ is _GRAD_CM_NEW) \
        and all(k is object or is_mutable_class(k) for k in cls.__mro__)


_HEAPTYPE = 1 << 9   # (Py_TPFLAGS_HEAPTYPE)


def _plain_exception(v: Any) -> bool:
    """An exception object never raised (no traceback, cause or context) whose state is its
    ``args``, ``__dict__`` and slots: its builtin base keeps no fields beyond ``BaseException``'s
    (not ``OSError``, ``StopIteration``, ``AttributeError``...: their basic size is larger) and
    no class makes it with a ``__new__`` of its own."""
    if not isinstance(v, BaseException) or v.__traceback__ is not None or v.__cause__ is not None \
            or v.__context__ is not None:
        return False
    cls = type(v)
    native = next(k for k in cls.__mro__ if not k.__flags__ & _HEAPTYPE)
    return native.__basicsize__ == BaseException.__basicsize__ \
        and not any("__new__" in k.__dict__ for k in cls.__mro__ if k.__flags__ & _HEAPTYPE) \
        and (type(cls) is type or bool(type(cls).__flags__ & _HEAPTYPE))


def _rebuild_exception(cls, args: tuple, state: dict):
    obj = BaseException.__new__(cls)
    obj.args = args
    if state:
        obj.__dict__.update(state)
    return obj


def _set_slots(obj, values: list) -> None:
    for member, value in values:
        member.__set__(obj, value)


def _rebuild_function(made: tuple, defaults, closure, kwdefaults, annotations, state: dict):
    """A function made in the call, as MAKE_FUNCTION made it: the code, globals, name, qualified
    name, module and docstring eager's has (``made``), with this call's defaults, cells,
    annotations and attributes."""
    code, globals_, name, qualname, module, doc = made
    fn = types.FunctionType(code, globals_, name, defaults, closure)
    fn.__qualname__ = qualname
    fn.__module__ = module
    fn.__doc__ = doc
    if kwdefaults is not None:
        fn.__kwdefaults__ = kwdefaults
    if annotations:
        fn.__annotations__ = annotations
    if state:
        fn.__dict__.update(state)
    return fn


def _fill_cell(cell, value) -> None:
    cell.cell_contents = value


#: The helpers the generated mock calls to rebuild objects, by the names it calls them.
REBUILD_HELPERS = dict(_rebuild_object=_rebuild_object, _rebuild_exception=_rebuild_exception,
                       _rebuild_mapping=_rebuild_mapping, _rebuild_sequence=_rebuild_sequence, _rebuild_tuple=_rebuild_tuple,
                       _rebuild_deque=_rebuild_deque, _rebuild_set=_rebuild_set, _refill_mapping=_refill_mapping,
                       _set_slots=_set_slots, _rebuild_function=_rebuild_function, _fill_cell=_fill_cell)


class _InputNames:
    """``placeholder name -> variable`` of the graph's inputs, fetched (by the guard) when used."""

    def __init__(self, mb: MockBuilder):
        self.mb = mb

    def __getitem__(self, name: str) -> str:
        for k, (src, _) in enumerate(self.mb.trace.graph.inputs):
            if f"i{k}" == name:
                return self.mb.src(src)
        raise KeyError(name)


class MockBuilder:
    """The mock's code: each value of the run's final state as an expression (a constant, a source
    the guard fetched, a graph output, an object rebuilt), with the lines that build it."""

    def __init__(self, trace: Trace, vars_: Vars, pool: ConstPool):
        self.trace = trace
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

    def _nan(self, v: float) -> str:
        """A NaN: ``in``, ``list.index`` and dict keys find it only as the very object. One from
        outside is that object (its guard is its identity); one the call made is a new object on
        every call, as in eager, the same one wherever the run had the same one."""
        node = self.trace.node(v)
        if node is not None and node.source is not None:
            return self.src(node.source)
        hit = self.memo.get(id(v))
        if hit is None:
            hit = self.memo[id(v)] = self._fresh()
            self.lines.append(f"{hit} = {self.pool.ref(v)} * 1.0")
        return hit

    def value(self, v: Any, depth: int = 0) -> str:
        if depth > 50:
            raise Unsupported("output structure nested too deeply")
        if self.trace.tracks_scalars:
            n = self.trace.scalar_node(v)
            if n is not None:
                return self.graph_output(n)   # a number (or numpy value) read from a tensor: the call's value
        if type(v) is float and v != v:
            return self._nan(v)
        if is_immutable(v) and not (type(v) is tuple and self.trace.holds_scalar(v)) and type(v) is not slice:
            self._no_identity_number(v)
            return literal(v, self.pool)   # (a tuple holding numbers read from tensors is the call's; a slice is made anew)
        hit = self.memo.get(id(v))
        if hit is not None:
            return hit
        node = self.trace.node(v)
        if node is not None and node.source is not None:
            return self.src(node.source)
        if isinstance(v, torch.Tensor):
            n = self.trace.graph.node_of(v)
            if n is None:
                raise Unsupported(f"returns a tensor {tuple(v.shape)} whose computation MagPy did not see")
            if type(v) is not torch.Tensor or not v.__dict__:
                return self.graph_output(n)
            # attributes the call wrote on a tensor it made (`out.tag = "x"`): set on the graph's output
            var = self._fresh()
            self.memo[id(v)] = var
            self.lines.append(f"{var} = {self.graph_output(n)}")
            self.lines.append(f"{var}.__dict__.update({self._state(v, depth)})")
            return var
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
            if self.trace.made_functions.get(id(v)) is v:
                return self._function(v, depth)
            if v.__closure__:
                raise Unsupported(f"returns a closure `{v.__qualname__}` created where MagPy did not follow it")
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
                if self.trace.holds_scalar(v) else self.pool.ref(v)
        elif t is dict:
            e = "{" + ", ".join(f"{self.key(k)}: {self.value(x, depth + 1)}" for k, x in v.items()) + "}"
        elif isinstance(v, (set, frozenset)):
            e = self._set(v, depth)
        elif isinstance(v, dict):
            items = "[" + ", ".join(f"({self.key(k)}, {self.value(x, depth + 1)})" for k, x in v.items()) + "]"
            factory = f", {self.value(v.default_factory, depth + 1)}" if isinstance(v, collections.defaultdict) else ""
            e = f"_rebuild_mapping({self.pool.ref(t)}, {items}, {self._state(v, depth)}{factory})"
        elif isinstance(v, list):
            items = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
            e = f"_rebuild_sequence({self.pool.ref(t)}, {items}, {self._state(v, depth)})"
        elif isinstance(v, collections.deque):
            items = "[" + ", ".join(self.value(x, depth + 1) for x in v) + "]"
            e = f"_rebuild_deque({self.pool.ref(t)}, {items}, {v.maxlen!r}, {self._state(v, depth)})"
        elif _plain_layout(t):
            e = f"_rebuild_object({self.pool.ref(t)}, {self._state(v, depth)})"
        elif _plain_exception(v):   # (returned, not raised: `return NotImplementedError("...")`)
            e = f"_rebuild_exception({self.pool.ref(t)}, {self.value(v.args, depth + 1)}, {self._state(v, depth)})"
        elif t is slice:   # (a slice with a tensor bound, `words[:n]`, held on the stack at a split)
            e = f"{self.pool.ref(slice)}(" + ", ".join(self.value(x, depth + 1) for x in (v.start, v.stop, v.step)) + ")"
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

    def graph_output(self, n) -> str:
        drawn = n.meta.get("magpy_draw") if n.op == "placeholder" else None
        if drawn is not None:
            return drawn.expr()   # a number the mock drew itself
        expr = size_expr(n, self.pool, draws=True) if self.trace.lifted_value_nodes or self.trace.draws else None
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

    def size_code(self, arg) -> str:
        """Code of a draw's argument computed from the call's input sizes (a ``SizedArg``: a
        number, or a range of that length)."""
        parts = [size_expr(n, self.pool) for n in (arg.node, *(arg.range_of or ()))]
        if any(p is None for p in parts):
            raise Unsupported("a random draw's argument is computed from sizes in a way the mock cannot repeat")
        count, *rest = (f"({p(_InputNames(self))})" for p in parts)
        if not rest:
            return count
        start, step = rest
        return f"{self.pool.ref(range)}({start}, {start} + {count} * {step}, {step})"

    def key(self, k) -> str:
        if self.trace.scalar_node(k) is not None:
            raise Unsupported("a number read from a tensor value is a dict key")
        if is_identity_key(k):
            return self.value(k)   # (classes, functions: the very objects, as the program's dict holds them)
        if not is_immutable(k):
            raise Unsupported(f"output dict with a non-constant key of type {type(k).__name__}")
        self._no_identity_number(k)
        return literal(k, self.pool)

    def _no_identity_number(self, v) -> None:
        """The ``id()`` of an object the call made is a new number every call: never a constant."""
        if self.trace.identity_numbers and mentions_number(v, self.trace.identity_numbers):
            raise Unsupported("returns or stores the `id()` of an object created in the call (a new number every call)")

    def _set(self, v, depth) -> str:
        """A set made in the call: its iteration order (and how it grows, pops) depends on the
        history of its table, not only on its items. Rebuilt only where adding its items in
        order to an empty set gives exactly eager's table, with items that are the same on every
        call (constants, numbers read from tensors whose values the record assumes)."""
        t = type(v)
        items = list(v)
        assumed = {id(a[1]) for a in self.trace.assumptions if a[0] == "scalar"}
        if not all(is_immutable(x) and all(id(self.trace.scalar_node(e)) in assumed for e in self.trace.tracked_in(x))
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

    def _function(self, v: types.FunctionType, depth: int) -> str:
        """A function made in the call (a closure, a lambda): a fresh function each call, with the
        code and globals eager's has, and this call's defaults and cells. A cell made in the call
        is made afresh (shared between the functions that share it, filled with its final value
        once all are built: a closure may hold itself); a cell from outside is that cell."""
        cells, fills = [], []
        for name, c in zip(v.__code__.co_freevars, v.__closure__ or ()):
            hit = self.memo.get(id(c))
            if hit is None and self.trace.outside_cells.get(id(c)) is c:
                hit = self.pool.ref(c)
            elif hit is None:
                if self.trace.call_cells.get(id(c)) is not c:
                    raise Unsupported(f"returns a closure `{v.__qualname__}` whose cell `{name}` MagPy "
                                      "cannot tell apart (made where it did not follow the call)")
                hit = self._fresh()
                self.lines.append(f"{hit} = {self.pool.ref(types.CellType)}()")
                self.memo[id(c)] = hit
                fills.append((hit, c))
            cells.append(hit)
        if getattr(v, "__type_params__", ()):
            raise Unsupported(f"returns a generic function `{v.__qualname__}` made in the call")
        defaults = self.value(v.__defaults__, depth + 1)
        kwdefaults = self.value(v.__kwdefaults__, depth + 1)
        annotations = self.value(dict(v.__annotations__), depth + 1) if v.__annotations__ else "None"
        closure = "(" + "".join(c + ", " for c in cells) + ")" if v.__closure__ is not None else "None"
        made = (v.__code__, v.__globals__, v.__name__, v.__qualname__, v.__module__, v.__doc__)
        var = self._fresh()
        self.lines.append(f"{var} = _rebuild_function({self.pool.ref(made)}, {defaults}, {closure}, "
                          f"{kwdefaults}, {annotations}, {self._state(v, depth)})")
        self.memo[id(v)] = var
        for cvar, c in fills:
            try:
                contents = c.cell_contents
            except ValueError:
                continue   # (an unbound variable: the fresh cell is empty too)
            if id(c) in self.trace.param_cells:   # (the argument itself, moved into the cell unread)
                src = self.trace.param_cells[id(c)]
                if src is None:
                    raise Unsupported(f"returns a closure `{v.__qualname__}` over an argument whose cell "
                                      "MagPy cannot tell unchanged")
                self.lines.append(f"_fill_cell({cvar}, {self.src(src)})")
                continue
            self.lines.append(f"_fill_cell({cvar}, {self.value(contents, depth + 1)})")
        return var

    def _state(self, v, depth) -> str:
        d = getattr(v, "__dict__", None) or {}
        return "{" + ", ".join(f"{k!r}: {self.value(x, depth + 1)}" for k, x in d.items()) + "}"


def plan_writes(trace: Trace, mb: MockBuilder, pool: ConstPool, direct_writes: set) -> list[list[str]]:
    """The mock's lines that leave outside objects as the run left them: one or more per step of
    the replay plan (:mod:`magpy.replay_plan`, Algorithm 1 GetMockNodes from the RefGraph's
    versions), in the order the run first changed each object; a list of lines per step (see
    :func:`in_program_order`). ``direct_writes``: ``(node id, name)`` of module attributes
    written through the instance dict (see :func:`magpy.codegen.guard.direct_module_write`)."""
    writes = [_replay_lines(step, mb, pool, direct_writes) for step in trace.replay]
    for var, before in trace.contextvars.values():
        if var.get(NO_VALUE) is not before:
            raise Unsupported(f"leaves context variable {var.name!r} changed")
    return writes


def in_program_order(trace: Trace, writes: list[list[str]], prints: list[str]) -> list[str]:
    """The replayed effects (``prints``, one line each) and the write lines of each replay step
    (``writes``, from :func:`plan_writes`), in the order the run made them. A replayed call can
    raise (``print`` to a closed file, a negative sleep: :func:`magpy.replayed_effects.may_raise`): eager
    then made the changes before it and none after it, and so does the mock. A step whose changes
    lie on both sides of an effect (``with redirect_stdout(buf): print(...)``, ``self.n += 1;
    print(...); self.n += 1``: the mock writes final values, the effect would see the wrong one),
    or a tensor from outside that the graph changes in place after a call that may raise (the
    graph runs first), cannot be ordered so: the record is refused."""
    if not prints:
        return [line for lines in writes for line in lines]
    marks = trace.effect_marks
    raising = [m for m, (fn, _, kw, _) in zip(marks, trace.effects) if effects.may_raise(fn, kw)]
    if raising and trace.mutates_outside:
        # (memory of a tensor from outside changed through a view made in the call: taken to be
        # changed at the last in-place change of anything made in the call)
        made = [i for i, w in enumerate(trace.rg.writes) if w.node is not None and trace.rg.sn[w.node].source is None]
        if made and any(m <= made[-1] for m in raising):
            raise Unsupported("changes a tensor from outside in place through a view after a replayed call "
                              "that may raise (a `print` to a file, a sleep): the graph runs before it")
    slots: list[list[str]] = [[] for _ in range(len(prints) + 1)]
    for step, lines, (lo, hi) in zip(trace.replay, writes, _step_spans(trace)):
        what = step.node.source.describe() if step.node.source is not None else "an object from outside"
        if step.kind == "global":
            what = f"global `{step.key}`"
        elif step.kind == "attr":
            what = f"{what}.{step.key}"
        if any(lo < m <= hi for m in marks):
            # (its final value in either place is not what the call saw, or what eager leaves if
            # the call raises: `with redirect_stdout(buf): print(...)` writes sys.stdout twice)
            raise Unsupported(f"changes {what} both before and after a replayed `print`/logging call")
        if step.kind == "graph" and any(m <= hi for m in raising):
            raise Unsupported(f"changes tensor {what} in place after a replayed call that may raise "
                              "(a `print` to a file, a sleep): the graph runs before it")
        slot = sum(1 for m in marks if m <= lo)
        slots[slot] += lines
    out = slots[0]
    for line, after in zip(prints, slots[1:]):
        out += [line, *after]
    return out


def _step_spans(trace: Trace) -> list[tuple[int, int]]:
    """Per replay step, ``(first, last)`` index in ``trace.rg.writes`` of the changes it makes;
    ``(-1, len(writes))`` where that is not known (a change no event showed, found at the end)."""
    writes = trace.rg.writes
    by_node: dict[int, list[int]] = {}
    for i, w in enumerate(writes):
        if w.node is not None:
            by_node.setdefault(w.node, []).append(i)
    calls_done: dict[int, int] = {}
    unknown = (-1, len(writes))
    spans = []
    for step in trace.replay:
        node = step.node
        found = by_node.get(node.node_id, [])
        if step.kind == "global":
            found = [i for i in found if writes[i].change.kind == "global" and writes[i].change.key == step.key
                     and writes[i].change.holder is step.holder]
        elif step.kind == "attr":
            found = [i for i in found if writes[i].change.kind == "attr" and writes[i].change.key == step.key]
        elif step.kind == "call":
            # (the k-th repeated call of the node: its version's change, by identity)
            k = calls_done.get(node.node_id, 0)
            calls_done[node.node_id] = k + 1
            changes = [v.change for v in node.versions[1:] if v.change.kind == "call"]
            found = [i for i in found if k < len(changes) and writes[i].change is changes[k]]
        if not found or found[-1] >= trace.run_writes:
            spans.append(unknown)
        else:
            spans.append((found[0], found[-1]))
    return spans


def _replay_lines(step: Step, mb: MockBuilder, pool: ConstPool, direct_writes: set) -> list[str]:
    """The mock's lines for one step of the replay plan: the final value each changed reference
    holds, read from the runtime object (paper §4.1)."""
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
        hooked = runs_lookup_hook(obj)
        if is_instance(obj, torch.nn.Module) and not hooked:
            present = name in obj.__dict__ or any(name in obj.__dict__.get(t, {}) for t in
                                                  ("_parameters", "_buffers", "_modules"))
        else:
            present = has_stored_attr(obj, name)
        if (node.node_id, name) in direct_writes:
            return [f"{pool.ref(obj.__dict__)}[{name!r}] = {mb.value(obj.__dict__[name])}"]
        if write_hook(obj, name) in ("__setattr__", "__delattr__"):
            # the class's own __setattr__ ran monitored (its effects are replayed on their own):
            # the store it made is replayed past it, as it made it (`object.__setattr__`)
            own = instance_dict(obj)
            if own is not None and name in own:
                return [f"{pool.ref(object.__setattr__)}({var}, {name!r}, {mb.value(own[name])})"]
            return [f"if {name!r} in {pool.ref(instance_dict)}({var}): {pool.ref(object.__delattr__)}({var}, {name!r})"]
        if present:
            return [f"setattr({var}, {name!r}, {mb.value(stored_attr(obj, name))})"]
        if hooked:   # (whether it is there is asked past the class's hook, which the program's reads run)
            return [f"if {pool.ref(has_stored_attr)}({var}, {name!r}): delattr({var}, {name!r})"]
        return [f"if hasattr({var}, {name!r}): delattr({var}, {name!r})"]
    if step.kind == "call":
        method, margs = step.key, step.args
        if method == "__setitem__":
            return [f"{var}[{mb.key(margs[0])}] = {mb.value(margs[1])}"]
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
        items = ", ".join(f"({mb.key(k)}, {mb.value(x)})" for k, x in obj.items())
        return [f"_refill_mapping({var}, [{items}])"]
    if isinstance(obj, set):
        # Emptied and refilled, a set's table is not the one eager's changes leave (the
        # order it iterates in, where it grows): only changes replayed one by one are exact.
        raise Unsupported(f"changes the set {node.source.describe()} in a way the mock cannot replay exactly")
    if isinstance(obj, collections.deque):
        dq = pool.ref(collections.deque)
        return [f"{dq}.clear({var}); {dq}.extend({var}, [" + ", ".join(mb.value(x) for x in obj) + "])"]
    raise Unsupported(f"cannot reproduce an in-place change of a {type(obj).__name__}")


def replayed_effects(trace: Trace, mb: MockBuilder, pool: ConstPool) -> list[str]:
    """The mock's lines that replay the run's effects (magpy.replayed_effects: print, logging, sleep)."""
    prints = []   # (replayed effects, magpy.replayed_effects: print, logging, sleep)

    def replayed(kind, v):
        return mb.graph_output(v) if kind == "node" else pool.ref(v) if kind == "ref" else mb.value(v)

    if trace.effects and trace.draws and any(fn is time.sleep for fn, *_ in trace.effects):
        raise Unsupported("sleeps in a call that reads the clock (the mock sleeps after the graph)")
    if trace.replay or trace.mutates_outside or trace.mutated:
        # (a warning raises where a filter says "error": eager then made only the changes before
        # it, and the mock makes the changes after replaying it, all or none)
        for fn, *_ in trace.effects:
            if fn is effects.replay_warning:
                raise Unsupported("warns in a call that changes state outside it (a warning the filters "
                                  "turn into an exception would stop eager between the changes)")
    for fn, eargs, ekwargs, where in trace.effects:
        parts = [replayed(*a) for a in eargs]
        kparts = [f"{k}={replayed(*a)}" for k, a in ekwargs.items()]
        if where is None:
            prints.append(f"{pool.ref(fn)}({', '.join(parts + kparts)})")
        else:   # called from a frame that names the user's file, line and function (logging's caller)
            kw = ", ".join(f"{k!r}: {replayed(*a)}" for k, a in ekwargs.items())
            tramp = effects.trampoline(*where)
            prints.append(f"{pool.ref(tramp)}({pool.ref(fn)}, ({''.join(p + ', ' for p in parts)}), {{{kw}}})")
    return prints


def check_plan(trace: Trace) -> None:
    """A tensor changed in place is the graph's to replay; and Algorithm 1 as the check of the
    guard: every object read from outside (GetGuardNodes) must carry a guard on its source."""
    for step in trace.replay:
        if step.kind == "graph" and not trace.graph_mutates:
            raise Unsupported(f"internal: the in-place change of tensor {step.node.source.describe()} is not in the graph")
    for g in trace.guards:
        changed = g.changed_in_place() if isinstance(g, TensorGuard) else None
        if changed is not None:
            raise Unsupported(changed)   # (the batched tensor check reads these from the tensor itself)
    guarded_sources = {g.source for g in trace.guards}
    for node in guard_nodes(trace.rg)[1:]:
        if node.source is not None and not isinstance(node.source, ConstSource) and node.source not in guarded_sources:
            raise Unsupported(f"internal: {node.source.describe()} was read from outside without a guard")
