"""Parameter binding: the source of every parameter, in the top frame and in called frames.

Before a monitor run, each parameter of the function being compiled gets a
:class:`~magpy.source.Source` that the guard and the mock use to fetch it again on the
next call: ``args[i]`` for positional arguments, ``kwargs[name]`` for keywords, the
default value itself (held by the record) for parameters not passed, and the compiled
module as ``self``::

    >>> def f(x, y=2, *rest, k, **kw): ...
    >>> sources, values, shape = bind_parameters(f, None, (1,), {"k": 3})
    >>> {n: s.expr() for n, s in sources.items()}["k"], shape
    ("kwargs['k']", (1, ('k',)))

Called Python functions bind their own parameters (:func:`bind_callee`): a default value is
reached through ``f.__defaults__``/``f.__kwdefaults__`` and guarded there.
"""
from __future__ import annotations

import inspect
import types
from typing import TYPE_CHECKING, Any

import torch

from . import capture
from .guards import AbsentGuard, IdGuard, TypeGuard, ValueGuard
from .objmodel import NO_NODE_TYPES, NO_VALUE, is_immutable
from .source import ArgSource, AttrSource, ConstSource, ItemSource, SelfArgsSource, Source

if TYPE_CHECKING:
    from .monitor import Monitor


def bind_parameters(fn, self_obj, args: tuple, kwargs: dict) -> tuple[dict[str, Source], dict[str, Any], tuple]:
    """Sources for every parameter of the top frame: positional, keyword, defaults, ``self``.

    Returns (sources, values, call_shape). Raises TypeError exactly as the call would.
    """
    sig = inspect.signature(fn, follow_wrapped=False)  # the frame runs fn itself, not __wrapped__
    params = list(sig.parameters.values())
    sources: dict[str, Source] = {}
    values: dict[str, Any] = {}
    if self_obj is not None and (not params or params[0].kind not in (params[0].POSITIONAL_ONLY,
                                                                    params[0].POSITIONAL_OR_KEYWORD)):
        # A `*args, **kwargs` wrapper (`@torch.no_grad()` on forward): self arrives inside *args.
        sig.bind(self_obj, *args, **kwargs)
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                sources[p.name] = SelfArgsSource(self_obj)
                values[p.name] = (self_obj, *args)
            elif p.kind == p.VAR_KEYWORD:
                sources[p.name] = ArgSource(-1, p.name, "varkw")
                values[p.name] = dict(kwargs)
            elif p.kind == p.KEYWORD_ONLY:
                if p.name in kwargs:
                    sources[p.name] = ArgSource(-1, p.name, "kw")
                    values[p.name] = kwargs[p.name]
                else:
                    sources[p.name] = ConstSource(p.default, f"default of {p.name}")
                    values[p.name] = p.default
        return sources, values, (len(args), tuple(sorted(kwargs)))
    if self_obj is not None:
        first = params[0]
        sources[first.name] = ConstSource(self_obj, "self")
        values[first.name] = self_obj
        params = params[1:]
        inspect.Signature(params).bind(*args, **kwargs)   # raises TypeError exactly as the call would
    else:
        sig.bind(*args, **kwargs)
    def keyword_or_default(p: inspect.Parameter) -> None:
        if p.name in kwargs:
            sources[p.name] = ArgSource(-1, p.name, "kw")
            values[p.name] = kwargs[p.name]
        else:
            sources[p.name] = ConstSource(p.default, f"default of {p.name}")
            values[p.name] = p.default

    pos_i = 0
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if pos_i < len(args):
                sources[p.name] = ArgSource(pos_i, p.name)
                values[p.name] = args[pos_i]
                pos_i += 1
            else:
                keyword_or_default(p)
        elif p.kind == p.VAR_POSITIONAL:
            sources[p.name] = ArgSource(pos_i, p.name, "varpos")
            values[p.name] = tuple(args[pos_i:])
            pos_i = len(args)
        elif p.kind == p.KEYWORD_ONLY:
            keyword_or_default(p)
        elif p.kind == p.VAR_KEYWORD:
            named = {q.name for q in params if q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)}
            exclude = tuple(sorted(k for k in kwargs if k in named))
            sources[p.name] = ArgSource(-1, p.name, "varkw", exclude)
            values[p.name] = {k: v for k, v in kwargs.items() if k not in named}
    return sources, values, (len(args), tuple(sorted(kwargs)))


_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__", "__setstate__"})


def call_with_hooks(self, *args, **kwargs):
    """The program MagPy monitors for a compiled module that has forward (pre-)hooks: the call as
    the user makes it. ``Module.__call__`` runs the hooks and ``forward`` in frames the monitor
    enters as for a submodule with hooks (the record holds while the module has exactly these
    hooks, in this order: ``ModuleHooksGuard``)."""
    return self(*args, **kwargs)


def guard_entry(mon: Monitor, target: Any, fn: types.FunctionType, self_obj: Any) -> None:
    """What decides which code a call of the compiled callable runs: ``target(x)`` must still
    reach ``fn`` with the same code and defaults.

    For a module (or an object with ``__call__``): its class (``m.__class__ = Other``), the
    class's ``__call__`` and ``forward`` through the MRO (a method replaced on the class), no
    ``forward`` set on the instance (or that very one). For the function itself: its
    ``__code__``, ``__defaults__`` and the keyword-only defaults the call used.
    """
    fsrc = ConstSource(fn, getattr(fn, "__qualname__", "fn"))
    mon.add_guard(IdGuard(AttrSource(fsrc, "__code__"), fn.__code__))
    if fn.__defaults__:
        mon.add_guard(IdGuard(AttrSource(fsrc, "__defaults__"), fn.__defaults__))   # a tuple: pins every value
    if fn.__kwdefaults__:
        ksrc = AttrSource(fsrc, "__kwdefaults__")
        for name, value in fn.__kwdefaults__.items():
            guard = ValueGuard if is_immutable(value) and not isinstance(value, tuple) else IdGuard
            mon.add_guard(guard(ItemSource(ksrc, name), value))
    if isinstance(target, (types.FunctionType, types.MethodType)):
        return   # a bound method's __func__ and __self__ cannot be rebound
    tsrc = ConstSource(target, "self")
    cls = type(target)
    mon.add_guard(TypeGuard(tsrc, cls))
    mon._guard_class_attr(cls, "__call__")
    if isinstance(target, torch.nn.Module) and fn is not cls.__call__:
        if "forward" in target.__dict__:
            mon.add_guard(IdGuard(AttrSource(tsrc, "forward", "__dict__"), target.__dict__["forward"]))
        else:
            mon.add_guard(AbsentGuard(tsrc, "forward"))
            mon._guard_class_attr(cls, "forward")


def bind_callee(mon: Monitor, frame: types.FrameType, code: types.CodeType) -> None:
    """Parameters of a called Python function that the monitor did not see passed.

    Defaults come from the function object (``f.__defaults__``/``__kwdefaults__``): they
    get that source and a guard, so a mutable default of a helper (a memo dict) is read
    and written like any outside object, and rebinding ``f.__defaults__`` is seen. Other
    unseen objects were made by C code during the call (``self`` in ``__init__``).
    """
    be = capture.backend()
    fn = be.frame_function(frame) if hasattr(be, "frame_function") else None
    nparams = code.co_argcount + code.co_kwonlyargcount
    nparams += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    f_locals = frame.f_locals
    defaults_of: dict[str, Source] = {}
    if isinstance(fn, types.FunctionType):
        # `f.__code__ = other.__code__` changes what a guarded function does.
        mon.add_guard(IdGuard(AttrSource(ConstSource(fn, fn.__qualname__), "__code__"), code))
    if isinstance(fn, types.FunctionType) and (fn.__defaults__ or fn.__kwdefaults__):
        fn_node = mon.node(fn)
        fn_src = fn_node.source if fn_node is not None and fn_node.source is not None \
            else ConstSource(fn, fn.__qualname__)
        if fn.__defaults__:
            dsrc = AttrSource(fn_src, "__defaults__")
            mon.add_guard(IdGuard(dsrc, fn.__defaults__))   # a tuple: identity pins every value
            first = code.co_argcount - len(fn.__defaults__)
            for j, name in enumerate(code.co_varnames[first:code.co_argcount]):
                defaults_of[name] = ItemSource(dsrc, j)
        if fn.__kwdefaults__:
            ksrc = AttrSource(fn_src, "__kwdefaults__")
            mon.on_read(fn.__kwdefaults__, ksrc)
            mon.full_read(fn.__kwdefaults__)   # a dict: changed in place, so its contents are guarded
    first_param = code.co_varnames[0] if code.co_argcount else None
    packed = set(code.co_varnames[code.co_argcount + code.co_kwonlyargcount:nparams])
    for name in code.co_varnames[:nparams]:
        v = f_locals.get(name, NO_VALUE)
        if v is NO_VALUE or is_immutable(v) or isinstance(v, NO_NODE_TYPES) or mon.node(v) is not None:
            continue
        src = defaults_of.get(name)
        if src is not None and fn.__defaults__[int(src.key)] is v:
            mon.on_read(v, src)
        elif isinstance(v, torch.autograd.function.FunctionCtx):
            mon.rg.new(v)   # `ctx` of a custom autograd.Function: made by Function.apply in C
        elif name == first_param and code.co_name in _CONSTRUCTORS:
            mon.rg.new(v)   # the object being built: made by type.__call__ in C during this call
        elif name in packed:
            mon.rg.new(v)   # the *args tuple / **kwargs dict the call itself built
        # else: an object handed over by C code MagPy does not follow stays of unknown origin
