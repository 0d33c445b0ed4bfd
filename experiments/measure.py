"""Timing primitives, the one way the artifact times a call (runners, models.timing, benchmarks/).

Timing follows the artifact (paper §8.1): untimed warm-up calls, then timed calls, each bracketed
by a device synchronisation so asynchronous GPU work is counted in the call that queued it.
Correctness is :mod:`experiments.compare`.

The loop is the standard library's ``timeit.Timer`` (what ``torch.utils.benchmark.Timer`` runs
underneath) with a clock that synchronises the device first. ``torch.utils.benchmark.Timer``
itself does not fit: every ``timeit(n)`` adds two untimed calls of its own, it sets torch's
intra-op threads to its ``num_threads`` (1 by default) rather than keep the cell's, and it
synchronises only ``torch.accelerator`` devices (not XLA); its ``blocked_autorange`` chooses the
number of calls itself, while a cell's ``repeat`` is one of its settings.

Example::

    >>> import torch
    >>> model, x = torch.nn.Linear(4, 2), torch.randn(3, 4)
    >>> stats = time_calls(model, [((x,), {})], warmup=3, repeat=10, sync=no_sync)
    >>> stats["n"], stats["min_s"] <= stats["median_s"] <= stats["max_s"]
    (10, True)
"""

from __future__ import annotations

import itertools
import statistics
import time
import timeit
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Inputs = Sequence[tuple[Sequence[Any], Mapping[str, Any]]]


def no_sync() -> None:
    """The ``sync`` of a program whose work is done when the call returns (CPU)."""


def call_times(fn: Callable[..., Any], inputs: Inputs, *, warmup: int, repeat: int,
               sync: Callable[[], None] = no_sync) -> list[float]:
    """Seconds taken by each of ``repeat`` calls of ``fn`` after ``warmup`` untimed ones.

    Both the warm-up and the timed calls cycle through ``inputs`` from the first. ``sync`` waits
    for the device; it runs before the clock is read at both ends of every timed call.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if not inputs:
        raise ValueError("time_calls needs at least one input")
    for args, kwargs in itertools.islice(itertools.cycle(inputs), warmup):
        fn(*args, **kwargs)
    calls = itertools.cycle(inputs)

    def step() -> None:
        args, kwargs = next(calls)
        fn(*args, **kwargs)

    return timeit.Timer(step, timer=_synced_clock(sync)).repeat(repeat=repeat, number=1)


def time_calls(fn: Callable[..., Any], inputs: Inputs, *, warmup: int, repeat: int,
               sync: Callable[[], None] = no_sync) -> dict[str, float]:
    """:func:`call_times`, summarised: ``mean_s``, ``std_s``, ``min_s``, ``median_s``, ``max_s``
    (seconds) and the count ``n``."""
    return summarize_times(call_times(fn, inputs, warmup=warmup, repeat=repeat, sync=sync))


def summarize_times(times: Sequence[float]) -> dict[str, float]:
    """``mean_s``, ``std_s``, ``min_s``, ``median_s``, ``max_s`` and ``n`` of per-call seconds."""
    return {
        "mean_s": statistics.fmean(times),
        "std_s": statistics.stdev(times) if len(times) > 1 else 0.0,
        "min_s": min(times),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "n": len(times),
    }


def timed_call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any],
               sync: Callable[[], None] = no_sync) -> tuple[Any, float]:
    """Call ``fn`` once and return ``(output, seconds)`` including device synchronisation."""
    clock = _synced_clock(sync)
    start = clock()
    out = fn(*args, **kwargs)
    return out, clock() - start


def _synced_clock(sync: Callable[[], None]) -> Callable[[], float]:
    def clock() -> float:
        sync()
        return time.perf_counter()

    return clock
