"""Tensors the monitored program constructs the old ways, restated as graph operations: typed
legacy constructors (``torch.Tensor(2, 3)``, ``torch.FloatTensor([1, 2])``), ``Variable(t)`` and
``nn.Parameter(t)`` made in the call (:mod:`magpy.monitor.natives`, :mod:`magpy.monitor.calls` use them)."""

from __future__ import annotations

import torch

__all__ = ["LEGACY_TENSOR_TYPES", "legacy_factory", "legacy_variable", "new_parameter", "numbers_only",
           "parameter_args"]

#: Legacy typed tensor classes (``torch.FloatTensor``) and the dtype each constructs.
LEGACY_TENSOR_TYPES = {getattr(torch, n): d for n, d in (
    ("FloatTensor", torch.float32), ("DoubleTensor", torch.float64), ("HalfTensor", torch.float16),
    ("BFloat16Tensor", torch.bfloat16), ("ByteTensor", torch.uint8), ("CharTensor", torch.int8),
    ("ShortTensor", torch.int16), ("IntTensor", torch.int32), ("LongTensor", torch.int64),
    ("BoolTensor", torch.bool)) if hasattr(torch, n)}


def legacy_factory(fn, args: list, kwargs: dict):
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


def _numbers(v, depth: int = 0) -> bool:
    if type(v) in (list, tuple):
        return depth < 8 and all(_numbers(e, depth + 1) for e in v)
    return type(v) in (int, float, bool)


def numbers_only(data, depth: int = 0) -> bool:
    if depth > 8:
        return False
    return all(type(e) in (int, float, bool) or (isinstance(e, (list, tuple)) and numbers_only(e, depth + 1))
               for e in data)


def legacy_variable(data: torch.Tensor, requires_grad: bool = False) -> torch.Tensor:
    """``Variable(data, requires_grad=r)``: a new leaf sharing ``data``'s memory."""
    return data.detach().requires_grad_(requires_grad)


def new_parameter(data: torch.Tensor, requires_grad: bool = True) -> torch.nn.Parameter:
    """``nn.Parameter(data, requires_grad)`` as a graph operation."""
    return torch.nn.Parameter(data, requires_grad)


def parameter_args(args: list, kwargs: dict) -> tuple | None:
    """``(data, requires_grad)`` of ``nn.Parameter(data, requires_grad)`` with a plain tensor (or a
    Parameter) and a literal flag; None for other calls (no data, a tensor subclass)."""
    if len(args) > 2 or set(kwargs) - {"data", "requires_grad"}:
        return None
    given = dict(zip(("data", "requires_grad"), args), **kwargs)
    data, flag = given.get("data"), given.get("requires_grad", True)
    if type(data) not in (torch.Tensor, torch.nn.Parameter) or type(flag) is not bool:
        return None
    return data, flag
