"""What :func:`magpy.compile` returns, seen from outside: every compiled callable is a
:class:`CompiledCallable`, and a compiled ``nn.Module`` is a :class:`ModuleStandIn` for the original.

    >>> import magpy, torch
    >>> m = torch.nn.Linear(2, 2)
    >>> cm = magpy.compile(m, backend="eager")
    >>> cm.weight is m.weight, cm.state_dict().keys() == m.state_dict().keys()
    (True, True)

The calls themselves (guards, records, monitor runs) are :mod:`magpy.api`'s; this module only
makes the stand-in behave as the original module everywhere else. Its methods are MagPy's own
call path: a monitor run does not enter them (:mod:`magpy.monitor`'s runtime files).
"""
from __future__ import annotations

from typing import Any

import torch


class CompiledCallable:
    """Every callable :func:`magpy.compile` returns (:class:`magpy.CompiledFunction`,
    :class:`magpy.CompiledModule`): what check mode (:mod:`magpy.check`) recognises as MagPy's
    own rather than the program's state."""

    __slots__ = ()
    _target: Any   # what was compiled (set by magpy.api; a monitor run reads it: compiled_target)


def compiled_target(fn: CompiledCallable) -> Any:
    """The function or module a compiled callable compiles (a compiled callable called inside a
    monitored program is monitored as a call of it, :mod:`magpy.monitor.calls`)."""
    return fn._target


# Attributes of the wrapper itself (the compiled callable's, magpy.api); every other attribute is
# the original module's.
_OWN = frozenset({"_orig_mod", "_target", "_runner", "_options", "_name", "_caps",
                  "_cache", "_profile", "_fast", "_stats", "_eager_reason", "_recompile_limit", "_guard_bug_warned",
                  "_limit_said", "_stopped", "_retried", "_lifts", "_arms", "_no_other_sides", "_graphs",
                  "_continuations", "_loops", "_changing_assumptions", "_split_depth", "_check", "_check_said",
                  "_explain_runs"})


class ModuleStandIn(torch.nn.Module):
    """An ``nn.Module`` standing in for the original (``cm._orig_mod``) in a module tree:
    ``parent.block = magpy.compile(parent.block)`` makes ``parent(x)`` call through MagPy.

    It has no parameters, buffers, submodules or hooks of its own: those tables *are* the
    original's, so ``state_dict()`` keys, ``named_parameters()`` names and hooks registered on
    either are the original's. Methods that act on the module (``to``, ``train``, ``eval``,
    ``half``, ``apply``, ``state_dict``, ``load_state_dict``, ...) run on the original and
    return the compiled module where they would return the module itself; ``named_modules()``
    yields the compiled module in the original's place. Attribute reads and writes reach the
    original. ``forward`` is the original's (eager) ``forward``. Copying or pickling compiles
    a copy of the original afresh (``type(self)(copy, **self._options)``).
    """

    _orig_mod: torch.nn.Module
    _options: dict

    def __getattr__(self, name: str):
        if name in _OWN or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)   # (not set yet, during __init__; dunders are the wrapper's)
        try:
            orig = self.__dict__["_orig_mod"]
        except KeyError:
            raise AttributeError(name) from None
        return getattr(orig, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if name in _OWN:
            object.__delattr__(self, name)
        else:
            delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(dir(self._orig_mod)))

    @property
    def forward(self):
        """The original module's ``forward`` (calling it directly is eager, and skips hooks, as usual)."""
        return self._orig_mod.forward

    def __repr__(self) -> str:
        return f"magpy.compile({self._orig_mod!r})"

    # Container modules (Sequential, ModuleList, ModuleDict): indexing and iteration are the original's.
    def __getitem__(self, key):
        return self._orig_mod[key]

    def __setitem__(self, key, value) -> None:
        self._orig_mod[key] = value

    def __delitem__(self, key) -> None:
        del self._orig_mod[key]

    def __len__(self) -> int:
        return len(self._orig_mod)

    def __iter__(self):
        return iter(self._orig_mod)

    def __contains__(self, key) -> bool:
        return key in self._orig_mod

    def __bool__(self) -> bool:
        return bool(self._orig_mod)

    def __reduce_ex__(self, protocol):
        # Records guard the original's objects: a copy (deepcopy, pickle) compiles its own copy afresh.
        return _compile_again, (type(self), self._orig_mod, self._options)


def _compile_again(cls: type, target: torch.nn.Module, options: dict) -> ModuleStandIn:
    return cls(target, **options)


def _delegate(name: str):
    def method(self, *args, **kwargs):
        orig = self._orig_mod
        out = getattr(orig, name)(*args, **kwargs)
        return self if out is orig else out

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}`` of the original module (returning the compiled module where that returns itself)."
    return method


for _name in ("_apply", "apply", "cuda", "ipu", "xpu", "mtia", "cpu", "type", "float", "double", "half", "bfloat16",
              "to_empty", "to", "train", "eval", "requires_grad_", "zero_grad", "share_memory",
              "state_dict", "load_state_dict", "_save_to_state_dict", "_load_from_state_dict",
              "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
              "register_buffer", "register_parameter", "add_module", "register_module", "get_submodule",
              "set_submodule", "get_parameter", "get_buffer", "get_extra_state", "set_extra_state", "extra_repr"):
    if hasattr(torch.nn.Module, _name):
        setattr(ModuleStandIn, _name, _delegate(_name))
del _name
