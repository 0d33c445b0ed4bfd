"""The entry of a monitor run: the compiled function's parameters bound to sources, and the guards on
what decides which code a call of the compiled callable runs.

Before a monitor run, each parameter of the function being compiled gets its source
(:func:`bind_parameters`): ``args[i]`` for positional arguments, ``kwargs[name]`` for keywords,
the default value itself (held by the record) for parameters not passed, and the compiled
module as ``self``::

    >>> def f(x, y=2, *rest, k, **kw): ...
    >>> sources, values, shape = bind_parameters(f, None, (1,), {"k": 3})
    >>> {n: s.expr() for n, s in sources.items()}["k"], shape
    ("kwargs['k']", (1, ('k',)))
"""
from __future__ import annotations

import inspect
import types
from typing import Any

import torch

from ..guards import (
    AbsentGuard,
    IdGuard,
    NoHooksGuard,
    TypeGuard,
    ValueGuard,
)
from ..objmodel import (
    is_immutable,
)
from ..realtype import instance_dict, is_instance, runs_lookup_hook
from ..source import (
    PAST_HOOK,
    ArgSource,
    AttrSource,
    ConstSource,
    ItemSource,
    SelfArgsSource,
    Source,
)
from .frame import GuardSink


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


def call_with_hooks(self, *args, **kwargs):
    """The program MagPy monitors for a compiled module that has forward (pre-)hooks: the call as
    the user makes it. ``Module.__call__`` runs the hooks and ``forward`` in frames the monitor
    enters as for a submodule with hooks (the record holds while the module has exactly these
    hooks, in this order: ``ModuleHooksGuard``)."""
    return self(*args, **kwargs)


def guard_entry(mon: GuardSink, target: Any, fn: types.FunctionType, self_obj: Any) -> None:
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
    if is_instance(target, (types.FunctionType, types.MethodType)):
        return   # a bound method's __func__ and __self__ cannot be rebound
    tsrc = ConstSource(target, "self")
    if is_instance(target, torch.nn.Module) and fn is not call_with_hooks:
        mon.add_guard(NoHooksGuard(tsrc))   # (with hooks, the call of the module guards them)
    cls = type(target)
    mon.add_guard(TypeGuard(tsrc, cls))
    mon.guard_class_attr(cls, "__call__")
    if is_instance(target, torch.nn.Module) and fn is not cls.__call__:
        own = instance_dict(target) or {}   # (past a `__getattribute__` of the module's class)
        if "forward" in own:
            via = PAST_HOOK if runs_lookup_hook(target) else "__dict__"
            mon.add_guard(IdGuard(AttrSource(tsrc, "forward", via), own["forward"]))
        else:
            mon.add_guard(AbsentGuard.of(target, tsrc, "forward"))
            mon.guard_class_attr(cls, "forward")
