"""The graph a record serves: the backend's compiled graph, or the same fx graph run eagerly,
whichever its first matched calls measured faster (``magpy.compile(..., adaptive=True)``, the default).

Both compute the same values (the backend compiles exactly that graph), so the choice is safe by
construction. On a record's first matched calls, each call runs the graph once, by one of the two
(alternating: one untimed warm-up each, the first compiled graph call may still compile, then
:data:`TRIALS` timed calls each, compared on inputs of the same sizes); the guard and the mock around it run once per call, as always, so
nothing the call does outside the graph happens twice. Then the faster one (by each one's best time;
the eager graph must be :data:`MARGIN` faster: a near tie on a busy machine is noise, and keeps the
backend's graph) is bound into the record's matched path in place of the chooser: from then on the
hot path calls it directly, with nothing in between.

    >>> import torch
    >>> gm = torch.fx.symbolic_trace(lambda x: x + 1)
    >>> choice = GraphChoice(gm.forward, gm, "mybackend")
    >>> for _ in range(2 + 2 * TRIALS):
    ...     _ = choice(torch.ones(2))
    >>> choice.serving in ("mybackend", "eager")
    True

Only the forward computation is timed (a backward the graph's outputs take is not).
"""
from __future__ import annotations

import copy
import time
import weakref
from collections.abc import Callable
from typing import Any

import torch

#: Timed calls of each graph, after one warm-up call each, before a record settles on one.
TRIALS = 3
#: How much faster (a fraction of the compiled graph's time) the eager graph must measure to be served.
MARGIN = 0.05
#: Trial calls (in units of one signature's trial) after which a record whose input sizes never
#: repeated enough keeps the backend's graph.
GIVE_UP = 4
EAGER = "eager"


def eager_twin(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of ``gm`` that runs as it is, made before a backend sees ``gm`` (a backend may rewrite
    the graph it is given; a rolled loop's or a conditional's node gets its bodies compiled, see
    :func:`magpy.backends.compile_regions`: the copy keeps nodes of its own, run uncompiled). The
    copy shares the tensors ``gm`` holds."""
    graph = copy.deepcopy(gm.graph)
    for n in graph.nodes:
        if n.op == "call_function" and hasattr(n.target, "compile_with"):
            n.target = copy.copy(n.target)   # (still running its bodies as fx code)
    return torch.fx.GraphModule(gm, graph, class_name=type(gm).__name__)


class GraphChoice:
    """Stands in for a record's compiled graph until its first matched calls have timed both
    ways of running it; then binds the faster into the functions :meth:`serve_through` named."""

    def __init__(self, compiled: Callable, eager: torch.fx.GraphModule, backend: str, trials: int = TRIALS):
        self.compiled, self.eager = compiled, eager.forward
        self.backend = backend
        self.trials = trials
        # Per signature of the graph's inputs (a record with lifted sizes serves several: only calls
        # on inputs of the same sizes are compared): [calls, compiled times, eager times] in seconds.
        self.by_sig: dict = {}
        self.calls = 0
        self.times: tuple[list, list] = ([], [])   # the timed calls of the signature that decided
        self.serving: str | None = None   # the backend's name or "eager", once decided
        self.chosen: Callable | None = None
        self._users: list = []   # weak references to the matched-path functions calling this

    def serve_through(self, *fns: Callable) -> None:
        """The generated functions whose global ``_graph`` is this chooser (magpy.codegen): the chosen
        graph replaces it there. (Weak references: the functions' globals hold this chooser.)"""
        self._users += [weakref.ref(f) for f in fns]

    def __call__(self, *args: Any) -> Any:
        if self.chosen is not None:   # (a caller that still holds the chooser: the record's compiled_graph)
            return self.chosen(*args)
        self.calls += 1
        sig = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else None for a in args)
        seen = self.by_sig.get(sig)
        if seen is None:
            seen = self.by_sig[sig] = [0, [], []]
        k = seen[0]
        seen[0] = k + 1
        eager = k % 2 == 1
        fn = self.eager if eager else self.compiled
        if k < 2:   # a warm-up call of each (the first call of a compiled graph may still compile)
            out = fn(*args)
        else:
            _sync()
            t0 = time.perf_counter()
            out = fn(*args)
            _sync()
            seen[1 + eager].append(time.perf_counter() - t0)
        if seen[0] >= 2 + 2 * self.trials:
            self._decide(seen[1], seen[2])
        elif self.calls >= GIVE_UP * (2 + 2 * self.trials):
            self._decide([], [])   # (sizes that never repeat: nothing to compare, the backend's graph stays)
        return out

    def _decide(self, compiled_times: list, eager_times: list) -> None:
        self.times = (compiled_times, eager_times)
        faster_eager = bool(eager_times) and min(eager_times) < min(compiled_times) * (1 - MARGIN)
        self.serving = EAGER if faster_eager else self.backend
        self.chosen = self.eager if faster_eager else self.compiled
        for ref in self._users:
            f = ref()
            if f is not None and f.__globals__.get("_graph") is self:
                f.__globals__["_graph"] = self.chosen

    def describe(self) -> str:
        """Which graph the record serves, with the times measured (``stats().graphs_served``)."""
        if self.serving is None:
            return f"timing the {self.backend} graph against the eager graph ({self.calls} calls so far)"
        name = "eager" if self.serving == EAGER else self.backend
        if not self.times[0]:
            return f"serves the {name} graph (the sizes of its inputs changed on every call: nothing to compare)"
        compiled_s, eager_s = min(self.times[0]), min(self.times[1])
        return f"serves the {name} graph ({self.backend} {compiled_s * 1e3:.3f} ms, eager {eager_s * 1e3:.3f} ms; " \
               f"best of {self.trials} calls each)"


def served(records: tuple) -> list[str]:
    """One line per record that chooses its graph: which one it serves (``stats().graphs_served``),
    numbered as the records are (the newest is the highest number)."""
    n = len(records)
    return [f"record {n - i}: {r.choice.describe()}" for i, r in enumerate(records) if r.choice is not None]


def _sync() -> None:
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
