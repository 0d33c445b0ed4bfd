"""The torch versions MagPy supports, and every detail of torch that differs between them.

``import magpy`` checks the installed torch first (:func:`check_torch`): outside
:data:`SUPPORTED` it stops with one message naming both versions, before any module reaches
into torch internals that the other version may lack. ``pyproject.toml`` declares the same range
(``tests/test_torch_support.py`` holds them equal). Each version-specific detail is a function
here, so the rest of MagPy asks a question ("is this the apply of a custom autograd.Function?")
instead of testing versions.

    >>> parse_version("2.14.1+cu130"), parse_version("2.10.0a0+git1234abc")
    ((2, 14), (2, 10))
    >>> supported("2.9.0"), supported("2.14.1"), supported("2.8.1"), supported("2.15.0")
    (True, True, False, False)
"""
from __future__ import annotations

import inspect
import os
import random
import re
import sys
import types
import warnings
import weakref

import torch

from .objmodel import is_instance

#: The lowest and the highest supported (major, minor), both included: the versions CI runs the core
#: suite on are 2.9, 2.13 and 2.14. pyproject.toml says ``torch>=2.9,<2.15``.
SUPPORTED = ((2, 9), (2, 14))
#: Set to 1 to import MagPy on a torch outside :data:`SUPPORTED` anyway (a warning instead of the error).
ALLOW_ENV = "MAGPY_ALLOW_UNSUPPORTED_TORCH"


class UnsupportedTorch(ImportError):
    """The installed torch is outside the range MagPy supports."""


def parse_version(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a torch version string (local and pre-release parts ignored)."""
    m = re.match(r"(\d+)\.(\d+)", str(version))
    if m is None:
        raise UnsupportedTorch(f"MagPy cannot read torch's version {version!r}")
    return int(m.group(1)), int(m.group(2))


def supported(version: str) -> bool:
    """Is torch ``version`` in :data:`SUPPORTED`?"""
    return SUPPORTED[0] <= parse_version(version) <= SUPPORTED[1]


def describe_supported() -> str:
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    return f"{lo_major}.{lo_minor} to {hi_major}.{hi_minor} (torch>={lo_major}.{lo_minor},<{hi_major}.{hi_minor + 1})"


def check_torch(version: str | None = None) -> None:
    """Raise :class:`UnsupportedTorch` unless ``version`` (the installed torch's by default) is
    supported; with ``MAGPY_ALLOW_UNSUPPORTED_TORCH=1`` warn instead."""
    version = str(torch.__version__ if version is None else version)
    if supported(version):
        return
    message = (f"MagPy supports torch {describe_supported()}, but torch {version} is installed: "
               f"install a supported torch (or set {ALLOW_ENV}=1 to try this one at your own risk)")
    if os.environ.get(ALLOW_ENV) == "1":
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        return
    raise UnsupportedTorch(message)


# -- custom autograd.Function's apply -------------------------------------------------------------
# torch <= 2.13: ``Function.apply`` is a Python classmethod (it binds default arguments, then calls
# ``_FunctionBase.apply`` in C); ``F.apply`` is a bound method whose ``__func__`` is that function.
# torch 2.14: ``Function`` inherits ``_FunctionBase.apply``, a C classmethod descriptor; ``F.apply``
# is a builtin method bound to ``F``. Either way forward runs as a Python frame called from C.
_APPLY = inspect.getattr_static(torch.autograd.Function, "apply")
_APPLY_FUNC = _APPLY.__func__ if isinstance(_APPLY, classmethod) else None


def autograd_function_class(fn: object, args: list) -> type | None:
    """The custom ``autograd.Function`` subclass whose inherited ``apply`` ``fn`` is (called with
    ``args``), or None (a subclass that overrides ``apply`` is not one: its own code runs)."""
    if _APPLY_FUNC is not None:
        if is_instance(fn, types.MethodType) and fn.__func__ is _APPLY_FUNC:
            return fn.__self__
        if fn is _APPLY_FUNC and args and isinstance(args[0], type):
            return args[0]   # 3.11's PRECALL unpacked the bound classmethod
        return None
    if is_instance(fn, types.BuiltinMethodType) and fn.__name__ == "apply" and isinstance(fn.__self__, type) \
            and issubclass(fn.__self__, torch.autograd.Function) \
            and inspect.getattr_static(fn.__self__, "apply") is _APPLY:
        return fn.__self__
    return None


_GRAPH_APPLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graph_apply(fn_cls: type):
    """The function a graph calls for ``fn_cls.apply`` (one per class). torch.fx names torch's own
    functions by their import path, and a class's bound ``apply`` looks like torch's
    (``torch.autograd.function.apply``): this plain function is held by the graph's globals instead."""
    fn = _GRAPH_APPLIES.get(fn_cls)
    if fn is None:
        cls = weakref.ref(fn_cls)   # (the table's value must not keep its key alive)

        def apply(*args, **kwargs):
            return cls().apply(*args, **kwargs)

        apply.__qualname__ = apply.__name__ = f"apply_{fn_cls.__name__}"
        fn = _GRAPH_APPLIES[fn_cls] = apply
    return fn


# -- torch.fx ------------------------------------------------------------------------------------
def last_node(graph: torch.fx.Graph) -> torch.fx.Node | None:
    """The graph's last node, or None when it is empty. (``reversed(graph.nodes)`` is an iterator
    in torch 2.13, only an iterable in 2.9, where ``next(reversed(graph.nodes))`` raises TypeError.)"""
    return next(iter(reversed(graph.nodes)), None)


# -- autograd version counters -------------------------------------------------------------------
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def version_counter(t: torch.Tensor) -> int:
    """``t._version``, autograd's count of in-place changes to the tensor's memory, without running
    a tensor subclass's ``__torch_function__`` (MagPy's own reads must not show up in what the
    user's subclass observes)."""
    if type(t) in _PLAIN:
        return t._version
    with torch._C.DisableTorchFunctionSubclass():
        return t._version


def version_counters(tensors: tuple) -> list[int]:
    """:func:`version_counter` of each tensor."""
    return [version_counter(t) for t in tensors]


def set_version_counters(tensors: tuple, versions: list[int]) -> None:
    """Set each tensor's version counter (shared with its views) back to ``versions``: the undo of
    a speculative graph's in-place writes (torch 2.9 to 2.14 take sequences of both)."""
    if tensors:
        torch._C._autograd._unsafe_set_version_counter(tuple(tensors), tuple(versions))


def rng_and_grad_state() -> tuple:
    """The process's random generators (torch CPU and CUDA, Python's ``random``, numpy's global one)
    and grad mode: what a run that must leave no trace puts back (check mode's sandbox, the
    other-side run of magpy.dynamic.other_side)."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    np = _numpy()
    np_state = np.random.get_state() if np is not None else None
    return torch.get_rng_state(), cuda, random.getstate(), np_state, torch.is_grad_enabled()


def set_rng_and_grad_state(state: tuple) -> None:
    """Put back what :func:`rng_and_grad_state` saved."""
    cpu, cuda, py, np_state, grad = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    random.setstate(py)
    if np_state is not None:
        _numpy().random.set_state(np_state)
    torch.set_grad_enabled(grad)


def _numpy():
    try:
        import numpy
    except ImportError:   # pragma: no cover - numpy is optional
        return None
    return numpy


def is_checkpoint(fn) -> bool:
    """Is ``fn`` ``torch.utils.checkpoint.checkpoint`` (looked up only once the program imported it)?"""
    ckpt = sys.modules.get("torch.utils.checkpoint")
    return ckpt is not None and fn is getattr(ckpt, "checkpoint", None)


def lazy_uninitialized(mod) -> bool:
    """Is ``mod`` a lazy module (``nn.LazyLinear``...) whose forward pre-hook has yet to build its
    parameters from its first input (``LazyModuleMixin._infer_parameters``)?"""
    return is_instance(mod, torch.nn.modules.lazy.LazyModuleMixin) and hasattr(mod, "_initialize_hook") \
        and mod.has_uninitialized_params()
