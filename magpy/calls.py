"""The call decision of the monitor run (paper Figure 12): what a call does to the record.

At ``CALL`` / ``CALL_FUNCTION_EX`` the monitor knows the callable and its arguments, and
:meth:`CallRules._call` decides, before the call runs, what it means for the record:

* a Python function, method or class runs *inlined*: its frames are monitored (step 0);
* a tensor method or torch function becomes an operator-graph node (via
  :mod:`magpy.tensor_ops`); an ``nn.Module`` call guards the module's hooks and ``forward``;
* an annotated native function follows its annotation (:mod:`magpy.annotations`): PureClosure,
  AsOpNode, InPlace, Relation (an attribute or item read with its source and guard);
* a few natives get their own rule: ``functools.partial``, ``sum`` over tensors,
  ``ContextVar`` get/set, ``weakref`` dereference, ``id()``, ``next()``, ABC checks and custom
  ``autograd.Function``;
* anything else native ends compilation for this call (step 1) with a break reason.

Why a mixin: the call decision is one step of the monitor run, not a stage of its own. Every
rule reads and extends the run's state (the RefGraph, guards, the operator graph) and pends a
post-instruction callback that the run later compares by identity (``Monitor.exception``
tests ``pending[0] == self._post_op``). A separate ``CallRules`` object would reach into all of
``Monitor``'s fields from outside; as a mixin of :class:`~magpy.monitor.Monitor` its rules are
methods of the run itself, and the surface they use is listed on the class.
"""
from __future__ import annotations

import _abc
import abc
import collections
import contextvars
import functools
import inspect
import logging
import operator as _operator
import random
import types
import weakref
from typing import TYPE_CHECKING, Any

import torch

from . import capture, effects
from .annotations import DYNAMIC, Annotation, lookup
from .annotations import torch_ops as T
from .annotations.numpy_ops import NUMPY as NUMPY_PURE
from .annotations.numpy_ops import NUMPY_MUTATING_METHODS, numpy_annotation
from .breaks import BreakCompile
from .graph import OpGraph, Unsupported
from .guards import (
    AbcTokenGuard,
    AbsentGuard,
    HasAttrGuard,
    IdGuard,
    ModuleCallGuard,
    ModuleHooksGuard,
    NoHooksGuard,
    PresentGuard,
    is_numeric_array,
)
from .objmodel import (
    DICT_VIEWS,
    NO_VALUE,
    SEQUENCE_ITERATORS,
    attr_location,
    has_python_call,
    is_immutable,
    is_python_class,
    module_has_hooks,
    operator_lookups,
    peek_items,
    relation_present,
)
from .redraw import DrawSource, as_argument, as_draw, pinnable
from .refgraph import RefGraph
from .scalars import TEXT_BUILTINS, LiftedInt, _replace_top, call_text, delift
from .source import AttrSource, ConstSource, DerefSource, ItemSource

if TYPE_CHECKING:
    from .monitor import FrameState

_functools_partial = functools.partial
def _legacy_constructor(fn, args: list, kwargs: dict):
    """``torch.Tensor(2, 3)``, ``torch.FloatTensor([1, 2])``, ``torch.cuda.LongTensor(n)``: the
    typed constructors of old code, as the factory they amount to (``torch.empty`` for sizes,
    ``torch.tensor`` for data), or None when the call is something else."""
    if fn is torch.Tensor:
        dtype, device = torch.get_default_dtype(), "cpu"
    elif type(fn).__name__ == "tensortype":
        dtype, device = fn.dtype, ("cuda" if fn.is_cuda else "cpu")
    else:
        return None
    if kwargs or not args:
        return None
    if all(type(a) is int for a in args) or (len(args) == 1 and type(args[0]) is torch.Size):
        sizes = tuple(args[0]) if type(args[0]) is torch.Size else tuple(args)
        return torch.empty, [sizes], {"dtype": dtype, "device": device}
    if len(args) == 1 and type(args[0]) in (list, tuple) and _numbers(args[0]):
        return torch.tensor, [args[0]], {"dtype": dtype, "device": device}
    return None


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


# Builtins that compare their elements, or the results of a ``key=`` function when given one.
#: dict-like constructors and updates whose keyword values are stored, never read.
_STORING_CONSTRUCTORS = frozenset({dict, collections.OrderedDict, dict.update, collections.OrderedDict.update})
#: Natives whose tensor arguments are only iterated (their rows taken), never read.
_ROW_ITERATORS = frozenset({zip, enumerate, map, filter, list, tuple, iter})
_KEYED_READERS = frozenset({sorted, min, max, list.sort})

# Native binary operators a fold may apply to tensors (out-of-place only: no in-place change).
_FOLD_OPERATORS = frozenset({_operator.add, _operator.sub, _operator.mul, _operator.truediv, _operator.floordiv,
                             _operator.matmul, _operator.pow, _operator.mod, _operator.and_, _operator.or_,
                             _operator.xor})


def _is_native_tensor_binop(op) -> bool:
    """A native two-argument operator a fold can record as graph nodes."""
    if op in _FOLD_OPERATORS:
        return True
    name = getattr(op, "__name__", "")
    return isinstance(op, types.BuiltinFunctionType) and T.is_torch_function(op) and not name.endswith("_") \
        and name not in T.DATA_DEPENDENT


def _numbers(v, depth: int = 0) -> bool:
    if type(v) in (list, tuple):
        return depth < 8 and all(_numbers(e, depth + 1) for e in v)
    return type(v) in (int, float, bool)


_HOOK_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                "_forward_hooks_with_kwargs", "_forward_hooks_always_called")
_FUNCTION_APPLY = torch.autograd.Function.apply.__func__

_CONTEXTVAR_METHODS = frozenset({contextvars.ContextVar.set, contextvars.ContextVar.reset, contextvars.ContextVar.get})

# Tensor methods that read a value into Python: fine for a small value-guarded tensor.
_SCALAR_READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__index__"})

_NUMBER_CONVERSIONS = (float, int, bool)
# Tensor methods that read its shape, by what magpy.scalars calls the read.
_SIZE_READS = {"size": "size", "numel": "numel", "nelement": "numel", "__len__": "len"}

# Natives that store or move their arguments without reading their values.
_PASSING_NATIVES = frozenset({list.append, list.insert, list.extend, collections.deque.append,
                              collections.deque.appendleft, collections.deque.extend, setattr, len, iter,
                              zip, enumerate, reversed, isinstance, type, callable, getattr, hasattr})

# Container changes replayed by the mock as the same calls (see ``Monitor._log_mutation``).
_LOGGED_MUTATIONS = frozenset({list.append, list.insert, list.extend, collections.deque.append,
                               collections.deque.appendleft, set.add, dict.__setitem__})


def _identity_hash(v: Any) -> bool:
    """Does ``hash(v)`` come from ``v``'s identity, like ``id(v)`` (``object.__hash__``, tensors)?"""
    return isinstance(v, torch.Tensor) or getattr(type(v), "__hash__", None) is object.__hash__


def _hash_of_nan(v: Any, depth: int = 0) -> bool:
    """Is there a float NaN in ``v`` (a number, or a tuple/frozenset of them) for ``hash`` to see?"""
    if type(v) is float or type(v) is complex:
        return v != v
    if depth < 4 and isinstance(v, (tuple, frozenset)):
        return any(_hash_of_nan(e, depth + 1) for e in v)
    return False


def _announce_callee(fn) -> None:
    """Tell the capture which Python function runs in the frame that comes next (3.10's frames
    do not record it; see ``capture.announce_call``)."""
    if capture._announce is None:
        return
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    elif isinstance(fn, type):
        fn = fn.__dict__.get("__init__") or getattr(fn, "__init__", None)
    elif isinstance(fn, torch.nn.Module):
        fn = fn.__dict__.get("forward") or getattr(type(fn), "forward", None)
    elif not isinstance(fn, types.FunctionType):
        fn = type(fn).__dict__.get("__call__") or getattr(type(fn), "__call__", None)  # noqa: B004
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        capture.announce_call(fn)


def announce_operator(symbol: str, a, b) -> None:
    """Tell the capture which Python functions an operator ``a <symbol> b`` may enter from C
    (3.10; see ``capture.announce_call``): the left operand's dunder, the right one's reflected
    dunder and, for ``x op= y``, the in-place dunder. Functions that share one code object but
    are different objects (``setattr(C, name, lambda ..., m=name: ...)`` for several names) are
    not announced: the frame alone could not say which one runs, so it stays unknown."""
    if capture._announce is None:
        return
    found = [getattr(type(v), name, None) for v, names in operator_lookups(symbol, a, b) for name in names]
    by_code: dict = {}
    for fn in found:
        if isinstance(fn, types.FunctionType):
            by_code.setdefault(fn.__code__, set()).add(fn)
    for fns in by_code.values():
        if len(fns) == 1:
            capture.announce_call(next(iter(fns)))
        else:
            capture.announce_unknown(next(iter(fns)).__code__)   # (and forget an earlier announcement)


try:
    import numpy as _np

    #: numpy functions that make an array of a tensor's values (``np.asarray(t)``).
    _NUMPY_FROM_TENSOR = frozenset({_np.asarray, _np.array, _np.ascontiguousarray})
except ImportError:   # pragma: no cover
    _NUMPY_FROM_TENSOR = frozenset()
#: ndarray methods that change the array in place.
_NUMPY_MUTATING = NUMPY_MUTATING_METHODS

#: ``torch.allclose``'s parameters (a native: no signature to inspect).
_ALLCLOSE_SIGNATURE = inspect.Signature([
    inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("other", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    *(inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
      for k, d in (("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False)))])

#: Native callables (functions, methods, slot wrappers) that :meth:`CallRules._pure_by_inputs` may run.
_NATIVE_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodDescriptorType,
                     types.WrapperDescriptorType, types.MethodWrapperType, types.ClassMethodDescriptorType)
#: Modules whose natives have effects or results beyond their arguments (clock, files, processes,
#: threads, random numbers, the interpreter's own state): never run as pure by their inputs.
_EFFECTFUL_MODULES = frozenset({
    "os", "posix", "nt", "time", "random", "_random", "secrets", "socket", "select", "selectors", "io", "_io",
    "sys", "gc", "threading", "_thread", "signal", "subprocess", "_posixsubprocess", "multiprocessing",
    "_multiprocessing", "ctypes", "_ctypes", "mmap", "faulthandler", "tracemalloc", "resource", "datetime",
    "_datetime", "uuid", "_uuid", "atexit", "weakref", "_weakref", "warnings", "_warnings", "importlib", "_imp",
    "marshal", "pickle", "_pickle", "builtins", "torch", "numpy", "logging", "shutil", "tempfile", "fcntl",
    "termios", "pty", "_signal", "asyncio", "_asyncio", "queue", "_queue", "ssl", "_ssl", "sqlite3", "_sqlite3",
    "zoneinfo", "locale", "_locale", "getpass", "pwd", "grp", "platform", "_osx_support", "webbrowser",
    "psutil", "_psutil_linux", "pynvml", "GPUtil",
})
#: Names of natives that change state rather than compute (``cv2.setNumThreads(2)``): never pure.
_SETTER_PREFIXES = ("set", "seed", "reset", "clear", "register", "enable", "disable", "push", "pop", "add",
                    "write", "flush", "update", "put", "init", "load", "save", "open", "close", "start", "stop")
_RE_PATTERN = type(__import__("re").compile(""))
_RE_MATCH = type(__import__("re").match("", ""))


def _constant_input(v) -> bool:
    """An input a native can only read as a constant: an immutable value, a class, a compiled
    regular expression or a match of one, or an instance of a subclass of str/bytes/int/float (``torch.__version__``
    is a ``TorchVersion``), which the caller guards by identity when it comes from outside."""
    return is_immutable(v) or isinstance(v, (type, _RE_PATTERN, _RE_MATCH)) or (
        isinstance(v, (str, bytes, int, float)) and not isinstance(v, (bool, torch.Tensor)))

#: Builtins that on tensors are tensor operators (through the tensor's dunder methods).
_TENSOR_PROTOCOL_BUILTINS = frozenset({abs, pow, sum})

#: Legacy typed tensor classes (``torch.FloatTensor``) and the dtype each constructs.
_LEGACY_TENSOR_TYPES = {getattr(torch, n): d for n, d in (
    ("FloatTensor", torch.float32), ("DoubleTensor", torch.float64), ("HalfTensor", torch.float16),
    ("BFloat16Tensor", torch.bfloat16), ("ByteTensor", torch.uint8), ("CharTensor", torch.int8),
    ("ShortTensor", torch.int16), ("IntTensor", torch.int32), ("LongTensor", torch.int64),
    ("BoolTensor", torch.bool)) if hasattr(torch, n)}


def legacy_variable(data: torch.Tensor, requires_grad: bool = False) -> torch.Tensor:
    """``Variable(data, requires_grad=r)``: a new leaf sharing ``data``'s memory."""
    return data.detach().requires_grad_(requires_grad)


def _numbers_only(data, depth: int = 0) -> bool:
    if depth > 8:
        return False
    return all(type(e) in (int, float, bool) or (isinstance(e, (list, tuple)) and _numbers_only(e, depth + 1))
               for e in data)


def _instantiates_python_class(fn: object, args: object) -> bool:
    """Is ``fn`` ``type.__call__``, bound to (or called on) a class :func:`is_python_class` accepts?"""
    if getattr(fn, "__name__", "") != "__call__":
        return False
    if type(fn).__name__ == "method-wrapper":
        owner = getattr(fn, "__self__", None)
    elif fn is type.__call__ and args:
        owner = args[0]
    else:
        return False
    return isinstance(owner, type) and is_python_class(owner)


class CallRules:
    """Figure 12's call decision, as methods of the monitor run (mixed into ``Monitor``).

    The host provides the run's state (``rg``, ``graph``, ``mutated``, ``attr_writes``,
    ``yield_collectors``, ``contextvars``, ``uses_modules``) and its helpers: ``node``,
    ``add_guard``, ``on_read``, ``full_read``, ``_read_args``, ``_guard_identity``,
    ``_guard_class_attr``, ``_mutate``, ``_log_mutation``, ``_check_stateful_iterator``,
    ``_unguarded_items``, ``_guard_attr_precedence``, ``_new_outputs``, ``_dynamic``, ``_pend`` with
    the posts ``_post_new``/``_post_nothing``,
    and ``_pend_op``/``to_arg`` from :class:`~magpy.tensor_ops.OpRecorder`.

    Each rule either pends a post-instruction callback (``_pend``) that sees the call's
    result at the next instruction, or raises :class:`~magpy.breaks.BreakCompile`.
    """

    rg: RefGraph
    graph: OpGraph
    mutated: set[int]
    attr_writes: dict[int, dict[str, object]]
    yield_collectors: dict[int, list]
    contextvars: dict[int, tuple]
    uses_modules: bool

    def _replay_effect(self, fs: FrameState, fn, args: list, kwargs: dict) -> bool:
        """``print(...)`` (to standard output or to a file object from outside), a logging call
        on a logger from outside, ``time.sleep(s)``: the mock makes the same call after the graph
        ran, in program order with the others, with the values the graph computed (a dynamic
        operation replayed instead of splitting the program, :mod:`magpy.effects`). False if it
        cannot be (the caller goes on: the call is monitored or breaks)."""
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
                if not self._from_outside(logger):
                    return False   # (a logger made in the call: the record could not name it)
                self._guard_identity(logger)
            fs_, offset = self._at
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
            kind = self._replayed(a)
            if kind is None:
                return False
            replayed_args.append(kind)
        replayed_kwargs = {}
        for k, v in kwargs.items():
            if k in refs and v is not None and not is_immutable(v):
                if not self._from_outside(v):
                    return False
                self._guard_identity(v)   # (the mock writes to this very file object)
                replayed_kwargs[k] = ("ref", v)
                continue
            kind = self._replayed(v)
            if kind is None:
                return False
            replayed_kwargs[k] = kind
        self.effects.append((fn, replayed_args, replayed_kwargs, where))
        self._pend(fs, self._post_nothing, None, opaque=True)
        return True

    def _text_call(self, fs: FrameState, fn, args: list, kwargs: dict) -> bool:
        """``str(v)``, ``repr(v)``, ``format(v, spec)``, ``"{:.2f}".format(v)``, ``sep.join(parts)``
        of values read from tensors, or of a tensor: a text node (``ScalarFlow.text_op``)."""
        name = next((n for f, n in TEXT_BUILTINS if f is fn), None)
        if name is not None:
            template = ""
        elif type(fn) is types.BuiltinMethodType and type(fn.__self__) is str and fn.__name__ in ("format", "join"):
            name, template = fn.__name__, fn.__self__
        elif (fn is str.format or fn is str.join) and args and type(args[0]) is str:
            name, template, args = fn.__name__, args[0], args[1:]
        else:
            return False
        if not (self.holds_scalar(args) or self.holds_scalar(kwargs)
                or any(isinstance(a, torch.Tensor) for a in args) and name != "join"):
            return False
        if name == "join" and (kwargs or len(args) != 1 or type(args[0]) not in (list, tuple)):
            return False   # (a generator or another iterable: the join consumes it)
        return self.text_op(fs, call_text, (template, name, *args), kwargs)

    def _post_plain_type(self, fs, stack, plain):
        _replace_top(fs, stack, plain)

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
        self._guard_identity(logger)

    def _replayed(self, a):
        """How the mock hands ``a`` to a replayed call: ``("node", fx node)`` for a tensor (a copy the
        graph outputs: it may change the tensor later), ``("value", a)`` for a constant or a value
        the graph computes; None if it cannot."""
        if isinstance(a, torch.Tensor):
            computed = self.graph.node_of(a) is not None and not self._from_outside(a)
            if not computed and not self._from_outside(a):
                return None
            if a.requires_grad or type(a) is not torch.Tensor:
                if computed and (type(a) is not torch.Tensor or not self.eager_graph):
                    # (a subclass's repr, or the grad_fn it names, could differ: only a graph run op
                    # by op has eager's; a tensor from outside is the very object in the graph)
                    return None
                # its text, made where the program printed (print writes str() of each argument)
                return ("node", self.python_node("function", call_text, ("", "str", self.to_arg(a)), {}))
            return ("node", self.graph.call("method", "clone", (self.to_arg(a),), {}))
        if self.scalar_node(a) is not None or is_immutable(a) or (
                type(a) in (tuple, list, torch.Size) and all(is_immutable(e) or self.scalar_node(e) is not None
                                                              for e in a)):
            return ("value", a)   # (numbers and text read from tensors come from the graph)
        return None

    def _pure_by_inputs(self, fn, args: list, kwargs: dict) -> bool:
        """An unannotated native whose every input is a guarded constant (numbers, strings, tuples of
        them, classes, a compiled regular expression) and that belongs to no module with outside
        effects (clock, files, processes, random) computes a function of guarded values: it runs
        as it is, its result is a value of the record (``Pattern.search`` parsing a version
        string, ``str.maketrans``). A native that receives anything mutable, or a tensor, does not."""
        if not isinstance(fn, _NATIVE_CALLABLES):
            return False
        self_ = getattr(fn, "__self__", None)
        owner = self_ if isinstance(self_, (types.ModuleType, type)) else type(self_) if self_ is not None \
            else getattr(fn, "__objclass__", None)
        module = getattr(fn, "__module__", None) or getattr(owner, "__module__", None) \
            or getattr(owner, "__name__", None) or ""
        if module.split(".")[0] in _EFFECTFUL_MODULES or getattr(fn, "__name__", "").lstrip("_").startswith(_SETTER_PREFIXES):
            return False
        if not (self_ is None or isinstance(self_, types.ModuleType) or _constant_input(self_)):
            return False
        if not all(_constant_input(a) for a in [*args, *kwargs.values()]):
            return False
        for v in (self_, *args, *kwargs.values()):
            self._guard_identity(v)   # (which pattern, class or version string the native is given)
        return True

    def _start_draw(self, fs: FrameState, fn, draw: tuple, kwargs: dict) -> bool:
        """``random.uniform(0.9, 1.1)``, ``np.random.rand()``: the mock draws the number again
        (:mod:`magpy.redraw`), which the rest of the run follows as a graph input. False when
        the draw cannot be repeated (arguments that are not constants, a generator the mock
        cannot reach, a backend whose graph cannot take changing numbers)."""
        gen, name, args = draw
        values = [*args, *kwargs.values()]
        if not self.redraw_ok or not all(is_immutable(as_argument(a)) for a in values):
            return False
        if self.holds_scalar(args) or self.holds_scalar(kwargs):
            # a followed number as an argument (a lifted `self.p`): the draw depends on its exact value
            self.scalar_escape("passes to a random draw", args, kwargs)
        for a in values:
            if type(a) is list:
                self.full_read(a)   # (its items are read: a list from outside is guarded whole)
        fn_node = self.node(fn)
        if gen is None:   # a clock reading: the guarded function itself
            if fn_node is None or fn_node.source is None:
                return False
            self._guard_identity(fn)
            self._pend(fs, self._post_draw, (fn, None, f"time.{name}", (), {}), opaque=True)
            return True
        if getattr(fn, "__self__", None) is gen and fn_node is not None and fn_node.source is not None:
            self._guard_identity(fn)   # (a bound method held outside: `random.random`, `np.random.rand`)
            call = fn
        else:
            gen_node = self.node(gen)
            method = getattr(type(gen), name, None)
            if gen_node is None or gen_node.source is None or method is None:
                return False
            self._guard_identity(gen)
            call = (method, gen)
        label = f"{type(gen).__module__.split('.')[0]}.{name}"
        self._pend(fs, self._post_draw, (call, gen, label, tuple(as_argument(delift(a)) for a in args),
                                         {k: as_argument(delift(v)) for k, v in kwargs.items()}), opaque=True)
        return True

    def _post_draw(self, fs, stack, data):
        call, gen, label, args, kwargs = data
        value = stack[-1]
        if type(value) is int or (type(value) is float and self.float_inputs_ok):
            src = DrawSource(len(self.draws), call, gen, args, kwargs, label, self.where(),
                             after_ops=self.graph.op_count)
            self.draws.append(src)
            self.track_scalar(fs, stack, self.graph.draw_input(value, src))
            return
        if not pinnable(value):
            self._dynamic(f"`{label}` drew a {type(value).__name__}, which the mock cannot draw again")
        # Pinned: the record holds for this very value (checked right after the mock draws it).
        pinned = value.copy() if hasattr(value, "copy") and not is_immutable(value) else value
        self.draws.append(DrawSource(len(self.draws), call, gen, args, kwargs, label, self.where(), (pinned,)))
        self._new_outputs([value])

    def _start_equal(self, fs: FrameState, a, b) -> bool:
        """``torch.equal(a, b)``: False for two shapes (fixed by the guards), else whether every
        element is equal, which the graph computes and the record assumes (magpy.scalars)."""
        if type(a) is not torch.Tensor or type(b) is not torch.Tensor or any(
                self.shape_is_lifted(t) or self.is_value_shaped(t) for t in (a, b)):
            return False
        if not all(self.graph.node_of(t) is not None or self._from_outside(t) for t in (a, b)):
            return False
        if a.shape != b.shape:
            self._pend(fs, self._post_nothing, None, opaque=True)
        else:
            self._pend(fs, self._post_equal, (a, b), opaque=True)
        return True

    def _post_equal(self, fs, stack, data):
        a, b = data
        same = self.graph.call("function", _operator.eq, (self.to_arg(a), self.to_arg(b)), {})
        self.assume("truth", self.graph.call("method", "all", (same,), {}), bool(stack[-1]))

    def _start_allclose(self, fs: FrameState, args: list, kwargs: dict) -> bool:
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
        if not all(self.graph.node_of(t) is not None or self._from_outside(t) for t in (a, b)):
            return False
        self._pend(fs, self._post_allclose, (a, b, opts), opaque=True)
        return True

    def _post_allclose(self, fs, stack, data):
        a, b, opts = data
        close = self.graph.call("function", torch.isclose, (self.to_arg(a), self.to_arg(b)), dict(opts))
        self.assume("truth", self.graph.call("method", "all", (close,), {}), bool(stack[-1]))

    def _start_numpy(self, fs: FrameState, t, args, kwargs: dict) -> bool:
        """``t.numpy()`` (or ``np.asarray(t)``) of a tensor the graph computes or reads: a graph
        node, and the array is followed as a value read from tensors (``ScalarFlow.numpy_op``):
        numpy computations on it stay in the graph, Python reads of it are assumptions. Only with
        backends that serve values that change between calls (eager, Inductor)."""
        if not self.redraw_ok or type(t) is not torch.Tensor or t.requires_grad or args \
                or any(k != "force" for k in kwargs) or not (
                self.graph.node_of(t) is not None or self._from_outside(t)):
            return False
        self.numpy_op(fs, "method", "numpy", (t,), dict(kwargs))
        return True

    def _numpy_call(self, fs: FrameState, fn, args: list, kwargs: dict) -> bool:
        """A numpy function or method applied to numpy values read from tensors (or
        ``np.asarray(t)``/``np.array(t)`` of a tensor): a graph node (``ScalarFlow.numpy_op``).
        A method that changes the array in place, or ``out=``, is dynamic: the graph's array
        would not see it."""
        if not self.scalar_nodes and not (fn in _NUMPY_FROM_TENSOR and args and isinstance(args[0], torch.Tensor)):
            return False
        if fn in _NUMPY_FROM_TENSOR and args and isinstance(args[0], torch.Tensor):
            if not self.redraw_ok or len(args) > 2 or any(k not in ("dtype", "copy") for k in kwargs) \
                    or type(args[0]) is not torch.Tensor or args[0].requires_grad:
                return False
            if not (self.graph.node_of(args[0]) is not None or self._from_outside(args[0])):
                return False
            self.numpy_op(fs, "function", fn, tuple(args), dict(kwargs))
            return True
        self_ = getattr(fn, "__self__", None)
        bound = self.numpy_node(self_) is not None and not isinstance(fn, types.MethodType)
        if not (bound or self.holds_numpy(args) or self.holds_numpy(kwargs)):
            return False
        name = getattr(fn, "__name__", "")
        if bound and name in _NUMPY_MUTATING:
            self._dynamic(f"changes an array read from tensor values in place (`{name}`)")
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

    def _start_assumed_read(self, fs: FrameState, t, kind: str) -> bool:
        """``t``'s value is read into Python next (``int(t)``, ``t.item()``, ``t.tolist()``):
        if the graph computes ``t``, the value read is assumed (checked after the graph runs)."""
        if not self.can_assume_read(t, kind):
            return False
        self._pend(fs, self._post_assumed_read, (t, kind), opaque=True)
        return True

    def _post_assumed_read(self, fs, stack, data):
        t, kind = data
        if not self.assume_tensor_read(t, kind, stack[-1]):
            self._dynamic("reads a tensor value into Python")

    def _assume_extremum(self, fs: FrameState, fn, args: list) -> bool:
        """``max(t, 1e-8)`` with one-element tensors among numbers: Python compares them in
        order; each comparison's outcome is assumed, and the result is the argument that won."""
        items = list(args[0]) if len(args) == 1 and type(args[0]) in (list, tuple) else list(args)
        if not any(isinstance(a, torch.Tensor) for a in items) or len(items) > 8 or not all(
                type(a) in (int, float, bool) or (type(a) is torch.Tensor and a.numel() == 1
                                                  and (self.graph.node_of(a) is not None or self._from_outside(a)))
                for a in items):
            return False
        cmp = _operator.gt if fn is max else _operator.lt
        best = 0
        for j in range(1, len(items)):
            outcome = bool(cmp(items[j], items[best]))
            node = self.graph.call("function", cmp, (self.to_arg(items[j]), self.to_arg(items[best])), {})
            self.assume("truth", node, outcome)
            if outcome:
                best = j
        self._pend(fs, self._post_new, 1, opaque=True)
        return True

    def _passes_numbers_on(self, fn, args: list, kwargs: dict) -> bool:
        """Does calling ``fn`` only pass on the numbers read from tensors among its arguments
        (to monitored Python code, to tensor operators, into containers), never read them?"""
        if isinstance(getattr(fn, "__self__", None), torch.Tensor) or T.tensor_method_name(fn, args) is not None:
            return True   # a tensor method: an operator (magpy.scalars.shape_safe decides)
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
        if isinstance(fn, type):
            return is_python_class(fn) or fn in (list, tuple) or issubclass(fn, torch.Tensor) \
                or (fn is dict and not args)
        if fn in _PASSING_NATIVES:
            return True
        ann = lookup(fn)
        if ann is not None and ann.value_read is not None:
            return not any(ann.reads(i) and self.holds_scalar(a) for i, a in enumerate(args)) \
                and not any(self.holds_scalar(v) for v in kwargs.values())
        return False

    def _call(self, fs: FrameState, fn, args: list, kwargs: dict) -> None:
        """Decide what calling ``fn(*args, **kwargs)`` means for the record (Figure 12)."""
        _announce_callee(fn)
        if type(fn) is _functools_partial:
            # partial(f, *a, **k)(*args): the call is f(*a, *args, **k, **kwargs); the bound
            # arguments are reached from the (identity-guarded) partial object.
            self._partial_fields(fn)
            self._call(fs, fn.func, [*fn.args, *args], {**fn.keywords, **kwargs})
            return
        if self.active_loops:
            self.loop_call_event(fn, args)   # (a call that writes an object keeps a loop unrolled)
        if self.branch_active:
            self.branch_call_event(fn, args)   # (... and makes a branch's arm unclean)
        if (self.counted or self.scalar_nodes) and self.loop_call(fs, fn, args, kwargs):
            return   # (len() of a counted sequence, range() of a tracked count: magpy.loops)
        if fn is type and len(args) == 1 and not kwargs and type(args[0]) is LiftedInt:
            # type() of a LiftedInt: the program sees int, as in eager
            self._pend(fs, self._post_plain_type, int, opaque=True)
            return
        if fn in _NUMBER_CONVERSIONS and len(args) == 1 and not kwargs and isinstance(args[0], torch.Tensor):
            # float(t), int(t), bool(t): a small tensor from outside is guarded by value; a float
            # stays in the graph; any other value read is assumed (magpy.scalars)
            if self._value_guard(args[0]):
                self._pend(fs, self._post_new, 1, opaque=True)
                return
            if fn is float and self.start_scalar_read(fs, args[0]):
                return
            if self._start_assumed_read(fs, args[0], "truth" if fn is bool else "item"):
                return
        if fn in (max, min) and not kwargs and args and self._assume_extremum(fs, fn, args):
            return
        if fn is len and len(args) == 1 and not kwargs and isinstance(args[0], torch.Tensor) \
                and self.shape_is_lifted(args[0]):
            self.start_size_read(fs, args[0], "len")
            return
        if (fn is print or effects.sleep_call(fn) or effects.log_call(fn)) and self._replay_effect(fs, fn, args, kwargs):
            return
        if fn is logging.getLogger and not kwargs and len(args) <= 1 and (not args or args[0] is None or type(args[0]) is str):
            # `logging.getLogger(__name__)` inside the program: the registry's logger of that name
            # (made on first use, as eager makes it), reached from outside through the registry.
            self._pend(fs, self._post_get_logger, args[0] if args else None, opaque=True)
            return
        if self._text_call(fs, fn, args, kwargs):
            return
        draw = as_draw(fn, args)
        if draw is not None and self._start_draw(fs, fn, draw, kwargs):
            return
        if self._numpy_call(fs, fn, args, kwargs):
            return
        if self.scalar_nodes and (self.holds_scalar(args) or self.holds_scalar(kwargs) or self.holds_scalar(fn)):
            if self.scalar_call(fs, fn, args, kwargs):
                return
            if not self._passes_numbers_on(fn, args, kwargs):
                self.scalar_escape(f"passes to `{getattr(fn, '__qualname__', type(fn).__name__)}`", args, kwargs, fn)
        legacy = _legacy_constructor(fn, args, kwargs)
        if legacy is not None:
            factory, fargs, fkwargs = legacy
            self._pend_op(fs, "function", factory, fargs, fkwargs, getattr(fn, "__name__", "Tensor"))
            return
        if fn is torch.autograd.Variable and len(args) == 1 and isinstance(args[0], torch.Tensor) \
                and not kwargs.get("requires_grad", False) and not kwargs.get("volatile", False):
            # The legacy wrapper: `Variable(t)` is a new tensor sharing t's data, without grad.
            self._pend_op(fs, "method", "detach", [args[0]], {}, "detach")
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
        if fn is hash and len(args) == 1 and _hash_of_nan(args[0]):
            # (a float NaN hashes by the object's identity: equal NaNs read twice hash apart)
            self._dynamic("hashes a NaN: its hash is that of the object, a new one each time it is read")
        if (fn is id or (fn is hash and _identity_hash(args[0]))) and len(args) == 1:
            node = self.node(args[0])
            if not is_immutable(args[0]) and (node is None or node.source is None):
                self._dynamic(f"uses `{fn.__name__}()` of an object created in this call (a new number every call)")
            if isinstance(args[0], torch.Tensor):
                # The number stands for this very tensor (a memo key, an f-string key): a tensor
                # from outside is otherwise guarded by its metadata only, and another tensor of
                # the same shape would be served what was kept for this one.
                self.add_guard(IdGuard(node.source, args[0]))
            else:
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
        if fn_cls is not None and isinstance(getattr(fn_cls, "forward", None), types.FunctionType):
            # Its forward runs monitored; apply (C) hands back what forward returned, or a fresh
            # view of it for an input returned as is: bound in the post from forward's return.
            code = fn_cls.forward.__code__
            collector: list = []
            self.return_collectors[code] = collector
            self._pend(fs, self._post_function_apply, (code, collector))
            return
        if isinstance(fn, types.MethodType) and isinstance(fn.__self__, type) is False \
                and not isinstance(fn.__self__, torch.Tensor) and lookup(fn) is None and lookup(fn.__func__) is None:
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
                if mname in ("item", "__float__") and len(args) == 1 and not kwargs \
                        and self.start_scalar_read(fs, args[0]):
                    return
                if mname == "equal" and len(args) == 2 and not kwargs and self._start_equal(fs, *args):
                    return
                if mname == "allclose" and self._start_allclose(fs, args, kwargs):
                    return
                if mname == "numpy" and self._start_numpy(fs, args[0], args[1:], kwargs):
                    return
                if mname in _SCALAR_READS and len(args) == 1 and not kwargs and self._start_assumed_read(
                        fs, args[0], "list" if mname == "tolist" else "truth" if mname == "__bool__" else "item"):
                    return
                self._dynamic(f"`Tensor.{mname}` reads tensor values")
            if mname in _SIZE_READS and not kwargs and self.shape_is_lifted(args[0]) \
                    and all(type(a) is int for a in args[1:]):
                self.start_size_read(fs, args[0], _SIZE_READS[mname], tuple(args[1:]))
                return
            if mname == "new" and len(args) > 1 and (type(args[1]) is torch.Size and len(args) == 2
                                                     or all(type(a) is int for a in args[1:])):
                # Legacy `t.new(size)`: a torch.Size (or ints) means a size, a tuple means data,
                # and the graph's code cannot tell a Size from a tuple: spell it `new_empty`.
                sizes = tuple(args[1]) if type(args[1]) is torch.Size else tuple(args[1:])
                mname, args = "new_empty", [args[0], sizes]
            self._pend_op(fs, "method", mname, args, kwargs, mname)
            return
        if type(fn).__module__ == "magpy.api" and hasattr(fn, "_target"):
            # A compiled callable inside the monitored program runs its target as plain code.
            node = self.node(fn)
            if node is not None and node.source is not None:
                self.on_read(fn._target, AttrSource(node.source, "_target", "__dict__"), ("attr", "_target"), node)
            fn = fn._target
        if isinstance(fn, torch.jit.ScriptModule) and type(fn).__call__ is torch.nn.Module.__call__ \
                and not module_has_hooks(fn) and self._from_outside(fn):
            # A scripted module (a `torch.jit.ScriptModule` subclass with `script_method`s, or what
            # `torch.jit.script` returns): compiled code reading its own parameters and attributes
            # when it runs. One operator node that calls the module, identity-guarded (which
            # compiled code runs is fixed by the object; it has no Python hooks).
            self._guard_identity(fn)
            self.add_guard(NoHooksGuard(self.node(fn).source))
            # (it may change its own buffers: the graph always runs, and is never speculated on)
            self.graph_mutates = self.mutates_outside = True
            self._pend_op(fs, "function", _script_call(fn, type(fn).__name__), args, kwargs,
                          f"scripted module {type(fn).__name__}")
            return
        if isinstance(fn, torch.nn.Module):
            self._call_module(fn)
            self._pend(fs, self._post_new, 1)
            return
        script = _script_method(fn, args)
        if script is not None:
            # A method of a scripted module (``torch.jit.ScriptModule``): compiled code that reads its
            # module's parameters and attributes when it runs (the module is identity-guarded where
            # the method was read). One operator node that calls it, as the program does.
            target, bound, method = script
            self.graph_mutates = self.mutates_outside = True   # (it may change its module's buffers)
            self._pend_op(fs, "function", _script_call(target, method.name, *bound), args[len(bound):], kwargs,
                          f"script method {method.name}")
            return
        ann = lookup(fn)
        if ann is None and isinstance(fn, types.MethodType) and lookup(fn.__func__) is not None:
            # a bound method of an annotated Python function (`cm.__exit__`): self is argument 0
            fn, args, ann = fn.__func__, [fn.__self__, *args], lookup(fn.__func__)
        if ann is None and T.is_torch_function(fn):
            name = getattr(fn, "__name__", str(fn))
            if name == "equal" and not kwargs and len(args) == 2 and self._start_equal(fs, *args):
                return
            if name == "allclose" and self._start_allclose(fs, args, kwargs):
                return
            if fn is torch.get_rng_state and not args and not kwargs and self.eager_graph:
                # The CPU generator's state where the program reads it (a reversible block saving it
                # for its backward): the eager graph runs the random operators before it in program
                # order, so the state it reads is eager's. (Compiled kernels draw otherwise: dynamic.)
                self._pend_op(fs, "function", fn, [], {}, name)
                return
            if name in T.DATA_DEPENDENT:
                self._dynamic(f"`torch.{name}` reads tensor values or global RNG state")
            self._pend_op(fs, "function", fn, args, kwargs, name)
            return
        if ann is None and isinstance(fn, torch.jit.ScriptFunction):
            # A TorchScript function: tensor code with no access to Python state (what it reads
            # of globals was frozen when it was scripted). One operator node that calls it, as
            # the eager program does; in-place changes of its inputs show in their versions.
            self._guard_identity(fn)   # which scripted function runs is that very object
            self._pend_op(fs, "function", _script_call(fn, fn.name), args, kwargs, f"script function {fn.name}")
            return
        if isinstance(fn, functools._lru_cache_wrapper):
            self._cached_call(fs, fn, args, kwargs)
            return
        if fn in _LEGACY_TENSOR_TYPES or fn is torch.Tensor or fn is torch.autograd.Variable:
            self._legacy_constructor(fs, fn, args, kwargs)
            return
        if isinstance(fn, type) and issubclass(fn, BaseException) and fn.__module__ == "builtins" \
                and not T.tensors_in(args, kwargs):
            # A builtin exception made to be raised (`raise KeyError(key)` in a Mapping): a new
            # object holding its arguments, nothing else.
            self._pend(fs, self._post_new, 1)
            return
        if fn in _TENSOR_PROTOCOL_BUILTINS and T.tensors_in(args, kwargs) and not kwargs:
            # abs(t) and pow(t, e) call the tensor's own operators (__abs__, __pow__, __rpow__),
            # and sum(t) adds its rows: operators the graph runs, with the builtin as target.
            if fn is not sum or isinstance(args[0], torch.Tensor):
                self._pend_op(fs, "function", fn, list(args), {}, fn.__name__)
                return
        if fn is sum and args:
            self._sum(fs, args, kwargs)
            return
        if fn is functools.reduce and len(args) >= 2 and not kwargs and _is_native_tensor_binop(args[0]):
            self._reduce(fs, args)
            return
        if fn is functools.reduce and len(args) >= 2 and not kwargs \
                and isinstance(getattr(args[0], "__func__", args[0]), types.FunctionType):
            # A Python fold function runs monitored on each item: the items and the initial value
            # are passed to it, not read by reduce itself.
            self._read_args([a for a in args[1:] if not isinstance(a, torch.Tensor)], None, fn)
            self._pend(fs, self._post_new, 1)
            return
        if fn in _CONTEXTVAR_METHODS:
            self._contextvar(fs, fn, args)
            return
        if ann is None and isinstance(fn, type) and issubclass(fn, torch.nn.Module) \
                and fn.__module__.startswith("torch."):
            # (tensor arguments are kept as buffers or weights, e.g. pos_weight=, not read)
            self._read_args([a for a in [*args, *kwargs.values()] if not isinstance(a, torch.Tensor)], None, fn)
            self._pend(fs, self._post_new, 1, opaque=True)   # torch's own module class: a new object
            return
        if ann is None:
            ann = numpy_annotation(fn)
            if ann is not None and kwargs.get("out") is not None:
                for out in kwargs["out"] if isinstance(kwargs["out"], tuple) else (kwargs["out"],):
                    self._mutate(out)   # a ufunc's out= array is written in place
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
        if _instantiates_python_class(fn, args):
            # ``type.__call__(cls, ...)`` / a metaclass's ``super().__call__(...)``: creating an
            # instance whose ``__new__``/``__init__`` are Python, as calling ``cls`` does.
            self._pend(fs, self._post_new, 1)
            return
        if self._pure_by_inputs(fn, args, kwargs):
            self._pend(fs, self._post_new, 1, opaque=True)
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
        elif type(it) in SEQUENCE_ITERATORS:
            self._check_stateful_iterator(it, "sums")
            self._pend(fs, self._post_sum, (peek_items(it), start, None))
        elif type(it) in DICT_VIEWS:
            self._read_args([it.mapping] if self.node(it.mapping) is not None else [])
            self._pend(fs, self._post_sum, (list(it), start, None))   # sum(d.values())
        elif isinstance(it, types.GeneratorType):
            collector: list = []
            self.yield_collectors[id(it.gi_frame)] = collector
            self._pend(fs, self._post_sum, (collector, start, it.gi_frame))
        elif isinstance(it, (dict, set, frozenset, collections.deque)):
            self._read_args([it], None, sum)
            self._pend(fs, self._post_new, 1)
        else:
            self._unguarded_items(it, "folds")   # (an array.array, a bytearray from outside: dynamic)
            self._pend(fs, self._post_new, 1)   # other iterators: an unseen tensor result breaks later

    def _reduce(self, fs, args) -> None:
        """``functools.reduce(op, items[, initial])`` with a native binary operator (``operator.add``,
        ``torch.mul``...) folds ``op`` in C, where the monitor cannot see it: as for ``sum``, the
        fold becomes a chain of graph nodes over the items (a container's elements, or the values
        a generator yields), bound to the result. A Python ``op`` needs none of this: its frames
        are monitored like any call."""
        op, it = args[0], args[1]
        start = args[2] if len(args) > 2 else NO_VALUE
        if isinstance(it, (list, tuple)):
            self._read_args([it])
            self._pend(fs, self._post_fold, (op, list(it), start, None))
        elif type(it) in SEQUENCE_ITERATORS:
            self._check_stateful_iterator(it, "folds")
            self._pend(fs, self._post_fold, (op, peek_items(it), start, None))
        elif isinstance(it, types.GeneratorType):
            collector: list = []
            self.yield_collectors[id(it.gi_frame)] = collector
            self._pend(fs, self._post_fold, (op, collector, start, it.gi_frame))
        else:
            self._unguarded_items(it, "folds")   # (an array.array, a bytearray from outside: dynamic)
            self._pend(fs, self._post_new, 1)   # other iterators: an unseen tensor result breaks later

    def _post_fold(self, fs, stack, data):
        op, items, start, frame = data
        if frame is not None:
            self.yield_collectors.pop(id(frame), None)
        out = stack[-1]
        if not isinstance(out, torch.Tensor):
            if any(isinstance(i, torch.Tensor) for i in items) or isinstance(start, torch.Tensor):
                self._dynamic(f"`functools.reduce` with `{getattr(op, '__name__', op)}` over tensors returned "
                              f"a {type(out).__name__}")
            return
        values = items if start is NO_VALUE else [start, *items]
        if not values:
            raise Unsupported("`functools.reduce` produced a tensor MagPy could not follow")
        acc = self.to_arg(values[0])
        for item in values[1:]:
            acc = self.graph.call("function", op, (acc, self.to_arg(item)), {})
        if not isinstance(acc, torch.fx.Node):
            raise Unsupported("`functools.reduce` produced a tensor MagPy could not follow")
        self.graph.bind(out, acc)
        self._new_outputs([out])

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
        if node is not None and node.source is not None and module_has_hooks(mod):
            # Forward (pre-)hooks run in Module.__call__ (skipped) but their own frames are
            # monitored, and tensors flow through by identity: the record holds while the module
            # has exactly these hooks, in this order. Backward hooks rewrap tensors that require
            # gradients in C (BackwardHookFunction): a break, unless gradients are off, where
            # Module.__call__ leaves every tensor as it is (the record holds for these hooks).
            backward = bool(mod._backward_hooks or mod._backward_pre_hooks)
            if backward and torch.is_grad_enabled():
                raise BreakCompile(f"module {type(mod).__name__} has backward hooks")
            names = _HOOK_TABLES + (("_backward_hooks", "_backward_pre_hooks") if backward else ())
            tables = {name: list(getattr(mod, name).items()) for name in names if hasattr(mod, name)}
            self.add_guard(ModuleHooksGuard(node.source, type(mod), tables))
            for name, items in tables.items():
                # The hooks are outside objects with a source (a WeightNorm or SpectralNorm
                # object carries its settings as attributes): their frames, entered from the
                # skipped Module.__call__, read them like any other.
                for key, hook in items:
                    self.on_read(hook, ItemSource(AttrSource(node.source, name, "__dict__"), key))
            if "forward" in mod.__dict__:
                self.on_read(mod.__dict__["forward"], AttrSource(node.source, "forward", "__dict__"))
            else:
                self.add_guard(AbsentGuard(node.source, "forward"))
                self._guard_class_attr(type(mod), "forward")
        elif node is not None and node.source is not None:
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
            if fn is torch.numel and len(args) == 1 and not kwargs and isinstance(args[0], torch.Tensor):
                if self.shape_is_lifted(args[0]):
                    self.start_size_read(fs, args[0], "numel")   # as `t.numel()`
                    return
                self.check_shape_read(args[0], "`torch.numel`")
            self._pend(fs, self._post_new, 1, opaque=True)
            return
        if ann.as_op_node is not None:
            # AsOpNode: the call itself becomes an operator-graph node (its native code never
            # runs on the matched path; the graph calls it).
            target = fn if ann.as_op_node == "function" else getattr(fn, "__name__", name)
            self._pend_op(fs, ann.as_op_node, target, list(args), dict(kwargs), name)
            return
        if fn is setattr and len(args) == 3 and type(args[1]) is str and not kwargs:
            self._attr_write(fs, args[0], args[1], args[2])   # exactly what `obj.name = value` does
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
            if rel == ("attr", "__dict__") and isinstance(args[0], type):
                self._pend(fs, self._post_class_dict, args[0])   # vars(C), getattr(C, "__dict__")
                return
            if rel is not None and rel[0] in ("setattr", "delattr"):
                obj = args[0]
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.rg.write_attr(node, rel[1], *args[2:3])   # (delattr: no value, deleted)
                self._read_args(args[1:2])
                self._pend(fs, self._post_nothing, None, opaque=True)
                return
            if rel is not None:
                obj = args[0]
                node = self.node(obj)
                if isinstance(obj, torch.Tensor):
                    if rel[0] == "attr" and rel[1] in ("shape", "ndim"):
                        self.check_shape_read(obj, f"reads `.{rel[1]}`")
                    if rel == ("attr", "shape") and self.shape_is_lifted(obj):
                        self.start_size_read(fs, obj, "shape")   # getattr(t, "shape"): as `t.shape`
                        return
                    if isinstance(rel[1], str) and not any(rel[1] in k.__dict__ for k in type(obj).__mro__):
                        self._tensor_user_attr(fs, obj, rel[1])   # (t._is_param: its instance dict)
                        return
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
                        self._guard_attr_precedence(obj, node, rel[1], where, via)
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
        key = kwargs.get("key")
        if fn in _KEYED_READERS and isinstance(key, (types.FunctionType, types.MethodType)) \
                and isinstance(getattr(key, "__func__", key), types.FunctionType):
            # sorted/min/max with a Python key compare the *keys*, which its monitored frames
            # return: the elements are only moved. Tensor keys would be compared in C.
            self._read_args(args, ann, None)
            code = getattr(key, "__func__", key).__code__
            collector: list = []
            self.return_collectors[code] = collector
            self._pend(fs, self._post_keyed, (fn, code, collector))
            return
        if fn in _STORING_CONSTRUCTORS:
            kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, torch.Tensor)}   # stored, not read
        if fn in _ROW_ITERATORS and any(isinstance(a, torch.Tensor) for a in args):
            # zip(t, ...), enumerate(t), list(t): iterating a tensor gives its rows (t.unbind(0)),
            # which depends on its shape only; Tensor.__iter__ runs in C's call, unmonitored.
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            self._read_args([a for a in args if not isinstance(a, torch.Tensor)], None, fn)
            self._read_args(list(kwargs.values()), None, fn)
            self._pend(fs, self._post_rows, tensors, opaque=True)
            return
        self._read_args(args, ann, fn)
        self._read_args(list(kwargs.values()), None, fn)
        # Python callbacks (sorted(key=...), map(fn, ...)) run monitored.
        self._pend(fs, self._post_new, 1)

    def _post_rows(self, fs, stack, tensors):
        self.bind_iterated_tensors(tensors, stack[-1])
        self._post_new(fs, stack, 1)

    def _cached_call(self, fs, fn, args, kwargs) -> None:
        """A ``functools.lru_cache`` function: its result is whatever the cache holds for the
        (hashable) arguments, computed by the Python function on a miss. Eager runs the function
        only on a miss, and so does the monitor run (unmonitored: after it, eager would not run
        it again either). What the cache holds is state the record cannot see (``cache_clear()``,
        an eviction, then a function of changed globals), so the mock calls the cached function
        again, where the program did, and the record holds only for the same result: equal for
        values, the very object otherwise (a draw pinned to its value, magpy.redraw). Arguments
        must be values (guarded) or objects the cache keys by identity (guarded so)."""
        for v in [*args, *kwargs.values()]:
            if isinstance(v, torch.Tensor):
                raise BreakCompile(f"passes a tensor to the cached function `{fn.__qualname__}` "
                                   "(the cache keys it by identity)")
            if is_immutable(v):
                continue
            node = self.node(v)
            if node is None or node.source is None:
                raise BreakCompile(f"passes an object made in the call ({type(v).__name__}) to the cached function `{fn.__qualname__}`")
            self._guard_identity(v)
        if self._changed_outside():
            # (the mock calls it before it replays those changes; on a cache miss the function
            # would read the state as the call found it)
            raise BreakCompile(f"calls the cached function `{fn.__qualname__}` after changing state outside the call")
        fn_node = self.node(fn)
        if fn_node is None or fn_node.source is None:
            raise BreakCompile(f"calls the cached function `{fn.__qualname__}` made in the call")
        if self.holds_scalar(args) or self.holds_scalar(kwargs):
            self.scalar_escape("passes to a cached function", args, kwargs)
        self._guard_identity(fn)
        self._pend(fs, self._post_cached_call, (fn, tuple(delift(a) for a in args),
                                                {k: delift(v) for k, v in kwargs.items()}), opaque=True)

    def _changed_outside(self) -> bool:
        """Has the run so far changed state that exists outside the call (or replayed an effect)?"""
        return bool(self.attr_writes or self.global_writes or self.cell_writes or self.appends or self.effects
                    or self.mutates_outside or any(self.rg.sn[n].source is not None for n in self.mutated))

    def _post_cached_call(self, fs, stack, data):
        fn, args, kwargs = data
        out = stack[-1]
        pinned = (out,)
        self.draws.append(DrawSource(len(self.draws), fn, None, args, kwargs, f"cached {fn.__qualname__}",
                                     self.where(), pinned))
        if is_immutable(out) or self.node(out) is not None:
            return
        self.on_read(out, ConstSource(out, f"a result kept by the cache of {fn.__qualname__}"))

    def _legacy_constructor(self, fs, fn, args, kwargs) -> None:
        """Legacy tensor construction as the graph op it amounts to: ``torch.FloatTensor(data)``
        is ``torch.tensor(data, dtype=float32)``, ``torch.LongTensor(2, 3)`` is an uninitialised
        ``torch.empty``, ``torch.Tensor`` uses the default dtype (guarded global state), and
        ``Variable(t, requires_grad=r)`` is ``t.detach().requires_grad_(r)`` (shares t's data)."""
        name = getattr(fn, "__name__", "Tensor")
        if fn is torch.autograd.Variable:
            if len(args) == 1 and isinstance(args[0], torch.Tensor) and set(kwargs) <= {"requires_grad", "volatile"}:
                self._pend_op(fs, "function", legacy_variable, [args[0], bool(kwargs.get("requires_grad", False))],
                              {}, "Variable")
                return
            raise BreakCompile("calls `Variable` with arguments MagPy does not translate")
        dtype = _LEGACY_TENSOR_TYPES.get(fn) or torch.get_default_dtype()
        extra = {k: v for k, v in kwargs.items() if k == "device"}
        if set(kwargs) - set(extra):
            raise BreakCompile(f"calls `{name}` with keywords {sorted(kwargs)}")
        if not args or all(type(a) is int for a in args) or (len(args) == 1 and type(args[0]) is torch.Size):
            size = tuple(args[0]) if args and type(args[0]) is torch.Size else tuple(args) or (0,)
            self._pend_op(fs, "function", torch.empty, [size], {"dtype": dtype, **extra}, name)
            return
        data = args[0]
        if len(args) == 1 and type(data) is range:
            data = list(data)
        if len(args) == 1 and (is_numeric_array(data) or (isinstance(data, (list, tuple)) and _numbers_only(data))):
            self._read_args([args[0]])
            self._pend_op(fs, "function", torch.tensor, [data], {"dtype": dtype, **extra}, name)
            return
        raise BreakCompile(f"calls the legacy constructor `{name}` with {type(data).__name__} data")

    def _tensor_user_attr(self, fs, t: torch.Tensor, name: str) -> None:
        """``getattr(t, name[, default])`` / ``hasattr(t, name)`` for a name the tensor class does
        not define: an attribute set on the tensor object (``t._is_param = True``), which lives in
        its ``__dict__``. For a tensor from outside that is state: present, it is read like any
        attribute; absent, it must stay absent. A tensor made in this call has none."""
        node = self.node(t)
        if node is None:
            raise BreakCompile(f"reads attribute `{name}` of a tensor of unknown origin")
        present = name in t.__dict__
        if self.rg.read(node, ("attr", name)) is not None:
            pass   # (written or read before in this call: the RefGraph already knows it)
        elif node.source is None:
            if present:
                raise BreakCompile(f"reads attribute `{name}` set on a tensor made in the call")
        elif present:
            self.on_read(t.__dict__[name], AttrSource(node.source, name, "__dict__"), ("attr", name), node)
        else:
            self.add_guard(AbsentGuard(node.source, name))
        self._pend(fs, self._post_new, 1, opaque=True)

    def _post_function_apply(self, fs, stack, data):
        code, returned = data
        self.return_collectors.pop(code, None)
        out = stack[-1]
        if returned:
            got = list(out) if isinstance(out, (tuple, list)) else [out]
            ret = returned[-1]
            ret = list(ret) if isinstance(ret, (tuple, list)) else [ret]
            for o, r in zip(got, ret):
                if isinstance(o, torch.Tensor) and o is not r and self.graph.node_of(o) is None \
                        and isinstance(r, torch.Tensor) and o.shape == r.shape:
                    node = self.to_arg(r)
                    self.graph.bind(o, self.graph.call("method", "view_as", (node, node), {}))
        self._post_new(fs, stack, 1)

    def _post_keyed(self, fs, stack, data):
        fn, code, keys = data
        self.return_collectors.pop(code, None)
        if any(T.contains_tensor(k) for k in keys):
            self._dynamic(f"`{getattr(fn, '__qualname__', fn)}` compares tensor keys (reads their values)")
        if fn is not list.sort:
            self._post_new(fs, stack, 1)

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
