"""Timing and correctness primitives shared by every runner (worker side).

Timing follows the artifact (paper §8.1): untimed warm-up calls, then timed calls, each bracketed
by a device synchronisation so asynchronous GPU work is counted in the call that queued it.
Correctness compares every tensor leaf of a compiled output with eager's, with a tolerance per
dtype taken from the ``tolerance`` block of the config.

Example::

    >>> stats = time_calls(model, [((x,), {})], warmup=3, repeat=10, sync=lambda: None)
    >>> stats["mean_s"] > 0
    True
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree

Inputs = Sequence[tuple[Sequence[Any], Mapping[str, Any]]]


def time_calls(fn: Callable[..., Any], inputs: Inputs, *, warmup: int, repeat: int,
               sync: Callable[[], None]) -> dict[str, float]:
    """Time ``repeat`` calls of ``fn`` after ``warmup`` untimed ones, cycling through ``inputs``.

    Returns the repetition statistics in seconds: ``mean_s``, ``std_s``, ``min_s``, ``median_s``,
    ``max_s`` and the count ``n``.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if not inputs:
        raise ValueError("time_calls needs at least one input")
    for i in range(warmup):
        args, kwargs = inputs[i % len(inputs)]
        fn(*args, **kwargs)
    sync()
    times = []
    for i in range(repeat):
        args, kwargs = inputs[i % len(inputs)]
        start = time.perf_counter()
        fn(*args, **kwargs)
        sync()
        times.append(time.perf_counter() - start)
    return {
        "mean_s": statistics.fmean(times),
        "std_s": statistics.stdev(times) if len(times) > 1 else 0.0,
        "min_s": min(times),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "n": len(times),
    }


def timed_call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any],
               sync: Callable[[], None]) -> tuple[Any, float]:
    """Call ``fn`` once and return ``(output, seconds)`` including device synchronisation."""
    sync()
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    sync()
    return out, time.perf_counter() - start


def leaves(output: Any) -> list[Any]:
    """The leaves of a model output: tensors and plain values of nested tuples, lists, dicts and
    ``ModelOutput``-like objects (anything with ``to_tuple``)."""
    if hasattr(output, "to_tuple") and not isinstance(output, torch.Tensor):
        output = output.to_tuple()
    result = []
    for leaf in pytree.tree_leaves(output):
        if hasattr(leaf, "to_tuple") and not isinstance(leaf, torch.Tensor):
            result += leaves(leaf.to_tuple())
        else:
            result.append(leaf)
    return result


def compare_outputs(got: Any, expected: Any, tolerance: Mapping[str, Mapping[str, float]]) -> tuple[bool, float, str]:
    """Compare a compiled output with eager's.

    A float tensor passes when ``|got - ref| <= atol * max(1, max|ref|) + rtol * |ref|`` element-wise
    (``tolerance[dtype]`` gives rtol and atol; scaling atol by the output's magnitude keeps deep
    random-weight models, whose outputs can be large, to the same relative bar). Other tensors and
    plain values must be equal. Returns ``(correct, max_abs_error, reason)``.
    """
    got_leaves, ref_leaves = leaves(got), leaves(expected)
    if len(got_leaves) != len(ref_leaves):
        return False, math.nan, f"output has {len(got_leaves)} leaves, eager has {len(ref_leaves)}"
    worst = 0.0
    for i, (g, r) in enumerate(zip(got_leaves, ref_leaves)):
        if isinstance(r, torch.Tensor):
            if not isinstance(g, torch.Tensor):
                return False, math.nan, f"leaf {i}: expected a tensor, got {type(g).__name__}"
            if g.shape != r.shape or g.dtype != r.dtype:
                return False, math.nan, f"leaf {i}: {tuple(g.shape)}/{g.dtype} vs eager {tuple(r.shape)}/{r.dtype}"
            g, r = g.detach().cpu(), r.detach().cpu()
            if r.is_quantized:
                g, r = g.dequantize(), r.dequantize()
            if not r.is_floating_point() and not r.is_complex():
                if not torch.equal(g, r):
                    return False, math.nan, f"leaf {i}: {r.dtype} values differ"
                continue
            tol = tolerance.get(str(r.dtype).removeprefix("torch."))
            if tol is None:
                raise ValueError(f"no tolerance configured for dtype {r.dtype} (config key `tolerance`)")
            if r.numel() == 0:
                continue
            diff = (g.double() - r.double()).abs()
            if torch.isnan(r).any() or torch.isnan(g).any():
                if not torch.equal(torch.isnan(g), torch.isnan(r)):
                    return False, math.nan, f"leaf {i}: NaNs differ from eager"
                diff = torch.nan_to_num(diff, nan=0.0)
            scale = max(1.0, r.double().abs().nan_to_num(0.0).max().item())
            bound = tol["atol"] * scale + tol["rtol"] * r.double().abs()
            worst = max(worst, diff.max().item())
            if bool((diff > bound).any()):
                return False, worst, f"leaf {i}: max |diff| {diff.max().item():.3g} exceeds tolerance"
        elif g != r:
            return False, math.nan, f"leaf {i}: {g!r} != eager {r!r}"
    return True, worst, ""
