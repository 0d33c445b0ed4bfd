"""The nodes the dynamic passes put into a record's graph, and what they call at run time.

:func:`~magpy.dynamic.rolling.roll_loops` replaces a loop's unrolled iterations by one
:class:`RolledLoop` node; :func:`~magpy.dynamic.merging.merge_branches` replaces a branch's arm by
one :class:`Conditional` node. Both run graphs of their own (a loop body, an arm), each compiled
once per signature of its tensor inputs (:class:`CompiledBySignature`). ``range_value`` (and
``loop_index``, ``range_len`` of :mod:`magpy.graph`) are graph targets the loop watcher (:mod:`magpy.dynamic.loops`)
records so that a loop's index and trip count have a node to follow; codegen evaluates them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx


def range_value(k: int, start: int, step: int, count: int, backwards: bool) -> int:
    """The value iteration ``k`` of ``range(start, .., step)`` gives (``reversed``: counted from the end)."""
    return start + ((count - 1 - k) if backwards else k) * step


class LoopCountError(RuntimeError):
    """A rolled loop ran with a trip count its record does not serve (the call is a miss)."""


class RolledLoop:
    """A loop node of a record's graph: runs ``body`` ``count`` times.

    ``body(k, *elements, *carries, *invariants)`` (without ``k`` when it does not take it; an
    element of each sequence the loop walks: one, several for ``zip``, none for a range) returns ``(*next_carries, *collected, *last)``;
    the node returns ``(*last, *collected_lists)``: the last iteration's values the code after the
    loop takes, then the list of each collected value (an accumulator's elements, in order)."""

    magpy_python = False   # (set per node in the graph's meta: compile_regions splits around it)

    def __init__(self, body: fx.GraphModule, n_carry: int, n_coll: int, n_last: int, where: str,
                 checks: list, uses_index: bool = True, backwards: bool = False) -> None:
        self.body = body
        self.run_body: Callable = body.forward
        self.n_carry, self.n_coll, self.n_last = n_carry, n_coll, n_last
        self.checks = checks   # (kind, expected) of each value the body assumes, after its other outputs
        self.uses_index = uses_index
        self.backwards = backwards   # iteration k takes element count - 1 - k (reversed(range(len(xs))))
        self.where = where
        self.__name__ = "rolled_loop"
        self.__qualname__ = "rolled_loop"

    def compile_with(self, compile_fn: Callable, shared: dict) -> None:
        """Compile the body with ``compile_fn`` (a static compile: no guards of its own) on its
        first call, again for each new signature of its tensor inputs; bodies with the same code
        (the layers of a stacked LSTM) share one compiled body."""
        key = self.body.code
        hit = shared.get(key)
        if hit is None:
            hit = shared[key] = CompiledBySignature(self.body, compile_fn)
        self.run_body = hit

    def __call__(self, count: int, seqs: tuple, inits: tuple, invariants: tuple) -> tuple:
        count = int(count)
        if count < 1:
            raise LoopCountError(f"a loop rolled at {self.where} ran {count} times")
        carries = tuple(inits)
        colls: list[list] = [[] for _ in range(self.n_coll)]
        out: Any = ()
        nc, nl = self.n_carry, self.n_coll
        first_check = nc + nl + self.n_last
        body, ui = self.run_body, self.uses_index
        last = count - 1 if self.backwards else 0
        for k in range(count):
            at = last - k if self.backwards else k
            elements = [s[at] for s in seqs]
            out = body(k, *elements, *carries, *invariants) if ui else body(*elements, *carries, *invariants)
            carries = tuple(out[:nc])
            for j in range(nl):
                colls[j].append(out[nc + j])
            for (kind, expected), v in zip(self.checks, out[first_check:]):
                if not _holds(kind, v, expected):
                    raise LoopCheckFailed(f"iteration {k} of the loop rolled at {self.where}: {v!r} is not {expected!r}")
        return (*out[nc + nl:first_check], *colls)


def _holds(kind: str, v: Any, expected: Any) -> bool:
    if kind == "truth":
        return bool(v) is bool(expected)
    if kind == "item":
        v = v.item()
    if isinstance(v, torch.Tensor):
        return False
    return v == expected or (v != v and expected != expected)   # (NaN is NaN, as in codegen's checks)


class LoopCheckFailed(RuntimeError):
    """A value a rolled loop's body assumed differs in some iteration: the record does not hold."""


class CompiledBySignature:
    """A graph (a rolled loop's body, a conditional's arm) compiled for the shapes, strides,
    dtypes and devices of its tensor inputs (a static compile serves only those: a lifted batch
    size gives another signature)."""

    def __init__(self, body: fx.GraphModule, compile_fn: Callable) -> None:
        self.body, self.compile_fn = body, compile_fn
        self.compiled: dict = {}

    def __call__(self, *args):
        sig = tuple((a.shape, a.stride(), a.dtype, a.device, a.requires_grad) if isinstance(a, torch.Tensor) else type(a)
                    for a in args)
        fn = self.compiled.get(sig)
        if fn is None:
            fn = self.compiled[sig] = self.compile_fn(self.body, list(args))
        return fn(*args)


@dataclass
class Arm:
    """One side of a branch as a graph: ``gm(*locals at J by name, *tensors from outside)``
    returns the tensors of the live locals at M (``out_names``), each made in the arm, passed
    through from a local at J (``passes``: name -> J name) or read from outside."""

    gm: fx.GraphModule
    in_names: tuple
    outside: tuple               # (source, example tensor) per outside input
    out_names: tuple
    passes: dict                 # output name -> the J-local name it passes through
    reads: dict                  # output name -> the outside source it passes through
    ops: int                     # operator nodes (0: nothing to compile)
    where: str


class Conditional:
    """A conditional node of a record's graph: ``node(pred, true_inputs, false_inputs)`` runs the
    arm of the side ``bool(pred)`` selects and returns its outputs (a tuple)."""

    magpy_python = False   # (set per node in the graph's meta: compile_regions splits around it)

    def __init__(self, arm_true: Arm, arm_false: Arm, where: str) -> None:
        self.arms = (arm_true, arm_false)
        self.run_true: Callable = arm_true.gm.forward
        self.run_false: Callable = arm_false.gm.forward
        self.where = where
        self.__name__ = "conditional"
        self.__qualname__ = "conditional"

    def bodies(self) -> list[fx.GraphModule]:
        """The arms that compute something (what a backend compiles)."""
        return [a.gm for a in self.arms if a.ops]

    def compile_with(self, compile_fn: Callable, shared: dict) -> None:
        """Compile each arm that computes something with ``compile_fn`` on its first call (arms
        with the same code share one compiled arm)."""
        runs = []
        for arm in self.arms:
            if not arm.ops:
                runs.append(arm.gm.forward)
                continue
            key = (arm.gm.code, tuple(id(b) for b in arm.gm.buffers()))   # (constants it holds)
            hit = shared.get(key)
            if hit is None:
                hit = shared[key] = CompiledBySignature(arm.gm, compile_fn)
            runs.append(hit)
        self.run_true, self.run_false = runs

    def __call__(self, pred: Any, true_inputs: tuple, false_inputs: tuple) -> tuple:
        if bool(pred):
            return self.run_true(*true_inputs)
        return self.run_false(*false_inputs)

