"""The benchmark programs of the MagPy evaluation (paper §8.1, Table 1, and the dynamic ones of §8.5).

Each model lives in ``models/<name>.py`` and is written the way its original authors wrote it
(see models/README.md for the source of each and the Python features it exercises). Every module
exposes::

    get_model(size="paper", seed=0) -> torch.nn.Module          # random seeded weights, eval mode
    get_input(batch_size=1, size="paper", seed=0) -> (args, kwargs)

and the models used in the dynamic experiments also ``get_dynamic_inputs(batch_size, n, size, kind=...)``.

Example::

    >>> import models
    >>> model, get_input = models.build("resnet", size="smoke")
    >>> args, kwargs = get_input(2)
    >>> model(*args, **kwargs).shape
    torch.Size([2, 10])

Model modules are imported lazily: importing transformers takes seconds.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from models._common import SIZES, check_size

#: The eight programs of Table 1 (static control flow), in the paper's order.
STATIC_MODELS: tuple[str, ...] = (
    "align",
    "bert",
    "deberta",
    "densenet",
    "monodepth",
    "quantized",
    "resnet",
    "tridentnet",
)
#: The two programs with dynamic control flow of Figure 18.
DYNAMIC_MODELS: tuple[str, ...] = ("lstm", "blockdrop")
#: All ten benchmark programs, static ones first.
MODELS: tuple[str, ...] = STATIC_MODELS + DYNAMIC_MODELS

#: For each model with ``get_dynamic_inputs``: the kinds it accepts, the default first (paper §8.5:
#: ``-bs`` for dynamic batch size, ``-seqlen`` for dynamic sequence length; Figure 18's inputs that
#: change the executed path).
DYNAMIC_KINDS: dict[str, tuple[str, ...]] = {
    "bert": ("bs", "seqlen"),
    "deberta": ("bs", "seqlen"),
    "densenet": ("bs",),
    "resnet": ("bs",),
    "lstm": ("seqlen",),
    "blockdrop": ("policy",),
}

InputFn = Callable[..., tuple[list, dict[str, Any]]]


def _check_name(name: str) -> str:
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; valid models: {', '.join(MODELS)}")
    return name


def load(name: str) -> ModuleType:
    """Import and return the module ``models.<name>`` (ValueError for an unknown name)."""
    return importlib.import_module(f"models.{_check_name(name)}")


def build(name: str, size: str = "smoke", seed: int = 0) -> tuple[torch.nn.Module, InputFn]:
    """Build benchmark ``name`` at ``size`` with weights seeded by ``seed``.

    Returns ``(model.eval(), get_input)`` where ``get_input(batch_size=1, **kw)`` is the module's
    input maker with ``size`` already bound (pass ``size=`` to override it).
    """
    module = load(name)
    check_size(size)
    model = module.get_model(size, seed=seed)
    return model.eval(), functools.partial(module.get_input, size=size)


#: What a stream of shape-changing inputs (Figure 17) may set besides its length: the batch-size
#: range of kind ``bs``, the length range and the batch size of kind ``seqlen``.
STREAM_KEYS = {"bs": ("bs_range",), "seqlen": ("seqlen_range", "seqlen_batch")}


def dynamic_inputs(name: str, n: int, size: str = "smoke", kind: str | None = None,
                   batch_size: int | None = None, seed: int = 0,
                   stream: dict[str, Any] | None = None) -> list[tuple[list, dict[str, Any]]]:
    """The ``n`` dynamic inputs of ``name`` (see :data:`DYNAMIC_KINDS`).

    ``kind`` defaults to the model's first kind and ``batch_size`` to the model's own default
    (8 for ``seqlen``, 1 for the control-flow models; not used by ``bs``). ``stream`` sets the
    ranges of the shape-changing kinds (:data:`STREAM_KEYS`; the paper's by default): only the
    keys of ``kind`` are used, unknown keys are an error.
    """
    _check_name(name)
    if name not in DYNAMIC_KINDS:
        raise ValueError(f"model {name!r} has no dynamic inputs; models with them: {', '.join(DYNAMIC_KINDS)}")
    kind = DYNAMIC_KINDS[name][0] if kind is None else kind
    extra = {} if batch_size is None else {"batch_size": batch_size}
    if stream:
        known = {k for keys in STREAM_KEYS.values() for k in keys}
        unknown = sorted(set(stream) - known)
        if unknown:
            raise ValueError(f"unknown stream settings {unknown}; valid: {sorted(known)}")
        takes = inspect.signature(load(name).get_dynamic_inputs).parameters
        for key in STREAM_KEYS.get(kind, ()):
            param, value = ("batch_size" if key == "seqlen_batch" else key), stream.get(key)
            if value is None:
                continue
            if param not in takes:
                raise ValueError(f"model {name!r} has no {key} to set for its {kind!r} inputs")
            extra[param] = value if key == "seqlen_batch" else list(value)
    return load(name).get_dynamic_inputs(n=n, size=size, kind=kind, seed=seed, **extra)


__all__ = ["MODELS", "STATIC_MODELS", "DYNAMIC_MODELS", "DYNAMIC_KINDS", "SIZES", "build", "load",
           "dynamic_inputs"]
