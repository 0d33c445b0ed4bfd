"""The call decision of the monitor run (paper Figure 12): what a call does to the record.

At ``CALL`` / ``CALL_FUNCTION_EX`` the monitor knows the callable and its arguments, and
:meth:`CallRules.decide_call` decides, before the call runs, what it means for the record:

* a Python function, method or class runs *inlined*: its frames are monitored (step 0);
* a tensor method or torch function becomes an operator-graph node (via
  :mod:`magpy.monitor.ops`); an ``nn.Module`` call guards the module's hooks and ``forward``;
* an annotated native function follows its annotation (:mod:`magpy.annotations`, applied by
  :mod:`magpy.monitor.annotated`): PureClosure, AsOpNode, InPlace, Relation (an attribute or item read
  with its source and guard);
* a few natives get their own rule (:mod:`magpy.monitor.natives`): ``functools.partial``, ``sum`` over
  tensors, ``ContextVar`` get/set, ``weakref`` dereference, ``id()``, ``next()``, ABC checks...;
* anything else native ends compilation for this call (step 1) with a break reason.

Figure 12 is a table here: :meth:`CallRules._callee_kinds` walks the checks in their order and
names the *kind* of callee each one recognises; :data:`FIGURE_12` gives the handler of each kind.
The order of the checks is part of the semantics (a tensor method is recognised before a torch
function, an annotation before a Python function...). A handler returns True when it decided
the call, False when the decision goes on to the next kind: a handler may *decline* (a random
draw the mock cannot repeat goes on to the draw's annotation), *note* something and go on (a
watched loop hears of the call, ``id(v)`` guards ``v``), or *restate* the call and go on
(``lst.append`` becomes ``list.append(lst, ...)``, as the annotations name it). The last kind,
an unannotated native, always decides: it breaks.

The call decision is one step of the monitor run, not a stage of its own: every rule reads and
extends the run's state (the RefGraph, guards, the operator graph) and pends a post-instruction
callback that sees the call's result. :class:`CallRules` is a rule object of the run
(:mod:`magpy.monitor.rulebook`); the handlers of the kinds live on it and on the rule objects of
natives (:mod:`magpy.monitor.natives`), annotated callees (:mod:`magpy.monitor.annotated`) and callbacks run from
C (:mod:`magpy.monitor.callbacks`), each found by its name in :data:`FIGURE_12`.
"""
from __future__ import annotations

import _abc
import functools
import logging
import os
import random
import types
import weakref
from typing import TYPE_CHECKING

import torch

from .. import capture
from .. import replayed_effects as effects
from ..annotations import lookup
from ..annotations import torch_ops as T
from ..annotations.builtins import native_attribute_reader, native_writes
from ..annotations.numpy_ops import numpy_annotation
from ..breaks import BreakCompile
from ..callsite import CallSite
from ..compiled_module import CompiledCallable, compiled_target
from ..lifted import LiftedInt
from ..objmodel import (
    builtin_made_exception,
    default_reduction,
    finalizer_reason,
    has_nan,
    has_python_call,
    instance_dict,
    is_immutable,
    is_instance,
    is_python_class,
    lookup_effects,
    module_has_hooks,
    peek_items,
    set_reduction,
)
from ..realtype import callable_attr, class_lookup
from ..redraw import as_draw
from ..source import AttrSource, ItemSource
from ..tensor_constructors import LEGACY_TENSOR_TYPES, legacy_factory, new_parameter, parameter_args
from ..torch_support import autograd_function_class, is_checkpoint, lazy_uninitialized
from . import function_apply
from .annotated import NATIVE_CALLABLES, STATE_GETTERS
from .elements import CALLBACK_ITERATORS, MAP_CONSUMERS, attribute_reader_break
from .natives import (
    CONTEXTVAR_METHODS,
    NUMBER_CONVERSIONS,
    NUMPY_FROM_TENSOR,
    SAME_TENSOR_NATIVES,
    TENSOR_PROTOCOL_BUILTINS,
    identity_hash,
    is_native_tensor_binop,
    text_callee,
)
from .scalars import replace_top

if TYPE_CHECKING:
    from .frame import FrameState

_functools_partial = functools.partial

_HOOK_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                "_forward_hooks_with_kwargs", "_forward_hooks_always_called")


def _script_call(fn, name: str, *bound):
    """A Python function calling TorchScript function or method ``fn`` (with ``bound`` first): the
    graph node's target. (torch.fx would spell the ScriptFunction itself by its class's import
    path, not hold the object.)"""
    def call(*args, **kwargs):
        return fn(*bound, *args, **kwargs)

    call.__name__ = call.__qualname__ = f"script_{name}"
    call.magpy_python = True   # (TorchScript runs as it is: a backend compiles around it, backends.python_nodes)
    return call


def _script_method(fn, args: list):
    """``(callable, bound arguments, the ScriptMethod)`` when calling ``fn(*args)`` runs a method of a
    scripted module: a ScriptMethod itself (``self.forward`` of a ``torch.jit.ScriptModule``), or
    ``ScriptMethod.__call__`` called with one (what a patched ``__call__``, such as
    ``torch.testing``'s profiling wrapper, calls); else None."""
    if type(fn) is torch._C.ScriptMethod:
        return fn, (), fn
    if args and type(args[0]) is torch._C.ScriptMethod and type(fn).__name__ == "instancemethod" \
            and getattr(fn, "__func__", None) is not None and getattr(fn.__func__, "__name__", "") == "__call__":
        return fn, (args[0],), args[0]
    return None


def _instantiates_python_class(fn: object, args: object) -> bool:
    """Is ``fn`` ``type.__call__``, bound to (or called on) a class :func:`is_python_class` accepts?"""
    if callable_attr(fn, "__name__", "") != "__call__":
        return False
    if type(fn).__name__ == "method-wrapper":
        owner = getattr(fn, "__self__", None)
    elif fn is type.__call__ and args:
        owner = args[0]
    else:
        return False
    return isinstance(owner, type) and is_python_class(owner)


#: Figure 12 as a table: each kind of callee, in the order :meth:`CallRules._callee_kinds` checks
#: for it, and the handler (a method of the run) that decides what the call means. The handlers
#: marked "natives" are in :mod:`magpy.monitor.natives`, "annotated" in :mod:`magpy.monitor.annotated`, the rest here.
FIGURE_12 = {
    "native attribute reader": "_native_attribute_reader",   # may decline: objects made in the call only
    "identity key": "_identity_key",                    # natives: dynamic
    "partial": "_call_partial",                         # natives: f(*a, *args) of the partial's fields
    "native map": "_map_natively",                      # never decides: map(torch.relu, xs) made of a Python applier
    "map consumer": "_consume_map",                     # may decline: sum(map(f, xs)), decided after it ran
    "native write": "_note_native_write",               # note: a native that writes, a RefGraph write
    "counted": "_counted_call",                         # may decline: len()/range() of counted loops
    "type of lifted int": "_type_of_lifted",
    "number of tensor": "_number_of_tensor",            # may decline: float(t), int(t), bool(t)
    "extremum": "_assume_extremum",                     # natives, may decline: max(t, 1e-8)
    "len of lifted shape": "_len_of_lifted",
    "replayed effect": "_replay_effect",                # natives, may decline: print, logging, sleep
    "replayed warning": "_replay_warning",              # warnings.warn, repeated by the mock (or dynamic)
    "get logger": "_get_logger",                        # natives
    "text": "_text_call",                               # natives, may decline: str/repr/format/join
    "random draw": "_start_draw",                       # natives, may decline
    "numpy value": "_numpy_call",                       # natives, may decline
    "scalar argument": "_scalar_argument",              # may decline (after an escape check)
    "legacy factory": "_legacy_factory",                # natives: torch.Tensor(2, 3)
    "variable": "_variable_detach",                     # natives: Variable(t)
    "parameter": "_new_parameter",                      # nn.Parameter(t) made in the call
    "same tensor": "_same_tensor",                      # natives: unwrap_if_dead(t) is t
    "bound builtin method": "_unbind_builtin_method",   # restates
    "abc check": "_abc_check",                          # natives
    "type test": "_plain_result",
    "method wrapper": "_unbind_method_wrapper",         # restates
    "random method": "_random_method",                  # natives: dynamic
    "finalizer": "_finalizer",                          # dynamic: code run when an object dies
    "function transform": "_finalizer",                 # dynamic: torch.func's vmap, grad, jacrev...
    "weak reference": "_dereference",                   # natives
    "hash of nan": "_hash_of_nan",                      # natives: dynamic
    "identity number": "_identity_number",              # natives, note: id(v) guards v
    "next": "_next_of_iterator",                        # natives, note
    "default reduction": "_default_reduction",          # natives: copy.deepcopy's __reduce_ex__(4)
    "set reduction": "_set_reduction",                  # natives: deepcopy of a set of values
    "reduction": "_reduction",                          # natives: dynamic (slots, custom __getstate__)
    "checkpoint": "_checkpoint",                        # torch.utils.checkpoint: the function it runs
    "autograd function": "_autograd_function",          # may decline
    "bound method": "_inline",
    "tensor method": "_tensor_method",
    "compiled callable": "_compiled_callable",          # restates
    "script module": "_script_module",
    "module": "_module_call",
    "script method": "_script_method_call",
    "annotated bound method": "_unbind_annotated_method",   # restates
    "torch function": "_torch_function",
    "script function": "_script_function",
    "lru cache": "_cached_call",                        # natives
    "legacy constructor": "_legacy_constructor",        # natives
    "builtin exception": "_plain_result",
    "tensor protocol builtin": "_tensor_protocol_builtin",   # natives, may decline: abs/pow/sum(t)
    "sum": "_sum",                                      # natives
    "reduce": "_reduce",                                # natives
    "python fold": "_python_fold",                      # callbacks (magpy.monitor.callbacks)
    "context variable": "_contextvar",                  # natives
    "state getter": "_state_getter",                    # natives: guarded by the answer
    "torch module class": "_torch_module_class",
    "numpy function": "_numpy_function",                # annotated: numpy's annotation, out= written
    "annotated": "_annotated",                          # annotated: the annotation decides
    "python": "_inline",                                # Figure 12, step 0
    "pure by inputs": "_pure_by_inputs",                # annotated, may decline
    "unannotated native": "_unannotated_native",        # Figure 12, step 1: a break
}


_TRANSFORM_FILES = frozenset(os.path.join(os.path.dirname(torch.__file__), "_functorch", name)
                             for name in ("apis.py", "eager_transforms.py", "vmap.py", "deprecated.py"))


def _function_transform(fn) -> str | None:
    """Why ``fn`` is part of a torch.func transform (``vmap``, ``grad``, ``jacrev``, ``vjp`` and the
    functions they return), or None. Inside one, operators see wrapper tensors (batched, grad
    levels) that a graph of plain operators cannot stand for: the call runs eagerly."""
    code = fn.__code__ if is_instance(fn, types.FunctionType) else None
    if code is not None and code.co_filename in _TRANSFORM_FILES:
        return f"runs a torch.func transform (`{code.co_name}`), which a graph of plain operators cannot hold"
    return None


class CallRules:
    """Figure 12's call decision, a rule object of the monitor run: :meth:`decide_call` runs the
    checks in order and hands the call to the handler of the first kind that decides.

    Each rule either pends a post-instruction callback (``pend``) that sees the call's
    result at the next instruction, or raises :class:`~magpy.breaks.BreakCompile`.
    """

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("add_effect", "assume_tensor_read", "can_assume_read", "from_outside", "go_dynamic",
            "guard_class_attr", "guard_identity", "holds_scalar", "node", "note_write", "on_read",
            "passes_numbers_on", "pend", "pend_op", "post_new", "post_nothing", "read_absent",
            "read_args", "read_module_call", "read_module_hooks", "read_no_hooks", "replay_arg",
            "scalar_call", "scalar_escape", "shape_is_lifted", "start_allclose", "start_equal",
            "start_numpy", "start_scalar_read", "start_size_read", "value_guard")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)
        self.handlers: dict = {}   # kind of callee -> its handler (FIGURE_12)

    def decide_call(self, fs: FrameState, fn, args: list, kwargs: dict) -> None:
        """Decide what calling ``fn(*args, **kwargs)`` means for the record (Figure 12): each kind
        the checks name, in order, goes to its handler until one decides."""
        capture.announce_callee(fn)
        c = CallSite(fn, args, kwargs)
        if type(fn).__hash__ is None:   # (in no table of natives: a torch.distributions transform)
            call = class_lookup(type(fn), "__call__")
            if isinstance(call, types.FunctionType):
                c.fn, c.args = call, [fn, *args]
        handlers = self.handlers or self._find_handlers()
        for kind in self._callee_kinds(c):
            if handlers[kind](fs, c):
                return

    def _find_handlers(self) -> dict:
        """Figure 12's handlers as the rule objects' bound methods (found once all rules are made)."""
        self.handlers = {kind: self.run.bound_rule(name) for kind, name in FIGURE_12.items()}
        return self.handlers

    def _callee_kinds(self, c: CallSite):
        """Figure 12's checks in their order: yields the kind of callee each one recognises (the
        caller runs its handler before the next check runs, so a restated call is checked as
        restated). Ends with "unannotated native", whose handler always decides. The callee's type
        tests ask its real type, ``tp`` (``issubclass``, as :func:`~magpy.objmodel.is_instance`
        does for objects of the program: no lookup on the callee runs its class's hooks)."""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        tp = type(fn)
        c.attribute_reader = native_attribute_reader(fn, args, kwargs)
        if c.attribute_reader is not None:
            yield "native attribute reader"
        if fn is not id and fn is not hash and any(v is id or v is hash for v in (*args, *kwargs.values())):
            yield "identity key"
        if type(fn) is _functools_partial:
            yield "partial"
        if fn is map:
            yield "native map"
        if fn in MAP_CONSUMERS and any(type(a) in CALLBACK_ITERATORS and peek_items(a) is None for a in args):
            yield "map consumer"
        c.writes = native_writes(fn, args)
        if c.writes is not None:
            yield "native write"
        if self.run.loop_watcher.counted or self.run.scalar_nodes:
            yield "counted"
        if fn is type and len(args) == 1 and not kwargs and type(args[0]) is LiftedInt:
            yield "type of lifted int"
        if fn in NUMBER_CONVERSIONS and len(args) == 1 and not kwargs and is_instance(args[0], torch.Tensor):
            yield "number of tensor"
        if fn in (max, min) and not kwargs and args:
            yield "extremum"
        if fn is len and len(args) == 1 and not kwargs and is_instance(args[0], torch.Tensor) \
                and self.shape_is_lifted(args[0]):
            yield "len of lifted shape"
        if fn is print or effects.sleep_call(fn) or effects.log_call(fn):
            yield "replayed effect"
        if effects.warn_call(fn):
            yield "replayed warning"
        if fn is logging.getLogger and not kwargs and len(args) <= 1 and (not args or args[0] is None or type(args[0]) is str):
            yield "get logger"
        c.text = text_callee(fn, args)
        if c.text is not None:
            yield "text"
        c.draw = as_draw(fn, args)
        if c.draw is not None:
            yield "random draw"
        if self.run.scalar_nodes or (fn in NUMPY_FROM_TENSOR and args and is_instance(args[0], torch.Tensor)):
            yield "numpy value"
        if self.run.scalar_nodes and (self.holds_scalar(args) or self.holds_scalar(kwargs) or self.holds_scalar(fn)):
            yield "scalar argument"
        c.legacy = legacy_factory(fn, args, kwargs)
        if c.legacy is not None:
            yield "legacy factory"
        if fn is torch.autograd.Variable and len(args) == 1 and is_instance(args[0], torch.Tensor) \
                and not kwargs.get("requires_grad", False) and not kwargs.get("volatile", False):
            yield "variable"
        if fn is torch.nn.Parameter and self.run.switches.eager_graph and parameter_args(args, kwargs) is not None:
            yield "parameter"
        if fn in SAME_TENSOR_NATIVES and len(args) == 1 and not kwargs and is_instance(args[0], torch.Tensor):
            yield "same tensor"
        if issubclass(tp, types.BuiltinMethodType) and lookup(fn) is None and not issubclass(type(callable_attr(fn, "__self__")), types.ModuleType):
            yield "bound builtin method"
            fn, args = c.fn, c.args
            tp = type(fn)
        if fn is _abc._abc_instancecheck or fn is _abc._abc_subclasscheck:
            yield "abc check"
        if issubclass(tp, types.BuiltinMethodType) and fn.__name__ in ("__instancecheck__", "__subclasscheck__"):
            yield "type test"   # super().__instancecheck__ in a metaclass
        if type(fn).__name__ == "method-wrapper" and callable_attr(fn, "__objclass__") is not None:
            yield "method wrapper"
            fn, args = c.fn, c.args
            tp = type(fn)
        if (issubclass(tp, types.MethodType) and is_instance(fn.__self__, random.Random)) or (
                issubclass(tp, types.FunctionType) and args and is_instance(args[0], random.Random)):
            yield "random method"
        c.finalizer = finalizer_reason(fn, args, kwargs)
        if c.finalizer is None and is_instance(fn, type) and (reason := lookup_effects(fn, made=True)) is not None:
            c.finalizer = f"calls `{fn.__qualname__}`, which {reason}"
        if c.finalizer is not None:
            yield "finalizer"
        c.finalizer = _function_transform(fn)
        if c.finalizer is not None:
            yield "function transform"
        if issubclass(tp, weakref.ref):
            yield "weak reference"
        if fn is hash and len(args) == 1 and has_nan(args[0]):
            yield "hash of nan"
        if (fn is id or (fn is hash and identity_hash(args[0]))) and len(args) == 1:
            yield "identity number"
        if fn is next and args:
            yield "next"
        if fn is object.__reduce_ex__ and default_reduction(args):
            yield "default reduction"
        if fn is object.__reduce_ex__ and set_reduction(args):
            yield "set reduction"
        if fn is object.__reduce_ex__ or fn is object.__reduce__:
            yield "reduction"
        if is_checkpoint(fn):
            yield "checkpoint"
        c.fn_cls = autograd_function_class(fn, args)
        if c.fn_cls is not None:
            yield "autograd function"
        if issubclass(tp, types.MethodType) and is_instance(fn.__self__, type) is False \
                and not is_instance(fn.__self__, torch.Tensor) and lookup(fn) is None and lookup(fn.__func__) is None:
            yield "bound method"
        c.mname = T.tensor_method_name(fn, args)
        if c.mname is not None:
            yield "tensor method"
        if issubclass(tp, CompiledCallable):
            yield "compiled callable"
            fn = c.fn
            tp = type(fn)
        if issubclass(tp, torch.jit.ScriptModule) and type(fn).__call__ is torch.nn.Module.__call__ \
                and not module_has_hooks(fn) and self.from_outside(fn):
            yield "script module"
        if issubclass(tp, torch.nn.Module):
            yield "module"
        c.script = _script_method(fn, args)
        if c.script is not None:
            yield "script method"
        c.ann = lookup(fn)
        if c.ann is None and issubclass(tp, types.MethodType) and lookup(fn.__func__) is not None:
            yield "annotated bound method"
            fn, args = c.fn, c.args
            tp = type(fn)
        if c.ann is None and T.is_torch_function(fn) and not T.python_taking_code(fn, args, kwargs):
            yield "torch function"
        if c.ann is None and issubclass(tp, torch.jit.ScriptFunction):
            yield "script function"
        if issubclass(tp, functools._lru_cache_wrapper):
            yield "lru cache"
        if fn in LEGACY_TENSOR_TYPES or fn is torch.Tensor or fn is torch.autograd.Variable:
            yield "legacy constructor"
        if issubclass(tp, type) and issubclass(fn, BaseException) and not T.tensors_in(args, kwargs) and (
                fn.__module__ == "builtins" or builtin_made_exception(fn)):
            yield "builtin exception"
        if fn in TENSOR_PROTOCOL_BUILTINS and T.tensors_in(args, kwargs) and not kwargs:
            yield "tensor protocol builtin"
        if fn is sum and args:
            yield "sum"
        if fn is functools.reduce and len(args) >= 2 and not kwargs and is_native_tensor_binop(args[0]):
            yield "reduce"
        if fn is functools.reduce and len(args) >= 2 and not kwargs and isinstance(
                getattr(args[0], "__func__", args[0].func if type(args[0]) is functools.partial else args[0]),
                types.FunctionType):
            yield "python fold"
        if fn in CONTEXTVAR_METHODS:
            yield "context variable"
        if fn in STATE_GETTERS and not kwargs and all(is_immutable(a) for a in args):
            yield "state getter"
        if c.ann is None and issubclass(tp, type) and issubclass(fn, torch.nn.Module) \
                and fn.__module__.startswith("torch."):
            yield "torch module class"
        if c.ann is None:
            c.ann = numpy_annotation(fn)
            if c.ann is not None:
                yield "numpy function"
        if c.ann is not None:
            yield "annotated"
        if issubclass(tp, (types.FunctionType, types.MethodType)) or is_python_class(fn) \
                or issubclass(tp, _functools_partial) or has_python_call(fn) \
                or (type(fn).__name__ == "method-wrapper" and getattr(fn, "__name__", "") in ("__init__", "__init_subclass__")) \
                or _instantiates_python_class(fn, args):
            yield "python"
        if issubclass(tp, NATIVE_CALLABLES):
            yield "pure by inputs"
        yield "unannotated native"

    # -- the handlers of the kinds (those of magpy.monitor.natives and magpy.monitor.annotated aside) --------------------

    def _note_native_write(self, fs: FrameState, c: CallSite) -> bool:
        """A native call that may write an object (:func:`~magpy.annotations.builtins.native_writes`) is
        a write in the RefGraph, whatever the object's origin: the dynamic watchers, which ask the
        RefGraph what a stretch of the run wrote, keep a loop unrolled or an arm unmerged for it.
        (How the call is decided goes on: the mock's versions come from the rules that decide it.)"""
        name, obj = c.writes
        self.note_write(obj, "call", name)
        return False

    def _replay_warning(self, fs: FrameState, c: CallSite) -> bool:
        """``warnings.warn(...)``: repeated by the mock (:func:`effects.warning_effect`), or dynamic."""
        try:
            self.add_effect(effects.warning_effect(c, *self.run.at_instruction, self.replay_arg, self.from_outside,
                                                   self.run.frames))
        except effects.OutsideFrame:
            pass   # (shown by this run only, as before warnings were replayed: a known gap, see docs/limits.md)
        except ValueError as e:
            self.go_dynamic(f"calls `warnings.warn`, which {e}: MagPy cannot repeat it through the filters")
        self.pend(fs, self.post_nothing, None, opaque=True)
        return True

    def _counted_call(self, fs: FrameState, c: CallSite) -> bool:
        """``len()`` of a counted sequence, ``range()`` of a tracked count: magpy.dynamic.loops decides."""
        return self.run.loop_watcher.take_call(fs, c.fn, c.args, c.kwargs)

    def _type_of_lifted(self, fs: FrameState, c: CallSite) -> bool:
        """``type()`` of a LiftedInt: the program sees int, as in eager."""
        self.pend(fs, self._post_plain_type, int, opaque=True)
        return True

    def _post_plain_type(self, fs, stack, plain):
        replace_top(fs, stack, plain)

    def _number_of_tensor(self, fs: FrameState, c: CallSite) -> bool:
        """``float(t)``, ``int(t)``, ``bool(t)``: a small tensor from outside is guarded by value; a
        float stays in the graph; any other value read is assumed (magpy.monitor.scalars)."""
        fn, t = c.fn, c.args[0]
        if self.value_guard(t):
            self.pend(fs, self.post_new, 1, opaque=True)
            return True
        if fn is float and self.start_scalar_read(fs, t):
            return True
        return self._start_assumed_read(fs, t, "truth" if fn is bool else "item")

    def _start_assumed_read(self, fs: FrameState, t, kind: str) -> bool:
        """``t``'s value is read into Python next (``int(t)``, ``t.item()``, ``t.tolist()``):
        if the graph computes ``t``, the value read is assumed (checked after the graph runs)."""
        if not self.can_assume_read(t, kind):
            return False
        self.pend(fs, self._post_assumed_read, (t, kind), opaque=True)
        return True

    def _post_assumed_read(self, fs, stack, data):
        t, kind = data
        if not self.assume_tensor_read(t, kind, stack[-1]):
            self.go_dynamic("reads a tensor value into Python")

    def _len_of_lifted(self, fs: FrameState, c: CallSite) -> bool:
        """``len(t)`` of a tensor whose shape the graph takes as an input: a size read (magpy.monitor.scalars)."""
        self.start_size_read(fs, c.args[0], "len")
        return True

    def _scalar_argument(self, fs: FrameState, c: CallSite) -> bool:
        """A number read from tensors among the arguments: a number function of it is a graph node
        (magpy.monitor.scalars); a callee that does more than pass it on reads its exact value, which
        becomes an assumption. Then the decision goes on."""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        if self.scalar_call(fs, fn, args, kwargs):
            return True
        if not self.passes_numbers_on(fn, args, kwargs):
            self.scalar_escape(f"passes to `{getattr(fn, '__qualname__', type(fn).__name__)}`", args, kwargs, fn)
        return False

    def _unbind_builtin_method(self, fs: FrameState, c: CallSite) -> bool:
        """A bound builtin method (``lst.append`` fetched by LOAD_ATTR), restated in the unbound
        form the annotations name (``list.append(lst, ...)``)."""
        self_ = c.fn.__self__
        if isinstance(self_, type):
            # A classmethod of a builtin type called on that type (``dict.fromkeys(keys)``): every
            # access binds anew, so the annotations name the descriptor in the type's namespace.
            descriptor = self_.__dict__.get(c.fn.__name__)
            if descriptor is not None and lookup(descriptor) is not None:
                c.fn, c.args = descriptor, [self_, *c.args]
            return False
        if self_ is not None and not isinstance(self_, torch.Tensor):
            unbound = getattr(type(self_), c.fn.__name__, None)
            if unbound is not None:
                c.fn, c.args = unbound, [self_, *c.args]
        return False

    def _unbind_method_wrapper(self, fs: FrameState, c: CallSite) -> bool:
        """A bound slot wrapper (``x.__eq__``) whose unbound form is annotated: restated so."""
        unbound = getattr(c.fn.__objclass__, c.fn.__name__, None)
        if unbound is not None and lookup(unbound) is not None:
            c.fn, c.args = unbound, [c.fn.__self__, *c.args]
        return False

    def _finalizer(self, fs: FrameState, c: CallSite) -> bool:
        """Code set to run when an object dies (:func:`~magpy.objmodel.finalizer_reason`), or a torch.func transform
        (:func:`_function_transform`): the call runs eagerly (``c.finalizer`` says why)."""
        self.go_dynamic(c.finalizer)

    def _plain_result(self, fs: FrameState, c: CallSite) -> bool:
        """A native whose result is a new value made of what it was given: a type test
        (``super().__instancecheck__`` in a metaclass), a builtin exception made to be raised
        (``raise KeyError(key)`` in a Mapping). Nothing else to record."""
        self.pend(fs, self.post_new, 1)
        return True

    def _inline(self, fs: FrameState, c: CallSite) -> bool:
        """Python code (a function, a bound method, a class, an object with a Python ``__call__``,
        ``type.__call__`` of a Python class): inlined, its frames run monitored (Figure 12, step 0)."""
        self.pend(fs, self.post_new, 1)
        return True

    def _autograd_function(self, fs: FrameState, c: CallSite) -> bool:
        """A custom ``autograd.Function``'s ``apply`` (:func:`magpy.monitor.function_apply.autograd_function`)."""
        return function_apply.autograd_function(self.run, fs, c)

    def _new_parameter(self, fs: FrameState, c: CallSite) -> bool:
        """``nn.Parameter(t)`` in the call (a weight made by an init helper in ``forward``): a graph
        node making the same leaf Parameter, sharing ``t``'s memory (the eager graph only: a
        compiled graph need not hand back Parameter objects)."""
        data, requires_grad = parameter_args(c.args, c.kwargs)
        self.pend_op(fs, "function", new_parameter, [data, requires_grad], {}, "Parameter")
        return True

    def _checkpoint(self, fs: FrameState, c: CallSite) -> bool:
        """``torch.utils.checkpoint.checkpoint(function, *args)`` (:func:`magpy.monitor.function_apply.checkpoint`)."""
        return function_apply.checkpoint(self.run, fs, c)

    def _tensor_method(self, fs: FrameState, c: CallSite) -> bool:
        """A tensor method: an operator node; one that reads tensor values is a value read the
        record can hold (a value guard, a float kept in the graph, an assumption) or dynamic."""
        fn, args, kwargs, mname = c.fn, c.args, c.kwargs, c.mname
        if getattr(fn, "__self__", None) is not None and isinstance(fn.__self__, torch.Tensor):
            args = [fn.__self__, *args]
        if mname in T.DATA_DEPENDENT:
            if mname in T.SCALAR_READS and self.value_guard(args[0]):
                self.pend(fs, self.post_new, 1, opaque=True)
                return True
            if mname in ("item", "__float__") and len(args) == 1 and not kwargs \
                    and self.start_scalar_read(fs, args[0], ints=mname == "item"):
                return True
            if mname == "equal" and len(args) == 2 and not kwargs and self.start_equal(fs, *args):
                return True
            if mname == "allclose" and self.start_allclose(fs, args, kwargs):
                return True
            if mname == "numpy" and self.start_numpy(fs, args[0], args[1:], kwargs):
                return True
            if mname in T.SCALAR_READS and len(args) == 1 and not kwargs and self._start_assumed_read(
                    fs, args[0], "list" if mname == "tolist" else "truth" if mname == "__bool__" else "item"):
                return True
            self.go_dynamic(f"`Tensor.{mname}` reads tensor values")
        if mname in T.SIZE_READS and not kwargs and self.shape_is_lifted(args[0]) \
                and all(type(a) is int for a in args[1:]):
            self.start_size_read(fs, args[0], T.SIZE_READS[mname], tuple(args[1:]))
            return True
        if mname == "new" and len(args) > 1 and (type(args[1]) is torch.Size and len(args) == 2
                                                 or all(type(a) is int for a in args[1:])):
            # Legacy `t.new(size)`: a torch.Size (or ints) means a size, a tuple means data,
            # and the graph's code cannot tell a Size from a tuple: spell it `new_empty`.
            sizes = tuple(args[1]) if type(args[1]) is torch.Size else tuple(args[1:])
            mname, args = "new_empty", [args[0], sizes]
        self.pend_op(fs, "method", mname, args, kwargs, mname)
        return True

    def _compiled_callable(self, fs: FrameState, c: CallSite) -> bool:
        """A compiled callable inside the monitored program runs its target as plain code: the
        call is restated as a call of the target (read from the compiled callable)."""
        fn = c.fn
        node = self.node(fn)
        if node is not None and node.source is not None:
            self.on_read(compiled_target(fn), AttrSource(node.source, "_target", "__dict__"), ("attr", "_target"), node)
        c.fn = compiled_target(fn)
        return False

    def _script_module(self, fs: FrameState, c: CallSite) -> bool:
        """A scripted module (a `torch.jit.ScriptModule` subclass with `script_method`s, or what
        `torch.jit.script` returns): compiled code reading its own parameters and attributes
        when it runs. One operator node that calls the module, identity-guarded (which
        compiled code runs is fixed by the object; it has no Python hooks)."""
        fn = c.fn
        self.guard_identity(fn)
        self.read_no_hooks(self.node(fn).source)
        # (it may change its own buffers: the graph always runs, and is never speculated on)
        self.run.graph_mutates = self.run.mutates_outside = True
        self.pend_op(fs, "function", _script_call(fn, type(fn).__name__), c.args, c.kwargs,
                      f"scripted module {type(fn).__name__}")
        return True

    def _module_call(self, fs: FrameState, c: CallSite) -> bool:
        """``mod(x)``: its hooks and ``forward`` are guarded (:meth:`_call_module`), its frames run monitored.

        A lazy module (``nn.LazyLinear``) not yet built first builds its parameters from this
        input, as its pre-hook does in eager (shapes read, weights drawn, its class changed, the
        hook removed): here, unmonitored, once. No record repeats it; what the run read before
        describes the module as it was (a record no later call matches), what it reads after
        describes the module as it stays."""
        if lazy_uninitialized(c.fn):
            if self.run.other_sides is not None:   # (a run eager never makes must not build them)
                self.run.other_sides.stop(f"it would build the parameters of lazy module {type(c.fn).__name__}")
            c.fn._infer_parameters(c.fn, tuple(c.args), dict(c.kwargs))
        self._call_module(c.fn)
        self.pend(fs, self.post_new, 1)
        return True

    def _script_method_call(self, fs: FrameState, c: CallSite) -> bool:
        """A method of a scripted module (``torch.jit.ScriptModule``): compiled code that reads its
        module's parameters and attributes when it runs (the module is identity-guarded where
        the method was read). One operator node that calls it, as the program does."""
        target, bound, method = c.script
        self.run.graph_mutates = self.run.mutates_outside = True   # (it may change its module's buffers)
        self.pend_op(fs, "function", _script_call(target, method.name, *bound), c.args[len(bound):], c.kwargs,
                      f"script method {method.name}")
        return True

    def _unbind_annotated_method(self, fs: FrameState, c: CallSite) -> bool:
        """A bound method of an annotated Python function (``cm.__exit__``): restated with self as
        argument 0, as the annotation counts its arguments."""
        fn = c.fn
        c.fn, c.args, c.ann = fn.__func__, [fn.__self__, *c.args], lookup(fn.__func__)
        return False

    def _torch_function(self, fs: FrameState, c: CallSite) -> bool:
        """A torch function without an annotation: an operator node; one that reads tensor values
        or the global RNG state is dynamic, but for the value reads the record can assume."""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        name = getattr(fn, "__name__", str(fn))
        if name == "equal" and not kwargs and len(args) == 2 and self.start_equal(fs, *args):
            return True
        if name == "allclose" and self.start_allclose(fs, args, kwargs):
            return True
        if fn is torch.get_rng_state and not args and not kwargs and self.run.switches.eager_graph:
            # The CPU generator's state where the program reads it (a reversible block saving it
            # for its backward): the eager graph runs the random operators before it in program
            # order, so the state it reads is eager's. (Compiled kernels draw otherwise: dynamic.)
            self.pend_op(fs, "function", fn, [], {}, name)
            return True
        if name in T.DATA_DEPENDENT:
            self.go_dynamic(f"`torch.{name}` reads tensor values or global RNG state")
        self.pend_op(fs, "function", fn, args, kwargs, name)
        return True

    def _script_function(self, fs: FrameState, c: CallSite) -> bool:
        """A TorchScript function: tensor code with no access to Python state (what it reads
        of globals was frozen when it was scripted). One operator node that calls it, as
        the eager program does; in-place changes of its inputs show in their versions."""
        fn = c.fn
        self.guard_identity(fn)   # which scripted function runs is that very object
        self.pend_op(fs, "function", _script_call(fn, fn.name), c.args, c.kwargs, f"script function {fn.name}")
        return True

    def _torch_module_class(self, fs: FrameState, c: CallSite) -> bool:
        """torch's own module class: a new object (tensor arguments are kept as buffers or weights,
        e.g. pos_weight=, not read)."""
        self.read_args([a for a in [*c.args, *c.kwargs.values()] if not isinstance(a, torch.Tensor)], None, c.fn)
        self.pend(fs, self.post_new, 1, opaque=True)
        return True

    def _native_attribute_reader(self, fs: FrameState, c: CallSite) -> bool:
        """A native that reads attributes or items in C (``sorted(xs, key=attrgetter('prio'))``):
        a break when it reaches an object from outside (:func:`~magpy.monitor.elements.attribute_reader_break`)."""
        why = attribute_reader_break(self.node, c.fn, c.args, c.kwargs, c.attribute_reader)
        if why is not None:
            raise BreakCompile(why)
        return False

    def _unannotated_native(self, fs: FrameState, c: CallSite) -> bool:
        """Figure 12, step 1: stop here. Reported as unsupported, not as dynamic behaviour: an
        annotation (magpy.annotate) is all the function needs."""
        fn = c.fn
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        raise BreakCompile(f"calls native function `{name}` that has no MagPy annotation")

    def _call_module(self, mod: torch.nn.Module) -> None:
        """``mod(x)`` runs ``Module.__call__`` (hooks, then ``forward``) in frames MagPy skips:
        guard that it still has no hooks, still uses its class's ``__call__`` and that no
        ``forward`` was set on the instance (or that it is still the one set)."""
        node = self.node(mod)
        self.run.uses_modules = True
        if type(mod).__call__ is not torch.nn.Module.__call__:
            return   # a Python __call__ of its own: its frame runs monitored
        own = instance_dict(mod) or {}   # (its hook tables and a `forward` set on it, as Module.__call__ finds them)
        if node is not None and node.source is not None and module_has_hooks(mod):
            # Forward (pre-)hooks run in Module.__call__ (skipped) but their own frames are
            # monitored, and tensors flow through by identity: the record holds while the module
            # has exactly these hooks, in this order. Backward hooks rewrap tensors that require
            # gradients in C (BackwardHookFunction): a break, unless gradients are off, where
            # Module.__call__ leaves every tensor as it is (the record holds for these hooks).
            backward = bool(own.get("_backward_hooks") or own.get("_backward_pre_hooks"))
            if backward and torch.is_grad_enabled():
                raise BreakCompile(f"module {type(mod).__name__} has backward hooks")
            names = _HOOK_TABLES + (("_backward_hooks", "_backward_pre_hooks") if backward else ())
            tables = {name: list(own[name].items()) for name in names if name in own}
            self.read_module_hooks(node, type(mod), tables)
            for name, items in tables.items():
                # The hooks are outside objects with a source (a WeightNorm or SpectralNorm
                # object carries its settings as attributes): their frames, entered from the
                # skipped Module.__call__, read them like any other.
                for key, hook in items:
                    self.on_read(hook, ItemSource(AttrSource(node.source, name, "__dict__"), key))
            if "forward" in own:
                self.on_read(own["forward"], AttrSource(node.source, "forward", "__dict__"))
            else:
                self.read_absent(node, "forward")
                self.guard_class_attr(type(mod), "forward")
        elif node is not None and node.source is not None:
            if "forward" in own:
                self.read_no_hooks(node.source)
                self.on_read(own["forward"], AttrSource(node.source, "forward", "__dict__"))
            else:
                self.read_module_call(node, type(mod))   # also: `__class__` not swapped
                self.guard_class_attr(type(mod), "forward")
        elif module_has_hooks(mod):
            raise BreakCompile(f"module {type(mod).__name__} has hooks")
