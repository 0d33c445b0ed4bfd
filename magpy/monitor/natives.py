"""The rules for specific native callables, and the tables that name them (paper Figure 12).

A native function (C code) hides what it does from the monitor. Most natives are described by
their annotation (:mod:`magpy.annotations`); the ones here need a rule of their own, because
what they do to the record depends on their arguments or on state the annotation cannot name:
``functools.partial`` and ``functools.lru_cache`` (:mod:`magpy.monitor.cached_calls`), ``sum`` and ``functools.reduce`` over
tensors, ``max``/``min`` of one-element tensors, the text builtins, random draws and clocks,
numpy on values read from tensors, ``torch.equal``/``torch.allclose``, the legacy tensor
constructors, ``print``/logging/``time.sleep`` (replayed by the mock), ABC checks, context
variables, weak references, ``id``/``hash``/``next``, and natives that are pure by their inputs.

:class:`NativeRules` holds them, a rule object of the monitor run (:mod:`magpy.monitor.rulebook`): the call
decision (:meth:`CallRules.decide_call`) picks the kind of callee and hands the call to one of these.
A handler takes the run's frame state and the :class:`~magpy.callsite.CallSite`, and returns True
when it decided what the call means (it pended a post-instruction callback, or raised
:class:`~magpy.breaks.BreakCompile`), False when the decision goes on to the next kind.
"""
from __future__ import annotations

import abc
import collections
import contextvars
import inspect
import logging
import operator as _operator
import types
from typing import TYPE_CHECKING, Any

import torch

from .. import replayed_effects as effects
from ..annotations import lookup
from ..annotations import torch_ops as T
from ..annotations.builtins import ID_MEMO_CODES
from ..annotations.numpy_ops import NUMPY as NUMPY_PURE
from ..annotations.numpy_ops import NUMPY_MUTATING_METHODS, numpy_annotation
from ..breaks import BreakCompile
from ..graph import Unsupported
from ..guards import is_numeric_array
from ..lifted import LiftedInt
from ..objmodel import DICT_VIEWS, NO_VALUE, SEQUENCE_ITERATORS, is_immutable, is_python_class, peek_items
from ..redraw import DrawSource, as_argument, pinnable
from ..source import AttrSource, ConstSource, DerefSource, ItemSource
from ..tensor_constructors import LEGACY_TENSOR_TYPES, legacy_variable, numbers_only
from . import cached_calls
from .scalars import TEXT_BUILTINS, call_text

if TYPE_CHECKING:
    from ..callsite import CallSite
    from .frame import FrameState

# -- the tables ---------------------------------------------------------------------------------------

#: dict-like constructors and updates whose keyword values are stored, never read.
STORING_CONSTRUCTORS = frozenset({dict, collections.OrderedDict, dict.update, collections.OrderedDict.update})
#: Natives whose tensor arguments are only iterated (their rows taken), never read.
ROW_ITERATORS = frozenset({zip, enumerate, map, filter, list, tuple, iter})

#: Native binary operators a fold may apply to tensors (out-of-place only: no in-place change).
FOLD_OPERATORS = frozenset({_operator.add, _operator.sub, _operator.mul, _operator.truediv, _operator.floordiv,
                            _operator.matmul, _operator.pow, _operator.mod, _operator.and_, _operator.or_,
                            _operator.xor})

CONTEXTVAR_METHODS = frozenset({contextvars.ContextVar.set, contextvars.ContextVar.reset, contextvars.ContextVar.get})

#: Conversions that read a number out of a tensor (``float(t)``).
NUMBER_CONVERSIONS = (float, int, bool)

#: Internal natives that hand back their tensor argument itself outside a functorch transform
#: (``autograd.Function.apply`` calls ``unwrap_if_dead`` on every argument): no operator, so
#: nothing of them belongs in a graph a backend sees (TorchScript cannot compile them).
SAME_TENSOR_NATIVES = frozenset(f for f in (getattr(getattr(torch._C, "_functorch", None), "unwrap_if_dead", None),)
                                if f is not None)

#: Sequence methods that store their arguments (``lst.append(x)``): the argument is moved, not read.
_SEQUENCE_STORES = frozenset({list.append, list.insert, list.extend, collections.deque.append,
                              collections.deque.appendleft})
#: Natives that store or move their arguments without reading their values.
PASSING_NATIVES = _SEQUENCE_STORES | {collections.deque.extend, setattr, len, iter, zip, enumerate, reversed,
                                      isinstance, type, callable, getattr, hasattr}
#: Natives that read only the type of what they are given.
_TYPE_READERS = frozenset({isinstance, type, callable})
#: Container changes replayed by the mock as the same calls (see ``Monitor.log_mutation``).
LOGGED_MUTATIONS = _SEQUENCE_STORES | {set.add, dict.__setitem__}

#: Builtins that on tensors are tensor operators (through the tensor's dunder methods).
TENSOR_PROTOCOL_BUILTINS = frozenset({abs, pow, sum})

try:
    import numpy as _np

    #: numpy functions that make an array of a tensor's values (``np.asarray(t)``).
    NUMPY_FROM_TENSOR = frozenset({_np.asarray, _np.array, _np.ascontiguousarray})
except ImportError:   # pragma: no cover
    NUMPY_FROM_TENSOR = frozenset()

#: ``torch.allclose``'s parameters (a native: no signature to inspect).
_ALLCLOSE_SIGNATURE = inspect.Signature([
    inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("other", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    *(inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
      for k, d in (("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False)))])

# -- questions about a native call ---------------------------------------------------------------------

def is_native_tensor_binop(op) -> bool:
    """A native two-argument operator a fold can record as graph nodes."""
    if op in FOLD_OPERATORS:
        return True
    name = getattr(op, "__name__", "")
    return isinstance(op, types.BuiltinFunctionType) and T.is_torch_function(op) and not name.endswith("_") \
        and name not in T.DATA_DEPENDENT


def identity_hash(v: Any) -> bool:
    """Does ``hash(v)`` come from ``v``'s identity, like ``id(v)`` (``object.__hash__``, tensors)?"""
    return isinstance(v, torch.Tensor) or getattr(type(v), "__hash__", None) is object.__hash__


def text_callee(fn, args: list):
    """``(name, template, arguments)`` when ``fn(*args)`` makes text (``str(v)``, ``repr(v)``,
    ``format(v, spec)``, ``"{:.2f}".format(v)``, ``sep.join(parts)``), else None."""
    for f, name in TEXT_BUILTINS:
        if f is fn:
            return name, "", args
    if type(fn) is types.BuiltinMethodType and type(fn.__self__) is str and fn.__name__ in ("format", "join"):
        return fn.__name__, fn.__self__, args
    if (fn is str.format or fn is str.join) and args and type(args[0]) is str:
        return fn.__name__, args[0], args[1:]
    return None


# -- the rules ------------------------------------------------------------------------------------------

#: Class attributes ``object.__reduce_ex__``, ``copy.copy`` and ``copy.deepcopy`` consult: a class that
#: gains one between calls copies another way.
_COPY_PROTOCOL = ("__reduce_ex__", "__reduce__", "__getstate__", "__setstate__", "__getnewargs_ex__",
                  "__getnewargs__", "__slots__", "__copy__", "__deepcopy__")

class NativeRules:
    """The rules of :meth:`~magpy.monitor.calls.CallRules.decide_call` for specific natives: the handlers of
    their kinds in :data:`~magpy.monitor.calls.FIGURE_12`."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("add_effect", "assume", "check_stateful_iterator", "decide_call", "draw_arguments",
            "from_outside", "full_read", "go_dynamic", "guard_class_attr", "guard_identity",
            "guard_native_iteration", "holds_numpy", "holds_scalar", "is_value_shaped",
            "new_outputs", "node", "numpy_node", "numpy_op", "on_read", "pend", "pend_op",
            "post_new", "post_nothing", "python_node", "read_abc_registries", "read_args",
            "read_tensor_identity", "scalar_node", "shape_is_lifted", "text_op", "to_arg",
            "track_scalar", "unguarded_items", "where")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    def _call_partial(self, fs: FrameState, c: CallSite) -> bool:
        """``partial(f, *a, **k)(*args)``: the call is ``f(*a, *args, **k, **kwargs)``; the bound
        arguments are reached from the (identity-guarded) partial object."""
        fn = c.fn
        self.partial_fields(fn)
        self.decide_call(fs, fn.func, [*fn.args, *c.args], {**fn.keywords, **c.kwargs})
        return True

    def partial_fields(self, p) -> None:
        node = self.node(p)
        if node is None:
            raise BreakCompile("calls a functools.partial of unknown origin")
        if node.source is None:
            return   # made in this call: its fields were seen going in
        # (a partial's fields can be replaced in place, `p.__setstate__(...)` as pickle and copy do:
        # each is reached from the partial, not assumed with its identity)
        self.on_read(p.func, AttrSource(node.source, "func"))
        args_src = AttrSource(node.source, "args")
        self.on_read(p.args, args_src)
        for i, a in enumerate(p.args):
            self.on_read(a, ItemSource(args_src, i))
        self.on_read(p.keywords, AttrSource(node.source, "keywords"))
        self.full_read(p.keywords)   # a dict: changed in place, so its contents are guarded

    def _assume_extremum(self, fs: FrameState, c: CallSite) -> bool:
        """``max(t, 1e-8)`` with one-element tensors among numbers: Python compares them in
        order; each comparison's outcome is assumed, and the result is the argument that won."""
        fn, args = c.fn, c.args
        items = list(args[0]) if len(args) == 1 and type(args[0]) in (list, tuple) else list(args)
        if not any(isinstance(a, torch.Tensor) for a in items) or len(items) > 8 or not all(
                type(a) in (int, float, bool) or (type(a) is torch.Tensor and a.numel() == 1
                                                  and (self.run.graph.node_of(a) is not None or self.from_outside(a)))
                for a in items):
            return False
        cmp = _operator.gt if fn is max else _operator.lt
        best = 0
        for j in range(1, len(items)):
            outcome = bool(cmp(items[j], items[best]))
            node = self.run.graph.call("function", cmp, (self.to_arg(items[j]), self.to_arg(items[best])), {})
            self.assume("truth", node, outcome)
            if outcome:
                best = j
        self.pend(fs, self.post_new, 1, opaque=True)
        return True

    def _replay_effect(self, fs: FrameState, c: CallSite) -> bool:
        """``print(...)`` (to standard output or to a file object from outside), a logging call
        on a logger from outside, ``time.sleep(s)``: the mock makes the same call after the graph
        ran, in program order with the others, with the values the graph computed (a dynamic
        operation replayed instead of splitting the program, :mod:`magpy.replayed_effects`). False if it
        cannot be (the caller goes on: the call is monitored or breaks)."""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        where = None
        if fn is print:
            kw_ok = all(k in ("sep", "end", "flush", "file") for k in kwargs)
            refs = ("file",)
        elif effects.log_call(fn):
            kw_ok = effects.log_kwargs_ok(kwargs)
            refs = ()
            if fn in effects.LOG_METHODS:   # (3.11+ calls a method unbound: Logger.info(log, ...))
                if not args or not isinstance(args[0], logging.Logger):
                    return False
                fn, args = types.MethodType(fn, args[0]), args[1:]
            logger = getattr(fn, "__self__", None)
            if logger is not None:
                if not self.from_outside(logger):
                    return False   # (a logger made in the call: the record could not name it)
                self.guard_identity(logger)
            fs_, offset = self.run.at_instruction
            ins = fs_.instrs.get(offset)
            where = (fs_.code.co_filename, ins.line if ins is not None and ins.line else fs_.frame.f_lineno,
                     fs_.code.co_name)
        elif effects.sleep_call(fn):
            kw_ok = not kwargs
            refs = ()
        else:
            return False
        if not kw_ok:
            return False
        replayed_args = []
        for a in args:
            kind = self.replay_arg(a)
            if kind is None:
                return False
            replayed_args.append(kind)
        replayed_kwargs = {}
        for k, v in kwargs.items():
            if k in refs and v is not None and not is_immutable(v):
                if not self.from_outside(v) or not effects.native_stream(v):
                    return False   # (one whose `write` is Python code may change what the call reads next)
                self.guard_identity(v)   # (the mock writes to this very file object)
                replayed_kwargs[k] = ("ref", v)
                continue
            kind = self.replay_arg(v)
            if kind is None:
                return False
            replayed_kwargs[k] = kind
        self.add_effect((fn, replayed_args, replayed_kwargs, where))
        self.pend(fs, self.post_nothing, None, opaque=True)
        return True

    def replay_arg(self, a):
        """How the mock hands ``a`` to a replayed call: ``("node", fx node)`` for a tensor (a copy the
        graph outputs: it may change the tensor later), ``("value", a)`` for a constant or a value
        the graph computes; None if it cannot."""
        if isinstance(a, torch.Tensor):
            computed = self.run.graph.node_of(a) is not None and not self.from_outside(a)
            if not computed and not self.from_outside(a):
                return None
            if a.requires_grad or type(a) is not torch.Tensor:
                if computed and (type(a) is not torch.Tensor or not self.run.switches.eager_graph):
                    # (a subclass's repr, or the grad_fn it names, could differ: only a graph run op
                    # by op has eager's; a tensor from outside is the very object in the graph)
                    return None
                # its text, made where the program printed (print writes str() of each argument)
                return ("node", self.python_node("function", call_text, ("", "str", self.to_arg(a)), {}))
            return ("node", self.run.graph.call("method", "clone", (self.to_arg(a),), {}))
        if self.scalar_node(a) is not None or is_immutable(a) or (
                type(a) in (tuple, list, torch.Size) and all(is_immutable(e) or self.scalar_node(e) is not None
                                                              for e in a)):
            return ("value", a)   # (numbers and text read from tensors come from the graph)
        return None

    def _get_logger(self, fs: FrameState, c: CallSite) -> bool:
        """``logging.getLogger(__name__)`` inside the program: the registry's logger of that name
        (made on first use, as eager makes it), reached from outside through the registry."""
        self.pend(fs, self._post_get_logger, c.args[0] if c.args else None, opaque=True)
        return True

    def _post_get_logger(self, fs, stack, name):
        logger = stack[-1]
        mod = ConstSource(logging, "logging")
        if logger is logging.root:
            src = AttrSource(mod, "root")
        elif isinstance(logger, logging.Logger) and logging.Logger.manager.loggerDict.get(name) is logger:
            src = ItemSource(AttrSource(AttrSource(AttrSource(mod, "Logger"), "manager"), "loggerDict"), name)
        else:
            raise BreakCompile(f"`logging.getLogger({name!r})` returned a {type(logger).__name__} the registry does not hold")
        self.on_read(logger, src)
        self.guard_identity(logger)

    def _text_call(self, fs: FrameState, c: CallSite) -> bool:
        """``str(v)``, ``repr(v)``, ``format(v, spec)``, ``"{:.2f}".format(v)``, ``sep.join(parts)``
        of values read from tensors, or of a tensor: a text node (``ScalarFlow.text_op``)."""
        name, template, args = c.text
        kwargs = c.kwargs
        if not (self.holds_scalar(args) or self.holds_scalar(kwargs)
                or any(isinstance(a, torch.Tensor) for a in args) and name != "join"):
            return False
        if name == "join" and (kwargs or len(args) != 1 or type(args[0]) not in (list, tuple)):
            return False   # (a generator or another iterable: the join consumes it)
        return self.text_op(fs, call_text, (template, name, *args), kwargs)

    def _start_draw(self, fs: FrameState, c: CallSite) -> bool:
        """A random draw (:meth:`_try_draw`); when it cannot be repeated, the call is decided by
        the next kind, and the ranges it was given count as used (their lengths followed or assumed)."""
        if self._try_draw(fs, c):
            return True
        self.run.loop_watcher.range_used([*c.draw[2], *c.kwargs.values()])   # (not a draw: ranges it takes are used)
        return False

    def _try_draw(self, fs: FrameState, c: CallSite) -> bool:
        """``random.uniform(0.9, 1.1)``, ``np.random.rand()``: the mock draws the number again
        (:mod:`magpy.redraw`), which the rest of the run follows as a graph input. False when
        the draw cannot be repeated (arguments that are not constants, a generator the mock
        cannot reach, a backend whose graph cannot take changing numbers)."""
        fn, kwargs = c.fn, c.kwargs
        gen, name, args = c.draw
        values = [*args, *kwargs.values()]
        if not self.run.switches.redraw_ok or not all(type(a) is LiftedInt or is_immutable(as_argument(a)) for a in values):
            return False   # (a range of a lifted count is immutable: the draw takes it, SizedArg)
        for a in values:
            if type(a) is list:
                self.full_read(a)   # (its items are read: a list from outside is guarded whole)
        fn_node = self.node(fn)
        if gen is None:   # a clock reading: the guarded function itself
            if fn_node is None or fn_node.source is None:
                return False
            self.guard_identity(fn)
            self.pend(fs, self._post_draw, (fn, None, f"time.{name}", (), {}), opaque=True)
            return True
        if getattr(fn, "__self__", None) is gen and fn_node is not None and fn_node.source is not None:
            self.guard_identity(fn)   # (a bound method held outside: `random.random`, `np.random.rand`)
            call = fn
        else:
            gen_node = self.node(gen)
            method = getattr(type(gen), name, None)
            if gen_node is None or gen_node.source is None or method is None:
                return False
            self.guard_identity(gen)
            call = (method, gen)
        label = f"{type(gen).__module__.split('.')[0]}.{name}"
        self.pend(fs, self._post_draw, (call, gen, label, *self.draw_arguments(args, kwargs)), opaque=True)
        return True

    def _post_draw(self, fs, stack, data):
        call, gen, label, args, kwargs = data
        value = stack[-1]
        if type(value) is int or (type(value) is float and self.run.switches.float_inputs_ok):
            src = DrawSource(len(self.run.draws), call, gen, args, kwargs, label, self.where(),
                             after_ops=self.run.graph.op_count)
            self.run.draws.append(src)
            self.track_scalar(fs, stack, self.run.graph.draw_input(value, src))
            return
        if not pinnable(value):
            self.go_dynamic(f"`{label}` drew a {type(value).__name__}, which the mock cannot draw again")
        # Pinned: the record holds for this very value (checked right after the mock draws it).
        pinned = value.copy() if hasattr(value, "copy") and not is_immutable(value) else value
        self.run.draws.append(DrawSource(len(self.run.draws), call, gen, args, kwargs, label, self.where(), (pinned,)))
        self.new_outputs([value])

    def _numpy_call(self, fs: FrameState, c: CallSite) -> bool:
        """A numpy function or method applied to numpy values read from tensors (or
        ``np.asarray(t)``/``np.array(t)`` of a tensor): a graph node (``ScalarFlow.numpy_op``).
        A method that changes the array in place, or ``out=``, is dynamic: the graph's array
        would not see it. (The kind is only picked when values were read from tensors or ``fn``
        makes an array of a tensor.)"""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        if fn in NUMPY_FROM_TENSOR and args and isinstance(args[0], torch.Tensor):
            if not self.run.switches.redraw_ok or len(args) > 2 or any(k not in ("dtype", "copy") for k in kwargs) \
                    or type(args[0]) is not torch.Tensor or args[0].requires_grad:
                return False
            if not (self.run.graph.node_of(args[0]) is not None or self.from_outside(args[0])):
                return False
            self.numpy_op(fs, "function", fn, tuple(args), dict(kwargs))
            return True
        self_ = getattr(fn, "__self__", None)
        bound = self.numpy_node(self_) is not None and not isinstance(fn, types.MethodType)
        if not (bound or self.holds_numpy(args) or self.holds_numpy(kwargs)):
            return False
        name = getattr(fn, "__name__", "")
        if bound and name in NUMPY_MUTATING_METHODS:
            self.go_dynamic(f"changes an array read from tensor values in place (`{name}`)")
        if "out" in kwargs or numpy_annotation(fn) is not NUMPY_PURE or any(
                isinstance(a, torch.Tensor) for a in [*args, *kwargs.values()]):
            return False   # (the caller assumes the values, or the call is dynamic)
        if bound:
            self.numpy_op(fs, "method", name, (self_, *args), dict(kwargs))
        elif type(fn).__name__ == "method_descriptor":
            self.numpy_op(fs, "method", name, tuple(args), dict(kwargs))   # ndarray.mean(a): a.mean()
        else:
            self.numpy_op(fs, "function", fn, tuple(args), dict(kwargs))
        return True

    def start_numpy(self, fs: FrameState, t, args, kwargs: dict) -> bool:
        """``t.numpy()`` (or ``np.asarray(t)``) of a tensor the graph computes or reads: a graph
        node, and the array is followed as a value read from tensors (``ScalarFlow.numpy_op``):
        numpy computations on it stay in the graph, Python reads of it are assumptions. Only with
        backends that serve values that change between calls (eager, Inductor)."""
        if not self.run.switches.redraw_ok or type(t) is not torch.Tensor or t.requires_grad or args \
                or any(k != "force" for k in kwargs) or not (
                self.run.graph.node_of(t) is not None or self.from_outside(t)):
            return False
        self.numpy_op(fs, "method", "numpy", (t,), dict(kwargs))
        return True

    def start_equal(self, fs: FrameState, a, b) -> bool:
        """``torch.equal(a, b)``: False for two shapes (fixed by the guards), else whether every
        element is equal, which the graph computes and the record assumes (magpy.monitor.scalars)."""
        if type(a) is not torch.Tensor or type(b) is not torch.Tensor or any(
                self.shape_is_lifted(t) or self.is_value_shaped(t) for t in (a, b)):
            return False
        if not all(self.run.graph.node_of(t) is not None or self.from_outside(t) for t in (a, b)):
            return False
        if a.shape != b.shape:
            self.pend(fs, self.post_nothing, None, opaque=True)
        else:
            self.pend(fs, self._post_equal, (a, b), opaque=True)
        return True

    def _post_equal(self, fs, stack, data):
        a, b = data
        same = self.run.graph.call("function", _operator.eq, (self.to_arg(a), self.to_arg(b)), {})
        self.assume("truth", self.run.graph.call("method", "all", (same,), {}), bool(stack[-1]))

    def start_allclose(self, fs: FrameState, args: list, kwargs: dict) -> bool:
        """``torch.allclose(a, b, rtol, atol, equal_nan)``: whether ``isclose`` holds everywhere,
        which the graph computes and the record assumes (a convergence test in a ``while`` loop)."""
        try:
            bound = _ALLCLOSE_SIGNATURE.bind(*args, **kwargs).arguments
        except TypeError:
            return False
        a, b = bound["input"], bound["other"]
        opts = {k: bound.get(k, d) for k, d in (("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False))}
        if type(a) is not torch.Tensor or type(b) is not torch.Tensor or any(
                self.shape_is_lifted(t) or self.is_value_shaped(t) for t in (a, b)) \
                or not all(type(v) in (int, float, bool) and self.scalar_node(v) is None for v in opts.values()):
            return False
        if not all(self.run.graph.node_of(t) is not None or self.from_outside(t) for t in (a, b)):
            return False
        self.pend(fs, self._post_allclose, (a, b, opts), opaque=True)
        return True

    def _post_allclose(self, fs, stack, data):
        a, b, opts = data
        close = self.run.graph.call("function", torch.isclose, (self.to_arg(a), self.to_arg(b)), dict(opts))
        self.assume("truth", self.run.graph.call("method", "all", (close,), {}), bool(stack[-1]))

    def passes_numbers_on(self, fn, args: list, kwargs: dict) -> bool:
        """Does calling ``fn`` only pass on the numbers read from tensors among its arguments
        (to monitored Python code, to tensor operators, into containers), never read them?"""
        if isinstance(getattr(fn, "__self__", None), torch.Tensor) or T.tensor_method_name(fn, args) is not None:
            return True   # a tensor method: an operator (magpy.monitor.scalars.shape_safe decides)
        self_ = getattr(fn, "__self__", None)
        if isinstance(fn, types.BuiltinMethodType) and self_ is not None and not isinstance(self_, (types.ModuleType, type)):
            unbound = getattr(type(self_), fn.__name__, None)   # `s.add` -> set.add(s, ...): the
            if unbound is None:                                 # annotation's argument indices
                return False
            fn, args = unbound, [self_, *args]
        owner = getattr(fn, "__objclass__", None)
        if isinstance(self_, (set, frozenset, dict)) or (isinstance(owner, type) and issubclass(owner, (set, frozenset, dict))):
            return False   # a set or dict method hashes (reads) what it is given
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
        if isinstance(fn, (types.FunctionType, torch.nn.Module)) or T.is_torch_function(fn):
            return True   # monitored Python code, or an operator
        if fn in _TYPE_READERS:
            return True   # (`isinstance(s, str)`, `type(s)`, `callable(s)` see only that text is a str)
        if isinstance(fn, type):
            return is_python_class(fn) or fn in (list, tuple) or issubclass(fn, torch.Tensor) \
                or (fn is dict and not args)
        if fn in PASSING_NATIVES:
            # (`len(s)`, `zip(s, ...)` of text made from tensor values reads the text itself, as
            # does `getattr(obj, s)`; only numbers and text inside containers are passed on)
            return fn in _SEQUENCE_STORES or not any(type(a) is str and self.scalar_node(a) is not None
                                                     for a in (*args, *kwargs.values()))
        ann = lookup(fn)
        if ann is not None and ann.value_read is not None:
            return not any(ann.reads(i) and self.holds_scalar(a) for i, a in enumerate(args)) \
                and not any(self.holds_scalar(v) for v in kwargs.values())
        return False

    def _legacy_factory(self, fs: FrameState, c: CallSite) -> bool:
        """``torch.Tensor(2, 3)``, ``torch.FloatTensor([1, 2])``: the factory it amounts to
        (:func:`legacy_factory`), an operator node."""
        factory, fargs, fkwargs = c.legacy
        self.pend_op(fs, "function", factory, fargs, fkwargs, getattr(c.fn, "__name__", "Tensor"))
        return True

    def _variable_detach(self, fs: FrameState, c: CallSite) -> bool:
        """The legacy wrapper: ``Variable(t)`` is a new tensor sharing t's data, without grad."""
        self.pend_op(fs, "method", "detach", [c.args[0]], {}, "detach")
        return True

    def _same_tensor(self, fs: FrameState, c: CallSite) -> bool:
        """A native of :data:`SAME_TENSOR_NATIVES`: its result is checked to be its argument."""
        self.pend(fs, self._post_same_tensor, (c.fn, c.args[0]))
        return True

    def _post_same_tensor(self, fs, stack, data):
        fn, t = data
        if stack[-1] is not t:   # (inside a functorch transform: a wrapper was unwrapped)
            raise BreakCompile(f"`{fn.__name__}` unwrapped a functorch tensor wrapper")

    def _legacy_constructor(self, fs: FrameState, c: CallSite) -> bool:
        """Legacy tensor construction as the graph op it amounts to: ``torch.FloatTensor(data)``
        is ``torch.tensor(data, dtype=float32)``, ``torch.LongTensor(2, 3)`` is an uninitialised
        ``torch.empty``, ``torch.Tensor`` uses the default dtype (guarded global state), and
        ``Variable(t, requires_grad=r)`` is ``t.detach().requires_grad_(r)`` (shares t's data)."""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        name = getattr(fn, "__name__", "Tensor")
        if fn is torch.autograd.Variable:
            if len(args) == 1 and isinstance(args[0], torch.Tensor) and set(kwargs) <= {"requires_grad", "volatile"}:
                self.pend_op(fs, "function", legacy_variable, [args[0], bool(kwargs.get("requires_grad", False))],
                              {}, "Variable")
                return True
            raise BreakCompile("calls `Variable` with arguments MagPy does not translate")
        dtype = LEGACY_TENSOR_TYPES.get(fn) or torch.get_default_dtype()
        extra = {k: v for k, v in kwargs.items() if k == "device"}
        if set(kwargs) - set(extra):
            raise BreakCompile(f"calls `{name}` with keywords {sorted(kwargs)}")
        if not args or all(type(a) is int for a in args) or (len(args) == 1 and type(args[0]) is torch.Size):
            size = tuple(args[0]) if args and type(args[0]) is torch.Size else tuple(args) or (0,)
            self.pend_op(fs, "function", torch.empty, [size], {"dtype": dtype, **extra}, name)
            return True
        data = args[0]
        if len(args) == 1 and type(data) is range:
            data = list(data)
        if len(args) == 1 and (is_numeric_array(data) or (isinstance(data, (list, tuple)) and numbers_only(data))):
            self.read_args([args[0]])
            self.pend_op(fs, "function", torch.tensor, [data], {"dtype": dtype, **extra}, name)
            return True
        shape, e = [], data
        while isinstance(e, (list, tuple)) and len(args) == 1:
            shape.append(len(e))
            e = e[0] if e else None
        if shape and 0 not in shape and T.numbers_or_tensors(data) and T.legacy_reads(T.tensors_in([data], {}), dtype):
            # numpy numbers (baked in as the Python numbers torch reads), one-element tensors (read
            # as numbers): what the list holds is read, and guarded where it came from
            self.read_args([args[0]])
            self.pend_op(fs, "function", T.legacy_tensor, [data, dtype, tuple(shape)], {}, name)
            return True
        raise BreakCompile(f"calls the legacy constructor `{name}` with {type(data).__name__} data")

    def _abc_check(self, fs: FrameState, c: CallSite) -> bool:
        """isinstance/issubclass against an ABC: a function of the (guarded) types and of the
        ABC registries, whose every change (ABC.register) bumps abc.get_cache_token()."""
        self.read_abc_registries(abc, abc.get_cache_token())
        self.pend(fs, self.post_new, 1)
        return True

    def _random_method(self, fs: FrameState, c: CallSite) -> bool:
        """A method of a ``random.Random`` the draw rule did not take: not a pure closure.
        (3.11's PRECALL unpacks bound methods: the function comes with self as args[0].)"""
        self.go_dynamic(f"calls `random.{c.fn.__name__}`, which is not a pure closure (PureClosure=False)")

    def _dereference(self, fs: FrameState, c: CallSite) -> bool:
        """``ref()`` of a weak reference: its target, reached from the reference's source."""
        node = self.node(c.fn)
        if node is not None and node.source is not None:
            self.pend(fs, self._post_deref, DerefSource(node.source))
        elif node is None:
            raise BreakCompile("dereferences a weak reference of unknown origin")
        else:
            self.pend(fs, self.post_new, 1)   # made in this call: its target was seen
        return True

    def _default_reduction(self, fs: FrameState, c: CallSite) -> bool:
        """``obj.__reduce_ex__(4)`` of a plain object (:func:`~magpy.objmodel.default_reduction`):
        a new tuple holding the class and the object's own ``__dict__``, which is read as
        ``obj.__dict__`` is (from outside: its items guarded where read; made in the call: made)."""
        cls = type(c.args[0])
        for name in _COPY_PROTOCOL:
            self.guard_class_attr(cls, name)   # what object.__reduce_ex__ and copy consult, present or absent
        self.pend(fs, self._post_default_reduction, c.args[0])
        return True

    def _set_reduction(self, fs: FrameState, c: CallSite) -> bool:
        """``s.__reduce_ex__(4)`` of a plain set of values (:func:`~magpy.objmodel.set_reduction`):
        the set read whole, in its iteration order, into a new tuple holding a new list."""
        self.full_read(c.args[0])
        self.pend(fs, self._post_set_reduction, None)
        return True

    def _post_set_reduction(self, fs, stack, _):
        reduced = stack[-1]
        self.new_outputs([reduced, reduced[1], reduced[1][0]])

    def _reduction(self, fs: FrameState, c: CallSite) -> bool:
        """Any other reduction of an object (``__slots__``, a ``__getstate__`` or ``__getnewargs__``,
        protocol 0 or 1): C code collects the state, reading attributes and calling Python hooks
        no monitored frame sees."""
        what = type(c.args[0]).__qualname__ if c.args else "object"
        self.go_dynamic(f"reduces a `{what}` (copy, deepcopy or pickle) whose state native code collects "
                        "(slots, a custom `__getstate__`, `__getnewargs__`)")

    def _post_default_reduction(self, fs, stack, obj):
        reduced = stack[-1]
        self.new_outputs([reduced, reduced[1]])
        state = reduced[2]
        node = self.node(obj)
        if node is not None and node.source is not None:
            self.on_read(state, AttrSource(node.source, "__dict__"), ("attr", "__dict__"), node)
        else:
            self.new_outputs([state])

    def _post_deref(self, fs, stack, src):
        self.on_read(stack[-1], src)

    def _hash_of_nan(self, fs: FrameState, c: CallSite) -> bool:
        """A float NaN hashes by the object's identity: equal NaNs read twice hash apart."""
        self.go_dynamic("hashes a NaN: its hash is that of the object, a new one each time it is read")

    def _identity_number(self, fs: FrameState, c: CallSite) -> bool:
        """``id(v)`` (or ``hash(v)`` by identity): a number that stands for ``v`` itself, guarded so;
        the call itself goes on to its annotation."""
        v = c.args[0]
        node = self.node(v)
        if not is_immutable(v) and (node is None or node.source is None):
            # The number of an object made in the call is new on every call, in eager too. Code
            # that keys only its own memo by it (copy.deepcopy's, ID_MEMO_CODES) is followed; the
            # number must still never reach what outlives the call (a memo passed in from outside:
            # a guard keyed by it, a write, an output; reads.add_guard and the mock refuse those).
            if fs.code not in ID_MEMO_CODES:
                self.go_dynamic(f"uses `{c.fn.__name__}()` of an object created in this call (a new number every call)")
            self.run.identity_numbers.add(c.fn(v))
            return False
        if isinstance(v, torch.Tensor):
            # The number stands for this very tensor (a memo key, an f-string key): a tensor
            # from outside is otherwise guarded by its metadata only, and another tensor of
            # the same shape would be served what was kept for this one.
            self.read_tensor_identity(node, v)
        else:
            self.guard_identity(v)
        return False

    def _identity_key(self, fs: FrameState, c: CallSite) -> bool:
        """``id`` (or ``hash``) handed to a native (``sorted(xs, key=id)``, ``map(id, xs)``): it numbers
        objects in C, where no call is seen; an object made in the call gets a new number every
        call, so what the native does with the numbers (an order, a pick) changes from call to call."""
        self.go_dynamic(f"hands `{'id' if id in (*c.args, *c.kwargs.values()) else 'hash'}` to "
                        f"`{getattr(c.fn, '__qualname__', c.fn)}`, which numbers objects in native code "
                        "(a new number every call for an object made in the call)")

    def _next_of_iterator(self, fs: FrameState, c: CallSite) -> bool:
        """``next(it)``: an iterator from outside must be one MagPy can follow; the call goes on."""
        self.check_stateful_iterator(c.args[0], "calls `next` on")
        return False

    def _cached_call(self, fs: FrameState, c: CallSite) -> bool:
        """A ``functools.lru_cache`` function (:func:`magpy.monitor.cached_calls.decide`)."""
        return cached_calls.decide(self.run, fs, c)

    def changed_outside(self) -> bool:
        """Has the run so far changed state that exists outside the call (or replayed an effect)?"""
        return bool(self.run.attr_writes or self.run.global_writes or self.run.cell_writes or self.run.appends or self.run.effects
                    or self.run.mutates_outside or any(self.run.rg.sn[n].source is not None for n in self.run.mutated))

    def _tensor_protocol_builtin(self, fs: FrameState, c: CallSite) -> bool:
        """abs(t) and pow(t, e) call the tensor's own operators (__abs__, __pow__, __rpow__),
        and sum(t) adds its rows: operators the graph runs, with the builtin as target.
        (``sum`` of a container of tensors goes on to the fold.)"""
        fn, args = c.fn, c.args
        if fn is not sum or isinstance(args[0], torch.Tensor):
            self.pend_op(fs, "function", fn, list(args), {}, fn.__name__)
            return True
        return False

    def _sum(self, fs: FrameState, c: CallSite) -> bool:
        """``sum`` folds ``+`` over its items in C: over tensors that is a chain of graph adds.

        The items are the container's elements, or the values a generator yields (collected
        at its YIELD_VALUE instructions while the call runs)."""
        args, kwargs = c.args, c.kwargs
        it = args[0]
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        if isinstance(it, (list, tuple)) and type(it).__iter__ in (list.__iter__, tuple.__iter__):
            self.guard_native_iteration([it])
            self.read_args([it])
            items = list(it)
            self.pend(fs, self._post_sum, (items, start, None))
        elif type(it) in SEQUENCE_ITERATORS:
            self.check_stateful_iterator(it, "sums")
            self.pend(fs, self._post_sum, (peek_items(it), start, None))
        elif type(it) in DICT_VIEWS:
            self.read_args([it.mapping] if self.node(it.mapping) is not None else [])
            self.pend(fs, self._post_sum, (list(it), start, None))   # sum(d.values())
        elif isinstance(it, types.GeneratorType):
            collector: list = []
            self.run.yield_collectors[id(it.gi_frame)] = collector
            self.pend(fs, self._post_sum, (collector, start, it.gi_frame))
        elif isinstance(it, (dict, set, frozenset, collections.deque)):
            self.read_args([it], None, sum)
            self.pend(fs, self.post_new, 1)
        else:
            self._fold_unseen(fs, it)
        return True

    def _fold_unseen(self, fs: FrameState, it) -> None:
        """``sum``/``reduce`` over items the monitor cannot list (an ``array.array``, a ``bytearray``
        from outside: dynamic; a map passed in: its items are not guarded): other iterators go on,
        an unseen tensor result breaks later."""
        self.unguarded_items(it, "folds")
        if hasattr(type(it), "__next__"):
            self.check_stateful_iterator(it, "sums")
        self.pend(fs, self.post_new, 1)

    def _post_sum(self, fs, stack, data):
        items, start, frame = data
        if frame is not None:
            self.run.yield_collectors.pop(id(frame), None)
        out = stack[-1]
        if not isinstance(out, torch.Tensor):
            if any(isinstance(i, torch.Tensor) for i in items):
                self.go_dynamic("`sum` over tensors returned a non-tensor")
            return
        acc = self.to_arg(start)
        for item in items:
            acc = self.run.graph.call("function", _operator.add, (acc, self.to_arg(item)), {})
        if not isinstance(acc, torch.fx.Node):
            raise Unsupported("`sum` produced a tensor MagPy could not follow")
        self.run.graph.bind(out, acc)
        self.new_outputs([out])

    def _reduce(self, fs: FrameState, c: CallSite) -> bool:
        """``functools.reduce(op, items[, initial])`` with a native binary operator (``operator.add``,
        ``torch.mul``...) folds ``op`` in C, where the monitor cannot see it: as for ``sum``, the
        fold becomes a chain of graph nodes over the items (a container's elements, or the values
        a generator yields), bound to the result. A Python ``op`` needs none of this: its frames
        are monitored like any call."""
        args = c.args
        op, it = args[0], args[1]
        start = args[2] if len(args) > 2 else NO_VALUE
        if isinstance(it, (list, tuple)) and type(it).__iter__ in (list.__iter__, tuple.__iter__):
            self.guard_native_iteration([it])
            self.read_args([it])
            self.pend(fs, self._post_fold, (op, list(it), start, None))
        elif type(it) in SEQUENCE_ITERATORS:
            self.check_stateful_iterator(it, "folds")
            self.pend(fs, self._post_fold, (op, peek_items(it), start, None))
        elif isinstance(it, types.GeneratorType):
            collector: list = []
            self.run.yield_collectors[id(it.gi_frame)] = collector
            self.pend(fs, self._post_fold, (op, collector, start, it.gi_frame))
        else:
            self._fold_unseen(fs, it)
        return True

    def _post_fold(self, fs, stack, data):
        op, items, start, frame = data
        if frame is not None:
            self.run.yield_collectors.pop(id(frame), None)
        out = stack[-1]
        if not isinstance(out, torch.Tensor):
            if any(isinstance(i, torch.Tensor) for i in items) or isinstance(start, torch.Tensor):
                self.go_dynamic(f"`functools.reduce` with `{getattr(op, '__name__', op)}` over tensors returned "
                              f"a {type(out).__name__}")
            return
        values = items if start is NO_VALUE else [start, *items]
        if not values:
            raise Unsupported("`functools.reduce` produced a tensor MagPy could not follow")
        acc = self.to_arg(values[0])
        for item in values[1:]:
            acc = self.run.graph.call("function", op, (acc, self.to_arg(item)), {})
        if not isinstance(acc, torch.fx.Node):
            raise Unsupported("`functools.reduce` produced a tensor MagPy could not follow")
        self.run.graph.bind(out, acc)
        self.new_outputs([out])

    def _contextvar(self, fs: FrameState, c: CallSite) -> bool:
        """ContextVar.set/reset inside the call are fine if they leave the variable as found;
        a get before any set in this call reads outside state that cannot be guarded."""
        fn, var = c.fn, c.args[0]
        if fn is contextvars.ContextVar.get and id(var) not in self.run.contextvars:
            self.go_dynamic(f"reads context variable {var.name!r} set outside the call")
        if fn is not contextvars.ContextVar.get and id(var) not in self.run.contextvars:
            self.run.contextvars[id(var)] = (var, var.get(NO_VALUE))
        self.pend(fs, self.post_new, 1)
        return True
