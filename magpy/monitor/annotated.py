"""Calls of annotated natives (paper §5.2): what the six properties of an operation make of a call.

A native function the monitor cannot see into is described by its :class:`~magpy.annotations.Annotation`:
PureClosure (else the call is dynamic), AsOpNode (the call becomes an operator-graph node), InPlace
and OutInPlace (its arguments are changed), Relation (its result is an attribute or item of an argument,
read with a source and a guard) and ValueRead (which arguments it reads: guarded). :meth:`AnnotatedRules._call_annotated`
applies them when :meth:`~magpy.monitor.calls.CallRules.decide_call` finds an annotated callee ("annotated" and
"numpy function" in :data:`~magpy.monitor.calls.FIGURE_12`). A native without an annotation may still be *pure by its
inputs* (:meth:`AnnotatedRules._pure_by_inputs`): only constants in, from a module without outside effects.

:class:`AnnotatedRules` is a rule object of the monitor run (:mod:`magpy.monitor.rulebook`).
"""
from __future__ import annotations

import collections
import functools
import operator
import sys
import types
from typing import TYPE_CHECKING

import torch

from ..annotations import DYNAMIC, Annotation
from ..annotations import torch_ops as T
from ..annotations.builtins import READING_METHODS
from ..breaks import BreakCompile
from ..objmodel import (
    CONTAINER_TYPES,
    attr_location,
    is_immutable,
    is_instance,
    is_mutable_class,
    lookup_effects,
    relation_present,
)
from ..realtype import class_module, class_name, class_owner, runs_lookup_hook
from ..source import PAST_HOOK, AttrSource, ItemSource
from .elements import MAP_CONSUMERS, element_read, may_hold_tensors, python_predicate
from .natives import LOGGED_MUTATIONS, ROW_ITERATORS, STORING_CONSTRUCTORS

try:
    import numpy as _np
except ImportError:   # pragma: no cover
    _np = None

#: natives that look up no attribute of their arguments (the hooks' own past-hook reads and
#: stores, identity): an object whose lookups are effects may be handed to them
_NO_LOOKUP = frozenset({type, id, object.__getattribute__, object.__setattr__, object.__delattr__, setattr, delattr})

if TYPE_CHECKING:
    from ..callsite import CallSite
    from .frame import FrameState

#: Native callables (functions, methods, slot wrappers) that :meth:`AnnotatedRules._pure_by_inputs` may run.
NATIVE_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodDescriptorType,
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
    "psutil", "_psutil_linux", "pynvml", "GPUtil", "decimal", "_decimal", "_pydecimal",
})
#: Names of natives that change state rather than compute (``cv2.setNumThreads(2)``): never pure.
_SETTER_PREFIXES = ("set", "seed", "reset", "clear", "register", "enable", "disable", "push", "pop", "add",
                    "write", "flush", "update", "put", "init", "load", "save", "open", "close", "start", "stop")
#: Natives that answer from process or thread state no argument shows, which the program can
#: change between calls (``sys.setrecursionlimit``, ``np.seterr``): guarded by their answer.
STATE_GETTERS = {sys.getrecursionlimit, sys.getswitchinterval, sys.getdefaultencoding}
if _np is not None:
    STATE_GETTERS |= {_np.geterr, _np.getbufsize, _np.geterrcall, _np.get_printoptions}
_RE_PATTERN = type(__import__("re").compile(""))
_RE_MATCH = type(__import__("re").match("", ""))


def _constant_input(v) -> bool:
    """An input a native can only read as a constant: an immutable value, a class, a compiled
    regular expression or a match of one, or an instance of a subclass of str/bytes/int/float (``torch.__version__``
    is a ``TorchVersion``), which the caller guards by identity when it comes from outside."""
    return is_immutable(v) or isinstance(v, (type, _RE_PATTERN, _RE_MATCH)) or (
        isinstance(v, (str, bytes, int, float)) and not isinstance(v, (bool, torch.Tensor)))


#: Builtins that compare their elements, or the results of a ``key=`` function when given one.
KEYED_READERS = frozenset({sorted, min, max, list.sort})

_ITEM_SEQUENCES = (list, tuple, type({}.items()), type(collections.OrderedDict().items()))


def item_keys_are_values(key, args) -> bool:
    """``sorted(d.items(), key=operator.itemgetter(0))``: are the keys a native ``itemgetter``
    hands the comparison all immutable values (no tensor is compared, only moved)? They are
    computed here, from plain tuples and lists, where ``itemgetter`` runs no Python code."""
    if type(key) is not operator.itemgetter or len(args) != 1 or type(args[0]) not in _ITEM_SEQUENCES \
            or len(args[0]) > 4096:
        return False
    for element in args[0]:
        if type(element) not in (tuple, list):
            return False
        try:
            k = key(element)
        except Exception:
            return False
        if not is_immutable(k):
            return False
    return True


def _module_name(owner) -> str | None:
    """The module an owner of a native belongs to (a class's ``__module__``, or a module's name),
    read past the ``__getattribute__`` of a metaclass of the program's (:mod:`magpy.realtype`)."""
    if is_instance(owner, type):
        try:
            return class_module(owner) or class_name(owner)
        except AttributeError:   # (a class made without `__module__`)
            return class_name(owner)
    return getattr(owner, "__module__", None) or getattr(owner, "__name__", None)


class AnnotatedRules:
    """The annotation of a native callee applied to the call: the handlers of the annotated kinds of
    :data:`~magpy.monitor.calls.FIGURE_12`."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("assume_key_order", "attr_read", "attr_write", "bind_iterated_tensors",
            "check_shape_read", "from_outside", "full_read", "go_dynamic", "guard_attr_precedence",
            "guard_class_attr", "guard_identity", "holds_scalar", "log_mutation", "mutate", "node",
            "note_write", "on_read", "outside_identity_key", "pend", "pend_op", "post_class_dict",
            "post_new", "post_nothing", "read_absent", "read_args", "read_hasattr", "read_presence",
            "scalar_escape", "shape_is_lifted", "start_size_read", "state_read")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    def _annotated(self, fs: FrameState, c: CallSite) -> bool:
        """An annotated native: its annotation decides (:meth:`_call_annotated`)."""
        self._call_annotated(fs, c.fn, c.ann, c.args, c.kwargs)
        return True

    def _numpy_function(self, fs: FrameState, c: CallSite) -> bool:
        """A numpy function outside the registry: its annotation from :mod:`magpy.annotations.numpy_ops`;
        a ufunc's ``out=`` array is written in place (``out=...`` only asks for an array result)."""
        out = c.kwargs.get("out")
        if out is not None and out is not Ellipsis:
            for o in out if isinstance(out, tuple) else (out,):
                self.mutate(o)
        return self._annotated(fs, c)

    def _call_annotated(self, fs, fn, ann: Annotation, args, kwargs) -> None:
        """``fn(*args, **kwargs)`` by ``fn``'s annotation ``ann``: not a pure closure is dynamic; a
        metadata query is a new value; AsOpNode is an operator node; InPlace changes its arguments;
        a Relation is a read with a source (an attribute or item of argument 0); else the arguments
        it reads (ValueRead) are read, and Python callbacks it calls run monitored."""
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", str(fn))
        if ann is DYNAMIC or not ann.pure_closure:
            self.go_dynamic(f"calls `{name}`, which is not a pure closure (PureClosure=False)")
        if ann.meta:
            if fn is torch.numel and len(args) == 1 and not kwargs and is_instance(args[0], torch.Tensor):
                if self.shape_is_lifted(args[0]):
                    self.start_size_read(fs, args[0], "numel")   # as `t.numel()`
                    return
                self.check_shape_read(args[0], "`torch.numel`")
            self.pend(fs, self.post_new, 1, opaque=True)
            return
        if ann.as_op_node is not None:
            # AsOpNode: the call itself becomes an operator-graph node (its native code never
            # runs on the matched path; the graph calls it).
            target = fn if ann.as_op_node == "function" else getattr(fn, "__name__", name)
            self.pend_op(fs, ann.as_op_node, target, list(args), dict(kwargs), name)
            return
        if fn is setattr and len(args) == 3 and type(args[1]) is str and not kwargs:
            self.attr_write(fs, args[0], args[1], args[2])   # exactly what `obj.name = value` does
            return
        if (fn is object.__setattr__ and len(args) == 3 or fn is object.__delattr__ and len(args) == 2) \
                and type(args[1]) is str and not kwargs:
            # the store (delete) itself, past the class's own `__setattr__` (which usually calls it):
            # a version the mock replays the same way (magpy.codegen.mock)
            obj, node = args[0], self.node(args[0])
            self.note_write(obj, "attr", args[1])
            if node is None:
                raise BreakCompile(f"writes attribute `{args[1]}` of a {type(obj).__name__} whose origin "
                                   "MagPy did not see, so the write could not be replayed")
            if node.source is not None:
                self.run.rg.write_attr(node, args[1], *args[2:3])   # (delete: no value)
            self.pend(fs, self.post_nothing, None, opaque=True)
            return
        if fn in (set.discard, set.add) and len(args) == 2 and not kwargs and type(args[0]) is set \
                and is_immutable(args[1]) and (args[1] in args[0]) is (fn is set.add):
            # a no-op (`register_buffer` discards a name the set lacks): the set is read, whole
            # (guarded), and not changed, so no replay of a set (which the mock cannot make exact)
            if self.from_outside(args[0]):
                self.full_read(args[0])
            self.pend(fs, self.post_new, 1)
            return
        if ann.out_inplace and args:
            self.mutate(args[0])
        if fn in LOGGED_MUTATIONS and args and self.log_mutation(args[0], fn.__name__, args[1:]):
            self.pend(fs, self.post_new, 1)
            return
        for i in ann.inplace:
            if i < len(args):
                self.mutate(args[i])
        if fn not in _NO_LOOKUP:
            for a in (*args, *kwargs.values()):
                if (effects := lookup_effects(a)) is not None:
                    # (a builtin looking up its attributes would run that hook unmonitored)
                    raise BreakCompile(f"calls `{name}` on a `{type(a).__name__}`, which {effects}")
        if ann.relation is not None and args:
            rel = ann.relation(args, kwargs)
            if rel == ("attr", "__dict__") and is_instance(args[0], type):
                self.pend(fs, self.post_class_dict, args[0])   # vars(C), getattr(C, "__dict__")
                return
            if rel is not None and rel[0] in ("setattr", "delattr"):
                obj = args[0]
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.run.rg.write_attr(node, rel[1], *args[2:3])   # (delattr: no value, deleted)
                self.read_args(args[1:2])
                self.pend(fs, self.post_nothing, None, opaque=True)
                return
            if rel is not None:
                obj = args[0]
                node = self.node(obj)
                if is_instance(obj, torch.Tensor):
                    if rel[0] == "attr" and rel[1] in ("shape", "ndim"):
                        self.check_shape_read(obj, f"reads `.{rel[1]}`")
                    if rel == ("attr", "shape") and self.shape_is_lifted(obj):
                        self.start_size_read(fs, obj, "shape")   # getattr(t, "shape"): as `t.shape`
                        return
                    if isinstance(rel[1], str) and class_owner(type(obj), rel[1]) is None:
                        self.tensor_user_attr(fs, obj, rel[1])   # (t._is_param: its instance dict)
                        return
                    if rel[0] == "hasattr" or (rel[0] == "attr" and (rel[1] in T.META_ATTRS or
                                                                     callable(getattr(type(obj), str(rel[1]), None)))):
                        self.pend(fs, self.post_new, 1, opaque=True)
                        return
                    raise BreakCompile(f"`{name}` on a tensor")
                # a key compared by identity (a class, function or module from outside, or a tuple
                # of them: a registry keyed by types) names one item as a constant key does
                key_ok = is_immutable(rel[1]) or (rel[0] == "item" and is_instance(obj, dict)
                                                  and self.outside_identity_key(rel[1]))
                if node is not None and node.source is not None and key_ok \
                        and self.run.rg.read(node, (rel[0], rel[1])) is None and node.node_id not in self.run.mutated:
                    if rel[0] == "hasattr":
                        self.pend(fs, self._post_hasattr, (node, rel), opaque=True)
                        return
                    if rel[0] == "attr":
                        where, via = attr_location(obj, rel[1])
                        if where in ("class_fn",):
                            self.pend(fs, self.post_new, 1, opaque=True)
                            return
                        if where in ("property", "descriptor", "getattr_hook") and type(obj).__getattribute__ is object.__getattribute__:
                            # Python code computes it (a getter, a `__get__`, the class's `__getattr__`):
                            # it runs monitored, as for `obj.name`, and an AttributeError it raises
                            # gives the default (asking again whether it is present would run it twice)
                            self.attr_read(fs, obj, rel[1])
                            return
                        self.guard_attr_precedence(obj, node, rel[1], where, via)
                        if runs_lookup_hook(obj):
                            # the class's own `__getattribute__`: `super().__getattribute__(name)` in it
                            # reads past it (and so does the guard); `getattr` runs it, as the guard's
                            # `obj.name` does, never for another name (`obj.__dict__`)
                            via = PAST_HOOK if fn is object.__getattribute__ else ""
                        src = AttrSource(node.source, rel[1], via)
                    else:
                        if not is_instance(obj, (list, tuple, dict)):
                            self.pend(fs, self.post_new, 1)
                            return
                        src = ItemSource(node.source, rel[1])
                    default = len(args) > 2 or (rel[0] == "item" and fn is dict.get)
                    self.pend(fs, self._post_relation, (node, rel, src, default, obj), opaque=True)
                    return
                if node is not None and node.source is not None and rel[0] == "item" and not key_ok \
                        and is_instance(obj, (list, tuple, dict)):
                    # an item named by a key that has no source of its own: the container from
                    # outside is guarded whole (its keys and items), as a subscript is
                    self.full_read(obj)
                self.pend(fs, self.post_new, 1, opaque=is_instance(obj, torch.nn.Module))
                return
        key = kwargs.get("key")
        if fn in KEYED_READERS and key is not None and not isinstance(getattr(key, "__func__", key), types.FunctionType) \
                and (T.contains_tensor(getattr(key, "__self__", None)) or any(may_hold_tensors(a) for a in args)) \
                and not item_keys_are_values(key, args):
            # a native key (`max(scores, key=scores.get)`) hands tensors to the comparison, in C
            self.go_dynamic(f"`{getattr(fn, '__qualname__', fn)}` compares tensors a native key gives")
        if fn in KEYED_READERS and key is not None and not isinstance(getattr(key, "__func__", key), types.FunctionType):
            # `max(range(n), key=scores.__getitem__)` over numbers read from tensors: compared in C,
            # so their values are assumed
            self.scalar_escape("compares as keys", getattr(key, "__self__", None), *args)
        if fn in KEYED_READERS and isinstance(key, (types.FunctionType, types.MethodType)) \
                and isinstance(getattr(key, "__func__", key), types.FunctionType):
            # sorted/min/max with a Python key compare the *keys*, which its monitored frames
            # return: the elements are only moved. Tensor keys would be compared in C.
            # (`max(a, b, key=...)`: the arguments are the elements, tensors among them only moved)
            moved = [a for a in args if len(args) == 1 or not isinstance(a, torch.Tensor)]
            self.read_args(moved, ann if len(moved) == len(args) else None, None)
            code = getattr(key, "__func__", key).__code__
            collector: list = []
            self.run.return_collectors[code] = (collector, fs.frame)   # (the calls sorted/min/max make)
            self.pend(fs, self._post_keyed, (fn, code, collector, bool(kwargs.get("reverse", False))))
            return
        if fn in STORING_CONSTRUCTORS:
            kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, torch.Tensor)}   # stored, not read
        predicate = python_predicate(fn, args)
        if predicate is not None:
            # filter(f, xs) with a Python f tests the truth of what f's monitored frames return, in
            # C: harmless for a Python bool, a value read for a tensor (checked as each returns)
            self.run.truth_read_codes[predicate.__code__] = fn
        elif fn in (filter, map):
            why, _ = element_read(fn, list(args), frozenset())   # (filter's truth tests, map(bool, t))
            if why is not None:
                self.go_dynamic(why)
        if fn in (filter, map):
            if args:
                self._native_callback(fn, args[0])
        if fn in ROW_ITERATORS or fn in MAP_CONSUMERS:
            self.guard_native_iteration(args)
        if fn in ROW_ITERATORS and any(isinstance(a, torch.Tensor) for a in args):
            # zip(t, ...), enumerate(t), list(t): iterating a tensor gives its rows (t.unbind(0)),
            # which depends on its shape only; Tensor.__iter__ runs in C's call, unmonitored,
            # unless another argument's `__iter__` is Python (`zip(self.layers, t)`, a ModuleList):
            # what it reads from outside must be seen, so both run monitored (the rows are then
            # the unbind the monitored Tensor.__iter__ made).
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            self.read_args([a for a in args if not isinstance(a, torch.Tensor)], None, fn)
            self.read_args(list(kwargs.values()), None, fn)
            opaque = not any(not isinstance(a, torch.Tensor) and isinstance(
                getattr(type(a), "__iter__", None), types.FunctionType) for a in args)
            self.pend(fs, self._post_rows, tensors if opaque else [], opaque=opaque)
            return
        self.read_args(args, ann, fn)
        self.read_args(list(kwargs.values()), None, fn)
        # Python callbacks (sorted(key=...), map(fn, ...)) run monitored.
        self.pend(fs, self.post_new, 1)

    def guard_native_iteration(self, values) -> None:
        """C iterates a list or dict subclass from outside (``zip(x, scales)``, ``sum(xs)``) by
        what its class holds: a Python ``__iter__`` set on the class later changes the program."""
        for a in values:
            if isinstance(a, CONTAINER_TYPES) and type(a) not in CONTAINER_TYPES \
                    and is_mutable_class(type(a)) and self.from_outside(a):
                self.guard_class_attr(type(a), "__iter__")

    def _native_callback(self, fn, f) -> None:
        """``map(f, ...)``/``filter(f, ...)`` with a native ``f``: native code calls it on each
        element, where the monitor sees neither the reads nor the writes. A method bound to an
        object that only reads it (``d.get``, ``lst.__getitem__``) reads the object whole; one that
        changes it (``lst.append``), or ``getattr``-like builtins, make the call dynamic."""
        inner = f.func if isinstance(f, functools.partial) else f
        owner = getattr(inner, "__self__", None)
        name = getattr(inner, "__name__", "")
        if isinstance(inner, types.BuiltinMethodType) and owner is not None \
                and not isinstance(owner, (types.ModuleType, type)):
            if name not in READING_METHODS and (self.node(owner) is None or self.from_outside(owner)):
                # (an object made in the call changed by native code: the run reads it as it is)
                self.go_dynamic(f"`{fn.__name__}` calls `{name}` of a {type(owner).__name__}, which may change it, "
                                "in native code")
            if self.from_outside(owner):
                self.full_read(owner)   # (which items it reads is decided in C: all of them)
        elif inner in (getattr, setattr, delattr, hasattr, vars, exec, eval):
            self.go_dynamic(f"`{fn.__name__}` calls `{name}` in native code")

    def _post_rows(self, fs, stack, tensors):
        self.bind_iterated_tensors(tensors, stack[-1])
        self.post_new(fs, stack, 1)

    def tensor_user_attr(self, fs, t: torch.Tensor, name: str) -> None:
        """``getattr(t, name[, default])`` / ``hasattr(t, name)`` for a name the tensor class does
        not define: an attribute set on the tensor object (``t._is_param = True``), which lives in
        its ``__dict__``. For a tensor from outside that is state: present, it is read like any
        attribute; absent, it must stay absent. A tensor made in this call has none."""
        node = self.node(t)
        if node is None:
            raise BreakCompile(f"reads attribute `{name}` of a tensor of unknown origin")
        present = name in t.__dict__
        if self.run.rg.read(node, ("attr", name)) is not None:
            pass   # (written or read before in this call: the RefGraph already knows it)
        elif node.source is None:
            # (a constant the call itself wrote, `out.tag = "x"`, reads as that constant)
            if present and not (is_immutable(t.__dict__[name]) and not self.holds_scalar(t.__dict__[name])):
                raise BreakCompile(f"reads attribute `{name}` set on a tensor made in the call")
        elif present:
            self.on_read(t.__dict__[name], AttrSource(node.source, name, "__dict__"), ("attr", name), node)
        else:
            self.read_absent(node, name)
        self.pend(fs, self.post_new, 1, opaque=True)

    def tensor_grad_read(self, fs, t: torch.Tensor) -> None:
        """``t.grad`` of a tensor from outside (``Module._apply`` reads each parameter's, as
        ``module.to(dtype)`` in a forward does): the gradient backward left there, None or a
        tensor, read like any attribute (guarded None, or a tensor read through ``t.grad``).
        A tensor made in the call has a gradient only after a backward inside the call."""
        node = self.node(t)
        if node is None or node.source is None:
            raise BreakCompile("reads `.grad` of a tensor made in the call")
        if self.run.rg.read(node, ("attr", "grad")) is None:
            self.on_read(t.grad, AttrSource(node.source, "grad"), ("attr", "grad"), node)
        self.pend(fs, self.post_new, 1, opaque=True)

    def _post_keyed(self, fs, stack, data):
        fn, code, keys, reverse = data
        self.run.return_collectors.pop(code, None)
        if any(T.contains_tensor(k) for k in keys):
            self.go_dynamic(f"`{getattr(fn, '__qualname__', fn)}` compares tensor keys (reads their values)")
        else:
            self.assume_key_order(fn, keys, reverse)   # (keys read from tensors: their order is assumed)
        if fn is not list.sort:
            self.post_new(fs, stack, 1)

    def _post_relation(self, fs, stack, data):
        node, rel, src, has_default, obj = data
        value = stack[-1]
        if has_default:
            present = relation_present(obj, rel)
            self.read_presence(src if rel[0] == "item" else AttrSource(node.source, rel[1]), rel, present)
            if not present:
                return
        self.on_read(value, src, rel, node)

    def _post_hasattr(self, fs, stack, data):
        node, rel = data
        self.read_hasattr(node, rel[1], bool(stack[-1]))

    def _state_getter(self, fs: FrameState, c: CallSite) -> bool:
        """A native of :data:`STATE_GETTERS` (``sys.getrecursionlimit()``, ``np.geterr()``): its
        answer, if a value, is guarded as the answer; else the call is dynamic."""
        self.pend(fs, self._post_state_getter, (c.fn, tuple(c.args)), opaque=True)
        return True

    def _post_state_getter(self, fs, stack, data):
        fn, args = data
        out = stack[-1]
        if not (is_immutable(out) or (type(out) is dict and all(is_immutable(v) for v in out.values()))):
            self.go_dynamic(f"`{getattr(fn, '__qualname__', fn)}` answers from process state with an object")
        self.state_read(fn, getattr(fn, "__qualname__", str(fn)), args, out)
        self.post_new(fs, stack, 1)

    def _pure_by_inputs(self, fs: FrameState, c: CallSite) -> bool:
        """An unannotated native whose every input is a guarded constant (numbers, strings, tuples of
        them, classes, a compiled regular expression) and that belongs to no module with outside
        effects (clock, files, processes, random) computes a function of guarded values: it runs
        as it is, its result is a value of the record (``Pattern.search`` parsing a version
        string, ``str.maketrans``). A native that receives anything mutable, or a tensor, does not.
        (The kind is only picked for a native callable, :data:`NATIVE_CALLABLES`.)"""
        fn, args, kwargs = c.fn, c.args, c.kwargs
        self_ = getattr(fn, "__self__", None)
        owner = self_ if is_instance(self_, (types.ModuleType, type)) else type(self_) if self_ is not None \
            else getattr(fn, "__objclass__", None)
        module = getattr(fn, "__module__", None) or _module_name(owner) or ""
        if module.split(".")[0] in _EFFECTFUL_MODULES or getattr(fn, "__name__", "").lstrip("_").startswith(_SETTER_PREFIXES):
            return False
        if not (self_ is None or is_instance(self_, types.ModuleType) or _constant_input(self_)):
            return False
        if not all(_constant_input(a) for a in [*args, *kwargs.values()]):
            return False
        for v in (self_, *args, *kwargs.values()):
            self.guard_identity(v)   # (which pattern, class or version string the native is given)
        self.pend(fs, self.post_new, 1, opaque=True)
        return True

