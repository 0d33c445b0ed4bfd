"""Attribute reads of a monitor run, with CPython's lookup precedence (paper §4.1).

``obj.name`` is read from outside where ``obj`` has a source: the value gets the source
``obj.name`` (fetched straight from where this run found it: the instance ``__dict__``, an
``nn.Module`` table, a module's dict) and guards that CPython's lookup still ends there (no data
descriptor on the class, no instance attribute shadowing a class attribute, the class's
``__getattribute__``/``__getattr__`` unchanged). A class attribute, method, property or
descriptor found on the MRO is guarded on the class dicts (:meth:`AttrReads.guard_class_attr`),
and so is every dunder an operator looks up on its operands' types (:meth:`AttrReads.guard_protocol`).
The other reads (arguments, cells, globals, items) are :mod:`magpy.monitor.reads`.
"""
from __future__ import annotations

import functools
import types
from typing import Any

import torch

from .. import capture
from ..annotations import torch_ops as T
from ..breaks import BreakCompile
from ..bytecode import DECODER
from ..bytecode.resume import passed_free_cells
from ..guards import (
    AbsentGuard,
    EmptyCellGuard,
    IdGuard,
    KeyAbsentGuard,
    LeafGuard,
    StateReadGuard,
    TypeGuard,
    ValueGuard,
    cell_is_empty,
)
from ..objmodel import (
    NO_NODE_TYPES,
    NO_VALUE,
    PROTOCOL_EVENTS,
    attr_location,
    dunder_index,
    has_instance_dict,
    is_immutable,
    is_instance,
    is_mutable_class,
    lookup_effects,
    protocol_lookups,
)
from ..realtype import (
    class_lookup,
    class_mro,
    class_namespace,
    class_owner,
    class_qualname,
    instance_dict,
    runs_lookup_hook,
)
from ..refgraph import ShadowNode
from ..source import AttrSource, CellSource, ConstSource, ItemSource, class_dict_source, class_field_source


def _module_getattr(module: types.ModuleType) -> Any:
    """The module-level ``__getattr__`` function (PEP 562) a plain module calls for names it
    lacks, or None (also for module classes that compute names themselves)."""
    fn = module.__dict__.get("__getattr__")
    if isinstance(fn, types.FunctionType) and type(module).__getattribute__ is types.ModuleType.__getattribute__ \
            and getattr(type(module), "__getattr__", None) is getattr(types.ModuleType, "__getattr__", None):
        return fn
    return None



def raw_cell(frame: Any, idx: int) -> Any:
    """The closure cell ``idx`` of the function ``frame`` runs, or None where that cannot be told."""
    be = capture.backend()
    fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
    return fn.__closure__[idx] if fn is not None and fn.__closure__ is not None else None

class AttrReads:
    """Attribute lookups of a monitor run (a rule object of the run): the sources and guards of
    ``obj.name``, of ``super().name`` and of the dunders operators look up."""

    #: what it calls of the run and of the other rules (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("add_guard", "assume", "check_shape_read", "from_outside", "full_read", "go_dynamic",
            "guard_identity", "held_node", "lift_value", "new_outputs", "node", "numpy_node",
            "numpy_op", "on_read", "pend", "record_op", "scalar_escape", "scalar_node",
            "shape_is_lifted", "start_size_read", "tensor_grad_read", "tensor_user_attr", "to_arg")

    def __init__(self, run) -> None:
        self.run = run   # (the run's state: frames, graphs, guards, switches)

    # -- dunders and class attributes -----------------------------------------------------------
    def guard_protocol(self, ins, stack: list) -> None:
        """An instruction that looks up dunders on its operands' types (``a + b``, ``if a``,
        ``a[k]``, ``with a``): what each lookup finds, or that it finds nothing, is outside state
        (``C.__add__ = f`` between calls changes the program)."""
        event = ins.opname if ins.opname in PROTOCOL_EVENTS else ins.real
        symbol = ins.argrepr if event == "BINARY_OP" else ins.argval
        for value, names in protocol_lookups(event, symbol, stack):
            self._guard_dunders(value, names)

    def _guard_dunders(self, value: Any, names) -> None:
        """Pin ``type(value)`` and what looking up each of ``names`` on it finds."""
        node = self.node(value)
        if node is not None and node.source is not None and not isinstance(node.source, ConstSource):
            self.add_guard(TypeGuard(node.source, type(value)))   # identity guards do not pin `__class__`
        for name in names:
            self.guard_class_attr(type(value), name)

    def guard_dunder_entry(self, frame, code, f_locals) -> None:
        """A frame entered by the interpreter for a dunder of its first argument's class (``len(c)``
        runs ``C.__len__``, ``sorted`` runs ``__lt__``): which function the class holds there is
        outside state, as for the operators :meth:`guard_protocol` sees."""
        if not code.co_argcount:
            return
        first = f_locals.get(code.co_varnames[0], NO_VALUE)
        cls = type(first)
        if not is_mutable_class(cls) or is_instance(first, (torch.Tensor, type)):
            return
        be = capture.backend()
        fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
        if isinstance(fn, types.FunctionType):
            held = self.run.dunder_indexes.get(id(cls))
            if held is None:   # (once per class and run: a module tree enters forward of each of its modules)
                held = self.run.dunder_indexes[id(cls)] = (cls, dunder_index(cls))
            names = held[1].get(id(fn))
            if names:
                self._guard_dunders(first, names)

    def guard_class_attr(self, cls: type, name: str, after: type | None = None) -> None:
        """``cls.name`` resolved through the MRO: the class that defines it still holds the same
        object and no class before it in the MRO has gained one (methods, properties,
        staticmethods and class values replaced on a class, or reached through ``super()``,
        which starts the search ``after`` a class).

        Once per run for each ``(cls, name, after)``: the guards describe the classes as the call
        found them, so a second lookup adds nothing a first did not (a class changed during the
        call is a write of the run, never a guard on its state at entry)."""
        key = (id(cls), name, id(after))
        done = self.run.class_attrs_guarded
        if key in done:
            return
        done[key] = (cls, after)   # (held: an id is unique only while its object lives)
        # (the classes read through `type`'s descriptors: a metaclass's `__getattribute__` of the
        # program's runs at none of these reads, which eager does not make)
        whole = mro = class_mro(cls)
        if after is not None and after in mro:
            mro = mro[mro.index(after) + 1:]
        if is_mutable_class(cls):
            # the MRO itself: `C.__bases__ = (...)` gives C a new `__mro__` tuple
            self.add_guard(IdGuard(class_field_source(cls, "__mro__"), whole))
        for klass in mro:
            ns = class_namespace(klass)
            if not is_mutable_class(klass):
                if name in ns:
                    return   # found in a class that cannot change (object, a builtin or extension type)
                continue
            if name in ns:
                value = ns[name]
                ksrc = class_dict_source(klass)
                if is_immutable(value):
                    self.add_guard(ValueGuard(ItemSource(ksrc, name), value))
                else:
                    self.add_guard(IdGuard(ItemSource(ksrc, name), value))
                return
            self.add_guard(AbsentGuard(ConstSource(klass, class_qualname(klass)), name))


    def op_IMPORT_FROM(self, fs, ins, stack):
        """``from m import name``: an attribute read of the module ``m`` (sourced where the
        import found it), guarded like any other (``m.name = ...`` between calls is a miss)."""
        mod, name = stack[-1], ins.argval
        if type(mod) is types.ModuleType and name not in mod.__dict__ and "__getattr__" not in mod.__dict__ \
                and not hasattr(types.ModuleType, name):
            # the interpreter falls back to `sys.modules["m.name"]` (a submodule being imported)
            raise BreakCompile(f"`from ... import {name}` of a submodule that is not an attribute of its package")
        self._attr(fs, mod, name, method=False)

    # -- attribute loads -----------------------------------------------------------------------------
    def op_LOAD_ATTR(self, fs, ins, stack):
        if self.numpy_node(stack[-1]) is not None:
            if ins.method or callable(getattr(stack[-1], ins.argval, None)):
                return   # a method: the call decides (a numpy node, or an assumption)
            # `a.shape`, `a.T`, `a.dtype`: a node; an array is followed, anything else assumed
            self.numpy_op(fs, "function", getattr, (stack[-1], ins.argval), {})
            return
        if self.run.scalar_nodes and self.scalar_node(stack[-1]) is not None:
            self.scalar_escape(f"reads attribute `{ins.argval}` of", stack[-1])
        self._attr(fs, stack[-1], ins.argval, method=ins.method)

    def op_LOAD_SUPER_ATTR(self, fs, ins, stack):
        # `super().name` (3.12+) without a super object: the lookup starts after `cls` in the
        # MRO of self's class; `cls` and `self` were loaded (and guarded) like any cell or local.
        sup, cls, obj = stack[-3], stack[-2], stack[-1]
        if sup is not super or not is_instance(cls, type):
            raise BreakCompile("`super` is rebound: LOAD_SUPER_ATTR calls another object")
        self_cls = obj if is_instance(obj, type) and issubclass(obj, cls) else type(obj)
        self.guard_class_attr(self_cls, ins.argval, after=cls)
        self.pend(fs, self._post_new_attr, ins.method)

    def attr_read(self, fs, obj, name: str) -> None:
        """``getattr(obj, name[, default])`` of a name Python code computes: read as ``obj.name`` is."""
        self._attr(fs, obj, name, method=False)

    def _attr(self, fs, obj, name: str, method: bool) -> None:
        if (effects := lookup_effects(obj)) is not None:
            raise BreakCompile(f"reads `.{name}` of a `{type(obj).__name__}`, which {effects}")
        if name == "__dict__" and is_instance(obj, type):
            self.pend(fs, self.post_class_dict, obj)   # (a read-only view: guarded where read)
            return
        if is_instance(obj, torch.Tensor):
            if name == "is_leaf":
                node = self.node(obj)
                if node is not None and node.source is not None:
                    self.add_guard(LeafGuard(node.source, obj.is_leaf))   # not part of the tensor check
                elif node is None:
                    raise BreakCompile("reads `is_leaf` of a tensor of unknown origin")
            if name in ("shape", "ndim"):
                self.check_shape_read(obj, f"reads `.{name}`")
            if name == "shape" and self.shape_is_lifted(obj):
                self.start_size_read(fs, obj, "shape")
                return
            if name in T.META_ATTRS or method or callable(getattr(type(obj), name, None)):
                return   # metadata (guarded statically) or a bound method, classified when called
            if name in T.OP_ATTRS:
                self.pend(fs, self._post_tensor_attr, (obj, name), opaque=True)
                return
            if name in (instance_dict(obj) or {}) and class_owner(type(obj), name) is None:
                # an attribute set on the tensor object (`self.weight.fast`): read like any attribute
                self.tensor_user_attr(fs, obj, name)
                return
            if name == "grad":
                self.tensor_grad_read(fs, obj)
                return
            raise BreakCompile(f"reads tensor attribute `{name}`")
        if type(obj) is super:
            self_cls = obj.__self_class__
            if self_cls is not None:
                self.guard_class_attr(self_cls, name, after=obj.__thisclass__)
        # A class or module reached without a path (`type(self)`, `cls` in a classmethod, a
        # module imported inside a function) is held by the record; its attributes are guarded.
        node = self.held_node(obj)
        if node is not None and is_instance(obj, torch.jit.ScriptModule):
            # A scripted module keeps its methods, parameters and attributes in C++ (read through
            # its __getattr__, not followed): the value read is what the record sees.
            self.pend(fs, self._post_script_attr, (obj, node, name, method), opaque=True)
            return
        if node is None and not is_immutable(obj) and not is_instance(obj, NO_NODE_TYPES):
            # An object MagPy never saw arrive (passed by C code it does not follow): its
            # attributes could be outside state with no path to guard them.
            raise BreakCompile(f"reads attribute `{name}` of a {type(obj).__name__} whose origin MagPy did not see")
        # (where the class resolves it: found once, for the descriptor test and the guards below;
        # nothing between them changes the object or its class)
        location = attr_location(obj, name) if node is not None and not is_instance(obj, (type, types.ModuleType)) else None
        if location is not None and location[0] == "descriptor":
            if node.source is not None and _cached_property_miss(obj, name):
                self._cached_property(fs, obj, node, name, method)
                return
            # Its __get__ runs monitored with the descriptor object as `self`: an object the
            # class holds (pinned), its attributes outside state like any other.
            if node.source is not None:
                if has_instance_dict(obj):
                    self.add_guard(AbsentGuard.of(obj, node.source, name))
                self.add_guard(TypeGuard(node.source, type(obj)))
            self.guard_class_attr(type(obj), name)
            klass = class_owner(type(obj), name)
            ksrc = class_dict_source(klass)
            self.on_read(klass.__dict__[name], ItemSource(ksrc, name))
            self.pend(fs, self._post_new_attr, method)
            return
        if node is None or node.source is None:
            if node is not None and not is_instance(obj, (type, types.ModuleType)):
                self._class_side_of_new(obj, name)
            opaque = is_instance(obj, torch.nn.Module)
            self.pend(fs, self._post_new_attr, method, opaque=opaque)
            return
        rel = ("attr", name)
        if self.run.rg.read(node, rel) is not None:
            # read before: the value is the one the first read guarded, taken the same way (a
            # module class's `__getattr__`, torch._VF's, ran unmonitored then, and does again)
            self.pend(fs, self._post_new_attr, method, opaque=is_instance(obj, (torch.nn.Module, types.ModuleType)))
            return
        where, via = location if location is not None else attr_location(obj, name)
        if where in ("class_fn", "property", "class_value"):
            if has_instance_dict(obj) and where != "property":
                # Found on the class: an instance attribute of that name set later would shadow it
                # (not a property's: a data descriptor comes first, whatever the instance holds).
                self.add_guard(AbsentGuard.of(obj, node.source, name))
            if not is_instance(obj, (type, types.ModuleType)):
                self.add_guard(TypeGuard(node.source, type(obj)))   # identity guards do not pin `__class__`
            self.guard_class_attr(type(obj), name)
        if where == "class_fn":
            klass = class_owner(type(obj), name)
            if klass is not None and type(class_namespace(klass)[name]) is staticmethod:
                # `self.helper` of a staticmethod is the function the class holds (its identity
                # guarded with the class attribute): sourced, so what its closure holds (an
                # `lru_cache` wrapper) is read through it
                fn = class_namespace(klass)[name].__func__
                self.on_read(fn, AttrSource(ItemSource(class_dict_source(klass), name), "__func__"))
            self.pend(fs, self._post_new_attr, method)
            return
        if where == "property":
            self.pend(fs, self._post_new_attr, method)   # the getter runs monitored
            return
        if where == "getattr_hook":
            # The class's Python `__getattr__` computes the name (runs monitored): it stays absent
            # from the instance and the class, and the class keeps that very function.
            if has_instance_dict(obj):
                self.add_guard(AbsentGuard.of(obj, node.source, name))
            self.add_guard(TypeGuard(node.source, type(obj)))
            self.guard_class_attr(type(obj), name)
            self.guard_class_attr(type(obj), "__getattribute__")
            self.guard_class_attr(type(obj), "__getattr__")
            self.pend(fs, self._post_new_attr, method)
            return
        module_getattr = _module_getattr(obj) if where == "module" and via == "" else None
        if module_getattr is not None:
            # PEP 562: the module's own `__getattr__` computes the name (a lazy import, a
            # deprecation shim, a counter): it runs monitored, like a property's getter, while
            # the name stays absent from the module and the function stays the module's.
            self.add_guard(AbsentGuard.of(obj, node.source, name))
            self.on_read(module_getattr, AttrSource(node.source, "__getattr__", "__dict__"))
            self.pend(fs, self._post_new_attr, method)
            return
        self.guard_attr_precedence(obj, node, name, where, via)
        # (where the class's own `__getattribute__` runs at this read, unmonitored, the guard reads
        # it the program's way, which runs the hook as the program does: through a table,
        # `obj.__dict__`, it would run it for another name)
        src = AttrSource(node.source, name, "" if via and runs_lookup_hook(obj) else via)
        self.pend(fs, self.post_attr, (node, rel, src, method), opaque=True)

    def _cached_property(self, fs, obj, node: ShadowNode, name: str, method: bool) -> None:
        """``obj.name`` of a ``functools.cached_property`` not yet in ``obj.__dict__``: a cache, as
        an ``lru_cache`` function is (:mod:`magpy.monitor.cached_calls`). Eager runs the getter on this
        first read only (under the descriptor's lock on CPython 3.11) and keeps the value in the
        instance dict, where every later call finds it without running the getter. So the getter
        runs unmonitored here, and the value is read from where later calls read it,
        ``obj.__dict__[name]``: the record holds while the instance dict keeps that value (a
        ``del obj.name`` makes the next call a miss, whose monitor run runs the getter again)."""
        cls = type(obj)
        self.add_guard(TypeGuard(node.source, cls))
        self.guard_class_attr(cls, name)
        self.guard_class_attr(cls, "__getattribute__")
        # A getter that raises keeps nothing: eager runs it again on every call, so the run ends
        # dynamic unless the read returns (Monitor.after_call), as for an lru_cache's miss.
        self.run.cached_misses[id(obj), name] = f"{cls.__qualname__}.{name}"
        self.pend(fs, self._post_cached_property, (obj, node, name, method), opaque=True)

    def _post_cached_property(self, fs, stack, data):
        obj, node, name, method = data
        self.run.cached_misses.pop((id(obj), name), None)
        value = DECODER.method_result(stack)[0] if method else stack[-1]
        if (instance_dict(obj) or {}).get(name, NO_VALUE) is not value:
            raise BreakCompile(f"reads cached property `{type(obj).__name__}.{name}`, which kept no value in the instance")
        self.on_read(value, AttrSource(node.source, name, "__dict__"), ("attr", name), node)

    def _class_side_of_new(self, obj, name: str) -> None:
        """``h.scale`` / ``h.apply`` of an object made in the call, found on its class (a class
        from outside, state like any other: ``Helper.scale = 10`` between calls): the class
        attribute is guarded as through the class, and a value found there is read from it.
        (Its instance dict is the call's own; a class made in the call is the call's too.)"""
        cls = type(obj)
        cls_node = self.node(cls)
        if cls_node is not None and cls_node.source is None:
            return
        where, _ = attr_location(obj, name)
        if where in ("class_fn", "property", "class_value", "descriptor", "getattr_hook"):
            self.guard_class_attr(cls, name)
        if where == "getattr_hook":
            self.guard_class_attr(cls, "__getattribute__")
            self.guard_class_attr(cls, "__getattr__")
        if where in ("class_fn", "class_value"):
            klass = next((k for k in cls.__mro__ if name in k.__dict__ and is_mutable_class(k)), None)
            if klass is not None:
                self.on_read(klass.__dict__[name], ItemSource(class_dict_source(klass), name))

    def guard_attr_precedence(self, obj, node: ShadowNode, name: str, where: str, via: str) -> None:
        """``obj.name`` fetched straight from where this run found it (the instance ``__dict__``,
        an nn.Module table): the record also holds only while CPython's lookup still ends there.
        A data descriptor on ``type(obj).__mro__`` comes before the instance dict; the instance
        dict and any class attribute come before ``nn.Module.__getattr__``, which searches
        ``_parameters``, ``_buffers``, ``_modules`` in that order. Guarded on held class dicts
        (batched): the class is the same, what the MRO lookup of ``name`` finds (or that it finds
        nothing) is unchanged, no class gained a ``__getattribute__``; for a table entry, the name
        is absent from the instance dict and from the tables searched before it."""
        if where not in ("instance", "module_table") or is_instance(obj, (type, types.ModuleType)):
            return
        cls = type(obj)
        self.add_guard(TypeGuard(node.source, cls))   # (identity guards do not pin `__class__`)
        self.guard_class_attr(cls, name)
        self.guard_class_attr(cls, "__getattribute__")
        if where == "module_table":
            self.add_guard(AbsentGuard.of(obj, node.source, name))
            self.guard_class_attr(cls, "__getattr__")
            for table in ("_parameters", "_buffers", "_modules"):
                if table == via:
                    break
                self.add_guard(KeyAbsentGuard(AttrSource(node.source, table, "__dict__"), name))

    def post_attr(self, fs, stack, data):
        node, rel, src, method = data
        value, unbound = DECODER.method_result(stack) if method else (stack[-1], False)
        if unbound:
            # An unbound function from the class; `self` stays as it was. A callable object that
            # binds like a function (a method descriptor: an lru_cache function on a class) is
            # called as itself: it is read from the class dict the lookup found it in.
            if not isinstance(value, types.FunctionType) and node.obj is not None:
                klass = next((k for k in type(node.obj).__mro__ if k.__dict__.get(rel[1]) is value), None)
                if klass is not None:
                    self.on_read(value, ItemSource(class_dict_source(klass), rel[1]))
            return
        if self.run.lifted_values and not method and self.lift_value(fs, stack, src):
            return
        self.on_read(value, src, rel, node)

    def post_class_dict(self, fs, stack, klass):
        """``C.__dict__`` (or ``vars(C)``): a live, read-only view of the class's namespace, read
        like a dict from outside (``"forward" in C.__dict__``, ``C.__dict__.get(name)``): each
        read is guarded on ``C.__dict__`` of that very class, any other use reads it whole."""
        proxy = stack[-1]
        if isinstance(proxy, types.MappingProxyType):
            self.on_read(proxy, class_dict_source(klass))

    def _post_script_attr(self, fs, stack, data):
        obj, node, name, method = data
        value = DECODER.method_result(stack)[0] if method else stack[-1]
        if isinstance(value, torch._C.ScriptMethod) or node.source is None:
            # Which compiled method runs is fixed by the module object: guard that object.
            self.guard_identity(obj)
            self.new_outputs([value])
            return
        self.on_read(value, AttrSource(node.source, name), ("attr", name), node)

    def read_storage_layout(self, kind: str, target: Any, name: str, args: Any, kwargs: dict, output: Any) -> None:
        """``x.storage_offset()``, ``x.is_set_to(y)``: where tensors sit in their storages (tensor guards
        do not pin it). A tensor from outside: its offset is guarded; else the answer is assumed."""
        tensors = T.tensors_in(args, kwargs)
        if name == "storage_offset" and len(tensors) == 1 and type(output) is int and self.from_outside(tensors[0]):
            self.add_guard(StateReadGuard(AttrSource(self.node(tensors[0]).source, name), (), output))
            return
        node = self.run.graph.call(kind, target, tuple(self.to_arg(a) for a in args),
                               {k: self.to_arg(v) for k, v in kwargs.items()})
        self.assume("scalar", node, output)

    def read_native_state(self, value: Any) -> None:
        """Native code reads the state of ``value`` to make text of it (``str(e)``, ``repr(e)``,
        ``f"{e}"``). An exception's text comes from attributes no instruction read (``args``;
        an ``OSError``'s ``errno``, ``strerror``, ``filename``, ``filename2``): for an exception
        from outside, read them here, guarded as if the program had read them."""
        if not isinstance(value, BaseException):
            return
        node = self.node(value)
        if node is None or node.source is None:
            return
        names = ("args", "errno", "strerror", "filename", "filename2") if isinstance(value, OSError) else ("args",)
        for name in names:
            if self.run.rg.read(node, ("attr", name)) is not None:
                continue   # (read, or written by the call, already)
            v = getattr(value, name)
            if T.contains_tensor(v) or isinstance(v, torch.Tensor):
                self.go_dynamic(f"makes text of an exception from outside holding a tensor ({node.source.describe()})")
            self.on_read(v, AttrSource(node.source, name), ("attr", name), node)
            if type(v) in (tuple, list):
                self.full_read(v)

    def _post_new_attr(self, fs, stack, method):
        self.new_outputs([DECODER.method_result(stack)[0] if method else stack[-1]])

    def _post_tensor_attr(self, fs, stack, data):
        obj, name = data
        self.record_op("function", getattr, [obj, name], {}, stack[-1], True, name)

    # -- closure cells from outside (`LOAD_DEREF` of a free variable) ---------------------------------
    def cell_of(self, fs, idx):
        if fs.is_top:
            return self.run.top_closure[idx] if idx < len(self.run.top_closure) else None
        if idx in passed_free_cells(fs.code):
            return None   # a cell of the split call, passed to its resume function (magpy.splits)
        fn = capture.backend().frame_function(fs.frame) if hasattr(capture.backend(), "frame_function") else None
        if fn is None or fn.__closure__ is None:
            return None
        cell = fn.__closure__[idx]
        fn_node = self.node(fn)
        if fn_node is not None and fn_node.source is None:
            # A closure created during this call: its cells are the call's own (made by
            # MAKE_CELL in a monitored frame), except those passed down from the closure of the
            # compiled function or of a function from outside, which outlive the call
            # (`lambda k: table[k]` over such a free variable reads outside state).
            if self.run.outside_cells.get(id(cell)) is not cell:
                return None
        return cell

    def post_cell(self, fs, stack, cell):
        self.on_read(stack[-1], CellSource(ConstSource(cell, "cell")), None)

    def read_cell(self, fs, cell) -> None:
        """A load of a closure cell from outside: its contents as loaded, or that it is empty
        (the load raises ``NameError``; a record made so holds only while the cell stays empty)."""
        if cell_is_empty(cell):
            self.add_guard(EmptyCellGuard(ConstSource(cell, "cell")))
        else:
            self.pend(fs, self.post_cell, cell)


def _cached_property_miss(obj: Any, name: str) -> bool:
    """Is ``obj.name`` the first read of a ``functools.cached_property`` (the stdlib's getter,
    keeping its value under ``name`` in an instance dict that does not hold it yet)?"""
    cp = class_lookup(type(obj), name)
    return isinstance(cp, functools.cached_property) and type(cp).__get__ is functools.cached_property.__get__ \
        and getattr(cp, "attrname", None) == name and has_instance_dict(obj) and name not in instance_dict(obj)
