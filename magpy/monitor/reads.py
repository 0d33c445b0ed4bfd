"""Reads from outside: where the run makes sources and guards (paper §4.1, Table 1 ValueRead).

A value the program reads from state that outlives the call (an argument, a cell, a global, an imported
module, an item of a container from outside) gets a :class:`~magpy.source.Source` that the guard and the
mock use to fetch it again on the next call, and a guard on what this run saw (:meth:`Reads.on_read`;
containers read whole: :meth:`Reads.full_read`). Attribute lookup, with CPython's precedence, is the other
half of the reads (:mod:`magpy.monitor.attrs`).

Before a monitor run, each parameter of the function being compiled gets its source
(:func:`magpy.monitor.entry.bind_parameters`).

Called Python functions bind their own parameters (:meth:`Reads.bind_callee`): a default value is reached
through ``f.__defaults__``/``f.__kwdefaults__`` and guarded there.
"""
from __future__ import annotations

import collections
import inspect
import operator as _operator
import sys
import types
from typing import Any

import torch

from .. import capture
from ..annotations import Annotation
from ..annotations import torch_ops as T
from ..breaks import BreakCompile
from ..bytecode import DECODER
from ..guards import (
    AbcTokenGuard,
    AbsentGuard,
    CacheEntryGuard,
    ContainsGuard,
    Guard,
    HasAttrGuard,
    IdGuard,
    KeyAbsentGuard,
    KeysGuard,
    LenGuard,
    ModuleCallGuard,
    ModuleHooksGuard,
    NoHooksGuard,
    PresentGuard,
    SameGuard,
    StateReadGuard,
    TensorGuard,
    TensorValueGuard,
    TypeGuard,
    ValueGuard,
    guard_for_object,
)
from ..objmodel import (
    BOUND_METHODS,
    CONTAINER_TYPES,
    MAPPINGS,
    NO_NODE_TYPES,
    NO_VALUE,
    exact_key,
    is_identity_key,
    is_immutable,
    is_instance,
    items_unguarded,
    lookup_effects,
    mentions_number,
)
from ..refgraph import Const, ShadowNode
from ..source import (
    ArgSource,
    AttrSource,
    ConstSource,
    GlobalSource,
    ItemSource,
    Source,
)
from .elements import element_read
from .frame import CALL_IMPL_CODES

_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__", "__setstate__"})


def _identity_key(key: Any) -> bool:
    """A dict key found by identity (a function, class or module, compared with ``is``): reading
    ``d[key]`` reads one item, as for a constant key (``typing._caches[func]``)."""
    return isinstance(key, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)) \
        and type(key).__eq__ is object.__eq__ and type(key).__hash__ is object.__hash__


_BUILTIN_IMPORT = __import__
# Where an import statement finds a module already imported: the interpreter's own table (the
# very dict object; rebinding the name `sys.modules` does not change what `import` consults).
_SYS_MODULES = ConstSource(sys.modules, "sys.modules")


def _absolute_import_name(name: str, package: str, level: int) -> str | None:
    """The absolute module name of ``from <level dots><name> import ...`` in ``package`` (what
    the interpreter resolves), or None where it cannot (the import raises)."""
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None
    return f"{bits[0]}.{name}" if name else bits[0]

_SINGLETONS = (None, True, False, Ellipsis, NotImplemented)
_getitem = _operator.getitem
_STORAGES = (torch._C.StorageBase, torch.storage.TypedStorage)
collections_deque = collections.deque

ELEMENT_READERS = frozenset({sorted, min, max, any, all, set, frozenset, hash, str, repr, format,
                             list.sort, list.index, list.count, list.remove, tuple.index, tuple.count,
                             dict.fromkeys, abs, round})


class Reads:
    """The reads of a monitor run (a rule object of the run): every source and guard of a value
    read from outside, except attribute lookups (:mod:`magpy.monitor.attrs`)."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("check_shape_read", "go_dynamic", "holds_scalar", "lift_value", "node", "note_write",
            "numpy_node", "numpy_op", "pend", "pend_op", "post_attr", "post_new",
            "read_native_state", "scalar_escape", "scalar_node", "text_op", "where")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    # -- sources and guards ------------------------------------------------------------------------
    def add_guard(self, guard: Guard) -> None:
        """Guard what the run read from outside (the first guard of equal ``dedup_key`` is kept)."""
        key = guard.dedup_key()
        if key in self.run.guarded_keys:
            return
        if self.run.identity_numbers and mentions_number(guard, self.run.identity_numbers):
            self.go_dynamic("reads outside state by the `id()` of an object created in this call "
                            "(a new number every call)")
        self.run.guarded_keys.add(key)
        if self.run.lifted_dims and isinstance(guard, TensorGuard) and guard.source in self.run.lifted_dims:
            guard.dynamic_dims = self.run.lifted_dims[guard.source]
        self.run.guards.append(guard)

    def on_read(self, value: Any, source: Source, relation: tuple | None = None,
                owner: ShadowNode | None = None) -> None:
        """``value`` was read from outside through ``source``: give it a node and guards."""
        if is_immutable(value):
            if self.run.read_log is not None:
                self._log_read(value, source)
            self.add_guard(ValueGuard(source, value))
            self.run.immutable_sources.setdefault(id(value), (value, []))[1].append(source)   # (`is`: op_IS_OP)
            if owner is not None and relation is not None:
                self.run.rg.add_initial_ref(owner, relation, Const(value))
            return
        node = self.node(value)
        if node is not None:
            if node.source is not None and node.source != source:
                self.run.rg.external(value, source)   # a second path to a known object: an alias,
                                                  # guarded as `second is first` (codegen)
            if owner is not None and relation is not None:
                self.run.rg.add_initial_ref(owner, relation, node.node_id)
            return
        if is_instance(value, torch.nn.parameter.UninitializedTensorMixin):
            raise BreakCompile(f"reads {source.describe()}, an uninitialized parameter of a lazy module "
                               "(the call that initializes it runs eagerly)")
        if (effects := lookup_effects(value)) is not None:
            # (before MagPy's own type tests and reads of it: a failing `isinstance` looks up
            # `__class__` through the hook; the program's own uses are refused where they run too)
            raise BreakCompile(f"reads {source.describe()}, which {effects}")
        node = self.run.rg.external(value, source, relation if owner is None else None)
        if owner is not None and relation is not None:
            self.run.rg.add_initial_ref(owner, relation, node.node_id)
        guard = guard_for_object(value, source)
        if guard is not None:
            self.add_guard(guard)
        owner = getattr(value, "__self__", None) if is_instance(value, BOUND_METHODS) else None
        if owner is not None and not is_immutable(owner) and not is_instance(owner, (type, types.ModuleType)):
            self.on_read(owner, AttrSource(source, "__self__"), ("attr", "__self__"), node)
        func = value.__func__ if is_instance(value, types.MethodType) else None
        if func is not None and not isinstance(func, types.FunctionType):
            # A callable object bound by its own __get__ (an lru_cache function set on a class):
            # CPython calls it unbound, ``func(self, ...)``, and the call decides on that object.
            self.on_read(func, AttrSource(source, "__func__"), ("attr", "__func__"), node)

    def _log_read(self, value: Any, source: Source) -> None:
        """Check mode: keep what was read where (lifted numbers change between calls by design)."""
        if source.describe() in self.run.lifted_values:
            return
        try:
            where = self.where() if self.run.at_instruction is not None else None
        except Exception:
            where = None
        self.run.read_log.append((source, value, where))

    def is_read_post(self, post) -> bool:
        """Is ``post`` that of a read from outside whose failure is what the program saw (failed_read)?"""
        return post == self.post_attr or post == self._post_item

    def failed_read(self, pending, exc) -> None:
        """A read from outside raised (``try: self.x except AttributeError``): the absence
        is what the program saw, so the guard checks it is still absent."""
        post, data = pending   # (data: the read's node, relation and source)
        if (post == self.post_attr and isinstance(exc, AttributeError)) or (
                post == self._post_item and isinstance(exc, (KeyError, IndexError))):
            self.add_guard(PresentGuard(data[2], data[1], False))

    def guard_identity(self, value: Any) -> None:
        """The program looked at ``value``'s identity (``is``, ``==`` without ``__eq__``, a
        hash-keyed lookup, ``id()``): an object from outside must stay that very object."""
        if is_immutable(value) or is_instance(value, torch.Tensor):
            return
        node = self.node(value)
        if node is not None and node.source is not None and not isinstance(node.source, ConstSource):
            self.add_guard(IdGuard(node.source, value))

    # -- facts the call rules read (magpy.monitor.calls, magpy.monitor.natives, magpy.monitor.annotated, magpy.monitor.scalars) ----------
    def read_absent(self, node: ShadowNode, name: str) -> None:
        """The object at ``node`` has no attribute ``name`` of its own (a tensor's ``__dict__``, a
        module's ``forward``): it must still have none."""
        self.add_guard(AbsentGuard.of(node.obj, node.source, name) if node.obj is not None
                       else AbsentGuard(node.source, name))

    def read_presence(self, src: Source, rel: tuple, present: bool) -> None:
        """``getattr(obj, name, default)`` / ``d.get(k, default)``: whether the relation was there."""
        self.add_guard(PresentGuard(src, rel, present))

    def read_hasattr(self, node: ShadowNode, name: str, answer: bool) -> None:
        """``hasattr(obj, name)`` of an object from outside answered ``answer``."""
        self.add_guard(HasAttrGuard(node.source, name, answer))

    def read_tensor_identity(self, node: ShadowNode, t: torch.Tensor) -> None:
        """A number that stands for this very tensor (``id(t)``, a memo key): a tensor from outside
        is otherwise guarded by its metadata only."""
        self.add_guard(IdGuard(node.source, t))

    def read_no_hooks(self, source: Source) -> None:
        """A module (or scripted module) called without hooks: it must still have none."""
        self.add_guard(NoHooksGuard(source))

    def read_module_hooks(self, node: ShadowNode, cls: type, tables: dict) -> None:
        """A module called with exactly these (pre-)hooks, in this order."""
        self.add_guard(ModuleHooksGuard(node.source, cls, tables))

    def read_module_call(self, node: ShadowNode, cls: type) -> None:
        """``module(x)`` runs ``cls.forward`` with no hooks (and ``__class__`` not swapped)."""
        self.add_guard(ModuleCallGuard(node.source, cls))

    def read_abc_registries(self, abc_module: Any, token: Any) -> None:
        """``isinstance``/``issubclass`` against an ABC: its answer holds while no ``register``
        changed the ABC registries (``abc.get_cache_token()``)."""
        self.add_guard(AbcTokenGuard(ConstSource(abc_module, "abc"), token))

    def read_cache_entry(self, entry: Any, label: str, result: Any) -> None:
        """A ``functools.lru_cache`` call answered from (or stored in) ``entry`` of its cache: the
        record holds while the cache still answers it with ``result`` without running the body."""
        self.add_guard(CacheEntryGuard(ConstSource(entry.table, f"the cache of {label}"), entry, result,
                                       entry.link(), entry.fn.cache_info().misses))

    def read_type(self, source: Source, value: Any) -> None:
        """A number read from outside and lifted: its value is a graph input, its type is guarded."""
        self.add_guard(TypeGuard(source, type(value)))

    def held_node(self, obj: Any) -> ShadowNode | None:
        """The node of ``obj``; classes and modules without one are held by the record itself."""
        node = self.node(obj)
        if node is None and isinstance(obj, (type, types.ModuleType)):
            node = self.run.rg.external(obj, ConstSource(obj, getattr(obj, "__qualname__", None) or obj.__name__))
        return node

    def from_outside(self, value: Any) -> bool:
        """Was ``value`` read from outside (it has a source, so it is guarded)?"""
        node = self.node(value)
        return node is not None and node.source is not None

    def full_read(self, value: Any, _depth: int = 0) -> None:
        """ValueRead of a container: its whole structure is guarded (paper §4.1, implicit visits)."""
        node = self.node(value)
        logged = node is not None and self.run.rg.has_logged_calls(node)
        if logged and node.node_id in self.run.set_entry_keys and all(m == "add" for m, _ in self.run.rg.logged_calls(node)):
            # A set read after adds: its contents at entry are guarded (in the order the program
            # saw) and the adds are still replayed on the real set, which leaves eager's table; a
            # set emptied and refilled would not (magpy.codegen refuses that).
            if not node.full_read:
                node.full_read = True
                if node.source is not None:
                    snap = node.snapshot
                    if not all(is_immutable(k) for k in snap):
                        raise BreakCompile(f"set of objects at {node.source.describe()} is read")
                    self.add_guard(ValueGuard(node.source, set(snap), self.run.set_entry_keys[node.node_id]))
            return
        if logged:
            # Read after logged changes: guard the state it had at entry (kept when the first
            # change was logged) and reproduce its final contents instead of replaying calls.
            self.run.rg.fold_calls(node)
            self.run.mutated.add(node.node_id)
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
        elif isinstance(value, MAPPINGS):
            keys = list(value.keys())
            if not all(is_immutable(k) or is_identity_key(k) for k in keys):
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
            self.add_guard(ValueGuard(src, frozenset(value) if isinstance(value, frozenset) else set(value),
                                      exact_key(value)))
            node.snapshot = set(value)

    def read_args(self, values, ann: Annotation | None = None, fn: Any = None) -> None:
        """Apply ValueRead to call inputs: containers guarded whole, tensor values -> dynamic.

        Reading a container's structure does not read the tensors it holds, except for
        functions in :data:`ELEMENT_READERS` (``sorted``, ``sum``, ``max``...).
        """
        if fn is not None:
            # (natives that read elements from an iterator made in the call: magpy.monitor.elements)
            why, gens = element_read(fn, list(values), ELEMENT_READERS)
            if why is not None:
                self.go_dynamic(why)
            self.run.value_read_gens.update((id(g.gi_frame), fn) for g in gens if g.gi_frame is not None)
        for i, v in enumerate(values):
            if ann is not None and not ann.reads(i):
                continue
            if isinstance(v, torch.Tensor):
                if fn is len:
                    self.check_shape_read(v, "`len`")
                if fn is len or fn is isinstance or self.value_guard(v):
                    continue   # len(tensor) is shape[0]: metadata
                self.go_dynamic(f"passes a tensor to `{getattr(fn, '__qualname__', fn)}`, which reads its value")
            if fn is len and type(v) in (list, tuple, dict, set, collections_deque):
                node = self.node(v)
                if node is not None and node.source is not None and not node.full_read \
                        and not self.run.rg.has_logged_calls(node) and node.node_id not in self.run.mutated:
                    # `len(self.heap)`: the length is what is read, not the items (the container's
                    # type is guarded where it was read; changes before this would need its entry state)
                    self.add_guard(LenGuard(node.source, len(v)))
                    continue
            if fn is len and items_unguarded(v) and self.from_outside(v):
                self.add_guard(LenGuard(self.node(v).source, len(v)))   # `len(buf)`: its length only
                continue
            if isinstance(v, _STORAGES) and self.node(v) is not None and self.node(v).source is not None:
                # (a tensor's storage from outside: its size and contents have no guard)
                self.go_dynamic(f"passes a tensor storage from outside to `{getattr(fn, '__qualname__', fn)}`")
            if fn is not iter and not isinstance(v, type) and hasattr(type(v), "__next__") and self.from_outside(v):
                # `list(it)`, `dict(zip_obj)`, `zip(it, ...)`: native code advances it (or will)
                self.check_stateful_iterator(v, f"passes to `{getattr(fn, '__qualname__', fn)}`")
            self.unguarded_items(v, f"passes to `{getattr(fn, '__qualname__', fn)}`")
            self.read_native_state(v)
            if isinstance(v, (*CONTAINER_TYPES, collections_deque, types.MappingProxyType)):
                self.full_read(v)
                elements = list(v.keys()) if isinstance(v, dict) else v   # iterating a dict gives keys
                if fn in ELEMENT_READERS and T.contains_tensor(elements):
                    self.go_dynamic(f"`{getattr(fn, '__qualname__', fn)}` reads the values of tensors in a container")

    # -- arguments (closure cells from outside: magpy.monitor.attrs) --------------------------------------------------------------------
    def bind_callee(self, frame: types.FrameType, code: types.CodeType, f_locals: Any) -> None:
        """Parameters of a called Python function that the monitor did not see passed.

        Defaults come from the function object (``f.__defaults__``/``__kwdefaults__``): they
        get that source and a guard, so a mutable default of a helper (a memo dict) is read
        and written like any outside object, and rebinding ``f.__defaults__`` is seen. Other
        unseen objects were made by C code during the call (``self`` in ``__init__``). ``f_locals``:
        the frame's locals, as :func:`magpy.capture.frame_locals` reads them.
        """
        be = capture.backend()
        fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
        nparams = code.co_argcount + code.co_kwonlyargcount
        nparams += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        defaults_of: dict[str, Source] = {}
        made = isinstance(fn, types.FunctionType) and getattr(self.node(fn), "source", 0) is None
        if isinstance(fn, types.FunctionType) and not made and id(fn) not in self.run.code_pinned:
            # `f.__code__ = other.__code__` changes what a guarded function does (one made in the call
            # cannot be). Once per function: a later entry's guard has the same source, so it would
            # be dropped as a duplicate.
            self.add_guard(IdGuard(AttrSource(ConstSource(fn, fn.__qualname__), "__code__"), code))
            self.run.code_pinned.add(id(fn))
        if isinstance(fn, types.FunctionType) and (fn.__defaults__ or fn.__kwdefaults__):
            fn_node = self.node(fn)
            fn_src = fn_node.source if fn_node is not None and fn_node.source is not None \
                else ConstSource(fn, fn.__qualname__)
            if fn.__defaults__:
                dsrc = self._defaults_source(fn, fn_src)
                first = code.co_argcount - len(fn.__defaults__)
                for j, name in enumerate(code.co_varnames[first:code.co_argcount]):
                    defaults_of[name] = ItemSource(dsrc, j)
            if fn.__kwdefaults__:
                ksrc = AttrSource(fn_src, "__kwdefaults__")
                self.on_read(fn.__kwdefaults__, ksrc)
                self.full_read(fn.__kwdefaults__)   # a dict: changed in place, so its contents are guarded
        first_param = code.co_varnames[0] if code.co_argcount else None
        packed = set(code.co_varnames[code.co_argcount + code.co_kwonlyargcount:nparams])
        for name in code.co_varnames[:nparams]:
            v = f_locals.get(name, NO_VALUE)
            if v is NO_VALUE or is_immutable(v) or is_instance(v, NO_NODE_TYPES) or self.node(v) is not None:
                continue
            src = defaults_of.get(name)
            if src is not None and fn.__defaults__[int(src.key)] is v:
                self.on_read(v, src)
            elif isinstance(v, torch.autograd.function.FunctionCtx):
                self.run.rg.new(v)   # `ctx` of a custom autograd.Function: made by Function.apply in C
            elif name == first_param and code.co_name in _CONSTRUCTORS:
                self.run.rg.new(v)   # the object being built: made by type.__call__ in C during this call
            elif name in packed:
                self.run.rg.new(v)   # the *args tuple / **kwargs dict the call itself built
            elif type(v) in (tuple, dict) and frame.f_back is not None and frame.f_back.f_code in CALL_IMPL_CODES:
                self.run.rg.new(v)   # a hook's `args`/`kwargs` from Module.__call__ (its own *args/**kwargs)

            # else: an object handed over by C code MagPy does not follow stays of unknown origin

    def _defaults_source(self, fn: types.FunctionType, fn_src: Source) -> Source:
        """``fn.__defaults__``'s source, guarded by identity (a tuple: identity pins every value).
        Once per function, source and tuple: a later entry's guard would be the same one, dropped
        as a duplicate."""
        pinned = self.run.defaults_pinned.get(id(fn))
        if pinned is not None and pinned[0] is fn and pinned[1] is fn.__defaults__ \
                and (pinned[2] is fn_src or pinned[2] == fn_src):
            return pinned[3]
        dsrc = AttrSource(fn_src, "__defaults__")
        self.add_guard(IdGuard(dsrc, fn.__defaults__))
        self.run.defaults_pinned[id(fn)] = (fn, fn.__defaults__, fn_src, dsrc)
        return dsrc

    def bind_packed_params(self, frame) -> None:
        """The ``*args`` tuple and ``**kwargs`` dict of the top frame are objects the call itself
        built, not the copies bound before the run: they get their sources here. (A parameter
        held in a cell, read by a comprehension or nested function, is never loaded by
        ``LOAD_FAST``, so nothing else would give the frame's own object its source.)"""
        f_locals = capture.frame_locals(frame)
        for name, src in self.run.param_sources.items():
            if isinstance(src, ArgSource) and src.kind in ("varpos", "varkw"):
                value = f_locals.get(name, NO_VALUE)
                self.run.frame_packed[name] = value   # (what a nested read of its cell finds)
                if value is not NO_VALUE and not is_immutable(value) and self.node(value) is None:
                    self.on_read(value, src, ("arg", name))

    def post_param(self, fs, stack, name):
        if self.run.lifted_values and self.lift_value(fs, stack, self.run.param_sources[name]):
            return   # a number argument that changes between calls: a graph input
        self.on_read(stack[-1], self.run.param_sources[name], ("arg", name))

    def post_param_pair(self, fs, stack, names):
        for k, (name, value) in enumerate(zip(names, stack[-2:])):
            if name in fs.unwritten_params and name not in fs.code.co_cellvars:
                if self.run.lifted_values and self.lift_value(fs, stack, self.run.param_sources[name], below=1 - k):
                    continue
                self.on_read(value, self.run.param_sources[name], ("arg", name))

    def post_nested_param(self, fs, stack, name):
        """The value is the very object the top frame's parameter ``name`` was called with: it
        has that parameter's source (an equal value stored by the call would have been guarded
        where it was read; the same object read twice gets the same guard)."""
        if stack and (stack[-1] is self.run.param_values[name] or stack[-1] is self.run.frame_packed.get(name, NO_VALUE)):
            self.post_param(fs, stack, name)

    # -- globals and imports -------------------------------------------------------------------
    def op_LOAD_GLOBAL(self, fs, ins, stack):
        name = ins.argval
        g = fs.frame.f_globals
        if self.run.rg.global_written(g, name):
            return
        if name in g:
            self.pend(fs, self._post_global, (g, name, ins))
            return
        b = fs.frame.f_builtins
        if isinstance(b, dict) and name in b:
            # A builtin: it stays one only while no global of that name appears, and it is that
            # very object while `builtins.name` is not rebound.
            self.add_guard(KeyAbsentGuard(ConstSource(g, f"{g.get('__name__', '?')}.__dict__"), name))
            self.pend(fs, self._post_global, (b, name, ins))

    def read_clause_names(self, frame, names: tuple) -> bool:
        """Read (as ``LOAD_GLOBAL`` does) and guard the ``except`` clauses' names a generator's close
        would test (:func:`~magpy.bytecode.flow.close_tests_only`): True when none of them can
        catch GeneratorExit, so that the close runs nothing a record would miss."""
        g, b = frame.f_globals, frame.f_builtins
        read = []
        for name in names:
            d = g if name in g else b if isinstance(b, dict) and name in b else None
            if d is None or self.run.rg.global_written(g, name):
                return False
            read.append((d[name], d, name))
            classes = d[name] if type(d[name]) is tuple else (d[name],)
            if not all(isinstance(c, type) and issubclass(c, BaseException) and not issubclass(GeneratorExit, c)
                       for c in classes):
                return False
        for value, d, name in read:
            if d is not g:
                self.add_guard(KeyAbsentGuard(ConstSource(g, f"{g.get('__name__', '?')}.__dict__"), name))
            self.on_read(value, GlobalSource(d, name), ("global", id(d), name))
        return True

    def _post_global(self, fs, stack, data):
        g, name, ins = data
        if self.run.lifted_values and DECODER.pushed(ins, stack) is stack[-1] \
                and self.lift_value(fs, stack, GlobalSource(g, name)):
            return
        # Imported modules, classes and functions are guarded like any other global:
        # rebinding `cfg`, `act` or `F` between calls is seen.
        self.on_read(DECODER.pushed(ins, stack), GlobalSource(g, name), ("global", id(g), name))

    def op_IMPORT_NAME(self, fs, ins, stack):
        """``import a.b`` / ``from .m import x``. With the module already in ``sys.modules`` the
        statement only looks it up there: what it leaves is read from outside through
        ``sys.modules[name]`` and guarded by identity (a module replaced there between calls is
        a miss). A module not imported yet would run its code on this import, which a record
        cannot replay: the call breaks here."""
        name, level, fromlist = ins.argval, stack[-2], stack[-1]
        self.note_write(None, "import", name)   # (binds names; the dynamic watchers keep it out of loops and arms)
        b = fs.frame.f_builtins
        imp = b.get("__import__") if isinstance(b, dict) else None
        if imp is not _BUILTIN_IMPORT:
            raise BreakCompile("`__import__` is replaced: the import statement calls another function")
        self.add_guard(IdGuard(ItemSource(ConstSource(b, "builtins.__dict__"), "__import__"), imp))
        if not isinstance(level, int) or level < 0:
            raise BreakCompile("an import statement with an unusual level")
        abs_name = name
        if level:
            g = fs.frame.f_globals
            package = g.get("__package__")
            if not isinstance(package, str) or not package or self.run.rg.global_written(g, "__package__"):
                raise BreakCompile("a relative import in a module without `__package__`")
            self.add_guard(ValueGuard(GlobalSource(g, "__package__"), package))
            abs_name = _absolute_import_name(name, package, level)
            if abs_name is None:
                raise BreakCompile("a relative import beyond the top-level package")
        mod = self._imported_module(abs_name)
        if fromlist:
            if hasattr(mod, "__path__") and any(x == "*" or x not in getattr(mod, "__dict__", {}) for x in fromlist):
                # `from pkg import sub` of a name the package lacks imports the submodule
                # (importlib's _handle_fromlist): it may run its code.
                raise BreakCompile(f"`from {abs_name} import ...` may import a submodule")
            result = abs_name
        elif "." in name:
            # `import a.b` binds the top package: `a` (or the package part of a relative name)
            result = abs_name[:len(abs_name) - len(name) + name.index(".")]
        else:
            result = abs_name
        if result != abs_name:
            mod = self._imported_module(result)
        self.on_read(mod, ItemSource(_SYS_MODULES, result))

    def _imported_module(self, name: str) -> Any:
        """``sys.modules[name]``, fully imported, pinned by identity; else a break."""
        mod = sys.modules.get(name)
        if mod is None or getattr(getattr(mod, "__spec__", None), "_initializing", False):
            raise BreakCompile(f"imports `{name}`, which is not imported yet (its first import runs "
                               "the module's code)")
        self.add_guard(IdGuard(ItemSource(_SYS_MODULES, name), mod))
        return mod

    # -- items of containers from outside -------------------------------------------------------
    def subscr(self, fs, container, key) -> None:
        if self.numpy_node(container) is not None and not T.contains_tensor(key):
            self.numpy_op(fs, "function", _operator.getitem, (container, key), {})   # a[i], a[idx], a[:k]
            return
        if self.run.loop_watcher.loop_indexes and self.run.loop_watcher.is_loop_element(container, key):
            self.pend(fs, self.post_new, 1)   # xs[i] in `for i in range(len(xs))` (magpy.dynamic.loops)
            return
        if self.run.scalar_nodes and not isinstance(container, torch.Tensor) and self.holds_scalar(key):
            self.scalar_escape("indexes a container with", key)
        if isinstance(container, torch.Tensor):
            self.pend_op(fs, "function", _getitem, [container, key], {}, "getitem")
            return
        if self.run.scalar_nodes and type(container) is str and self.scalar_node(container) is not None:
            # `s[:9]`, `s[0]` of text made from tensor values: a text node, or assumed
            if not self.text_op(fs, _getitem, (container, key)):
                self.scalar_escape("indexes", container)
                self.pend(fs, self.post_new, 1)
            return
        node = self.node(container)
        if T.tensor_in_index(key):   # (`xs[t]`, `words[:n]`: the items named depend on tensor values)
            raise BreakCompile("indexes a Python container with a tensor")
        if node is not None and node.source is not None and type(key) is not slice \
                and (is_immutable(key) or (isinstance(container, dict) and self.outside_identity_key(key))) \
                and isinstance(container, (list, tuple, *MAPPINGS, collections_deque)) \
                and (type(key) is int or not isinstance(container, collections_deque)) \
                and not hasattr(type(container), "__missing__"):
            # (a dict whose class has `__missing__` is read whole: its keys are guarded before any
            # item, so the guard's `d[k]` never runs `__missing__`, which a missing key would)
            rel = ("item", key)
            if self.run.rg.read(node, rel) is None and node.node_id not in self.run.mutated:
                if not self._positions_moved(node, key):
                    self.pend(fs, self._post_item, (node, rel, ItemSource(node.source, key)))
                    return
                # logged calls moved the items (`xs.insert(0, v)`, `q.appendleft(v)`) before this
                # read: guarded whole at its entry state, the item is what it holds now
                self.full_read(container)
        elif node is not None and node.source is not None \
                and isinstance(container, (list, tuple, *MAPPINGS, collections_deque)):
            self.full_read(container)
        else:
            self.unguarded_items(container, "reads an item of")
        self.pend(fs, self.post_new, 1)

    def outside_identity_key(self, key: Any) -> bool:
        """A dict key found by identity, of objects from outside: a class, function or module, or
        a tuple of them (``_KL_MEMOIZE[type(p), type(q)]``)."""
        parts = key if type(key) is tuple and key else (key,)
        return all(_identity_key(k) and self.from_outside(k) for k in parts)

    def _positions_moved(self, node: ShadowNode, key: Any) -> bool:
        """Did calls logged on a sequence this run (:meth:`log_mutation`) move its items, so
        that index ``key`` no longer names the item it named at entry?"""
        logged = self.run.rg.logged_calls(node)
        if type(key) is not int or not logged:
            return False
        shifting = ("insert", "appendleft", "extendleft") + (("append", "extend") if key < 0 else ())
        if any(method in shifting for method, _args in logged):
            return True
        # (`xs.append(v); xs[0]` on a list empty at entry reads the item the run appended: an
        # item source names an entry item only below the entry length)
        entry = getattr(node, "snapshot", None)
        return entry is None or key >= len(entry)

    def unguarded_items(self, value: Any, what: str) -> None:
        """The program reads the items of ``value`` in native code (``a[i]``, ``for x in a``,
        ``sum(a)``): a container from outside whose items MagPy cannot guard one by one
        (:func:`items_unguarded`: ``array.array``, ``bytearray``, ``memoryview``...) makes the
        read dynamic. Its items have no source; taking them as values of the record would bake
        in what this run saw."""
        if items_unguarded(value):
            node = self.node(value)
            if node is None or node.source is not None:
                where = node.source.describe() if node is not None else "an object of unknown origin"
                raise BreakCompile(f"{what} a `{type(value).__name__}` from outside ({where}), "
                                   "whose items MagPy cannot guard")

    def _post_item(self, fs, stack, data):
        node, rel, src = data
        if self.run.lifted_values and self.lift_value(fs, stack, src):
            return
        self.on_read(stack[-1], src, rel, node)

    def check_stateful_iterator(self, it, what: str) -> None:
        """An iterator is state: advancing one that exists outside the call cannot be replayed."""
        node = self.node(it)
        if node is None or node.source is not None:
            self.go_dynamic(f"{what} an iterator that exists outside the call ({type(it).__name__}): "
                          "each call advances it")

    # -- identity and membership ----------------------------------------------------------------
    def op_IS_OP(self, fs, ins, stack):
        a, b = stack[-2], stack[-1]
        if self.run.scalar_nodes and (self.scalar_node(a) is not None or self.scalar_node(b) is not None) \
                and not any(a is s or b is s for s in _SINGLETONS):
            self.go_dynamic("compares the identity of a number read from a tensor value")
        na, nb = self.node(a), self.node(b)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            # Tensors from outside are not identity-guarded: guard this relation itself.
            if na is not None and nb is not None and na.source is not None and nb.source is not None:
                self.add_guard(SameGuard(na.source, nb.source, a is b))
            elif (na is None or na.source is not None) and (nb is None or nb.source is not None) \
                    and not (is_immutable(a) or is_immutable(b)):   # (`flag is True`: the types decide)
                raise BreakCompile("compares the identity of tensors of unknown origin")
            return
        if any(a is s or b is s for s in _SINGLETONS):
            # `x is None`: decided by the type or value guard every object from outside has
            return
        if na is not None and nb is not None and na.source is not None and nb.source is not None:
            # two objects from outside: the relation is guarded (`self.cache is acc`), not which objects
            self.add_guard(SameGuard(na.source, nb.source, a is b))
            return
        if (na is not None and na.source is None) or (nb is not None and nb.source is None):
            return   # an object made in the call is none from outside: the outcome is the path's
        for v in (a, b):   # (`eps is DEFAULT_EPS`: equal floats, strings, tuples are not one object)
            for src in self.run.immutable_sources.get(id(v), (None, ()))[1] if is_immutable(v) else ():
                self.add_guard(IdGuard(src, v))
        self.guard_identity(a)
        self.guard_identity(b)

    def post_contains(self, fs, stack, data):
        node, needle, inverted = data
        self.add_guard(ContainsGuard(node.source, needle, bool(stack[-1]) != inverted))

    # -- values read through torch: a getter of process-wide state, a small tensor's values -----------
    def state_read(self, target: Any, name: str, args: Any, output: Any, raised: type | None = None) -> None:
        """``torch.<name>(*args)`` (or a native named ``name``: ``sys.getrecursionlimit``) answered ``output``
        (or raised ``raised``) from process-wide state that no argument shows (``torch.is_anomaly_enabled()``):
        guarded as that answer."""
        torch_fn = (getattr(target, "__module__", None) or "").startswith("torch")
        self.add_guard(StateReadGuard(ConstSource(target, f"torch.{name}" if torch_fn else name), tuple(args),
                                      output, raised))

    def value_guard(self, t: torch.Tensor) -> bool:
        """A read of a small tensor from outside (a buffer, a scalar argument): guard its value.

        Only where that is sound and cheap: a CPU tensor (reading a GPU value is a device
        sync on every call), not a trainable parameter (its value changes every step, so
        the guard would only recompile), read as it came in, before any operator of this
        run changed a tensor in place (through a view it may alias). NaN compares equal
        to NaN in the guard.
        """
        node = self.node(t)
        if type(t) is not torch.Tensor:
            return False   # a subclass: its own reads would run its __torch_function__
        if node is None or node.source is None or t.numel() > 64 or t.requires_grad or t.device.type != "cpu" \
                or self.run.graph_mutates or type(t) is not torch.Tensor:
            return False
        n = self.run.graph.node_of(t)
        if n is not None and n.op != "placeholder":
            return False
        self.add_guard(TensorValueGuard(node.source, t.dtype, t.tolist()))
        return True

