"""Timing primitives shared by every runner (worker side); correctness is :mod:`experiments.compare`.

Timing follows the artifact (paper §8.1): untimed warm-up calls, then timed calls, each bracketed
by a device synchronisation so asynchronous GPU work is counted in the call that queued it.

Example::

    >>> stats = time_calls(model, [((x,), {})], warmup=3, repeat=10, sync=lambda: None)
    >>> stats["mean_s"] > 0
    True
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
