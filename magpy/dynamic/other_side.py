"""Both sides of the branches on tensor values from one miss: the other-side run (paper §6.2.2,
the ``If`` node, whose two arms the paper monitors in one run by rewriting the source).

A monitor run takes one side of each branch; :mod:`magpy.dynamic.merging` makes a conditional
node once a *later* run takes the other side. Where each input draws a new combination of sides
(BlockDrop's per-block policy at paper size: 54 branches), later runs kept missing on the sides
not yet seen, and the function hit its recompile limit. So, right after a run R1 whose record
was kept and whose clean arms joined the library with one side only, the compiled callable runs
the program once more on the same arguments: the *other-side run* R2. (Only where R1 was a miss
on which an earlier record's side of a branch did not hold: a branch that always goes one way
costs nothing but its check, as before.) At each branch whose
library holds the side R2 would take but not the other, R2 takes the other: the monitor puts the
other truth on the value stack just before the conditional jump reads it (the assumption it
records says that truth, so R2 is a consistent run of the program as if the tensor had said
so). R2's record merges each such branch into a conditional node and serves every combination.

R2 is a run the program did not ask for, so it must leave nothing behind:

* it runs only after a run that changed nothing outside, drew nothing and replayed no effect
  (:func:`~magpy.dynamic.merging.run_blocks_arms`, the library's own condition);
* it stops (:class:`OtherSideStop`, raised into the program with monitoring off) before the
  instruction that would change state outside the call, replay an effect (a print), draw a
  random number, or run unmonitored (a break): the monitor records those before they happen;
* an operator's in-place change is seen after the operator ran, so every tensor from outside
  that an operator of R2 takes is copied first, and put back (values and version counter) if
  R2 changed it; the random number generators' states are put back too;
* a branch (by its key) is flipped once per run, and a run the flips lead into a loop that does
  not end stops past 4x the operators of R1;
* no branch is flipped while a monitored frame is inside a ``try`` or ``with`` block, and once
  one was, R2 stops before a monitored frame enters one (a stop inside would run its handler);
  R2's result, or what it raised, is dropped.

R2 is counted in ``Stats.other_side_runs`` (not in ``monitor_runs``, which counts the runs of
misses). A function whose R2 stopped, or merged nothing, makes no more of them.
"""
from __future__ import annotations

import functools
import random
from typing import Any

import torch

from ..bytecode import DECODER
from ..bytecode.flow import flow_of
from ..global_state import is_state_setter_name
from ..objmodel import storage_key
from ..torch_support import rng_and_grad_state, set_rng_and_grad_state, set_version_counters
from .merging import run_blocks_arms

#: R2s a compiled function makes at most (each after a miss whose arms lack their other side)
MAX_OTHER_SIDE_RUNS = 4


class OtherSideStop(BaseException):
    """Raised into the program to end an other-side run before it would do something eager does
    not (a BaseException, like :class:`magpy.splits.SplitHere`: the program's ``except
    Exception`` does not catch it)."""


def wanted(mon: Any, plan: Any, library: Any, done: int) -> bool:
    """After run ``mon`` (R1) whose record was kept and whose arms joined ``library``: is an
    other-side run due? Only after a miss on which a record's side of a branch did not hold
    (``plan.sides_differ``: a branch that never changes costs nothing but its check), at most
    :data:`MAX_OTHER_SIDE_RUNS` (``done`` so far), and where it would see a side the library lacks."""
    w = mon.branch_watcher
    if not plan.sides_differ or done >= MAX_OTHER_SIDE_RUNS or not w.arms or mon.effects \
            or run_blocks_arms(mon) is not None:
        return False
    return any(not library.has(span.key, not span.outcome) for span, _ in w.arms)


class OtherSides:
    """The state of one other-side run: what it flipped, the outside tensors it may have
    changed (copied before), the generators' states to put back."""

    def __init__(self, ops_before: int = 0) -> None:
        self.flipped = 0
        self.flipped_keys: set = set()   # (a branch is flipped once per run: `while err > tol` would loop)
        # (a run the flips lead astray may not end, `while x.sum() != 0` on a flipped value: it
        # stops past a multiple of the operators of the run before it)
        self.op_limit = 4 * ops_before + 256
        self.stopped: str | None = None
        self._copies: dict[int, tuple] = {}
        self._storages: set = set()   # (outside_storages)
        self._seen_inputs = 0
        self._rng = rng_and_grad_state()

    # -- during the run ---------------------------------------------------------------------------
    def keep(self, mon: Any, tensors: Any) -> None:
        """An operator is about to run on ``tensors``: copy those from outside the call (seen
        first), so an in-place change can be undone."""
        for t in tensors:
            if id(t) in self._copies or not isinstance(t, torch.Tensor) or _made_in_call(mon, t):
                continue
            with torch.no_grad():
                self._copies[id(t)] = (t, t._version, t.detach().clone())

    def check(self, mon: Any, fs: Any, ins: Any, stack: list) -> None:
        """Before the instruction ``ins`` of frame ``fs`` that the monitor just handled: stop if
        it would leave a trace, or (once a branch was flipped) enter a ``try`` or ``with`` block,
        whose handler a later stop would run."""
        why = _gate(mon, fs, ins, stack, bool(self.flipped)) or self._why_stop(mon, fs, ins)
        if why is not None:
            self.stop(why)

    def _why_stop(self, mon: Any, fs: Any, ins: Any) -> str | None:
        if self.flipped and flow_of(fs.code).enters_handler_range(ins.offset):
            return "it would enter a try or with block"
        if mon.graph.op_count > self.op_limit:
            return f"it ran more than {self.op_limit} operators (4x the run before it, and 256)"
        if mon.effects:
            return "it would replay an effect"
        if mon.broken is not None:
            return f"it would run unmonitored ({mon.broken})"
        return run_blocks_arms(mon)

    def stop(self, why: str) -> None:
        from .. import capture

        self.stopped = self.stopped or why
        capture.stop()
        raise OtherSideStop(why)

    def outside_storages(self, mon: Any) -> set:
        """The memory of the tensors the run read from outside (its graph's inputs) so far."""
        inputs = mon.graph.inputs
        if len(inputs) != self._seen_inputs:
            for _, t in inputs[self._seen_inputs:]:
                if isinstance(t, torch.Tensor):
                    self._storages.add(storage_key(t))
            self._seen_inputs = len(inputs)
        return self._storages

    # -- after it ---------------------------------------------------------------------------------
    def restore(self) -> None:
        """Put back what the run may have changed: outside tensors an operator changed in place
        (values, then version counter) and the random number generators."""
        # (by value too: `F.batch_norm` updates running statistics without a version bump)
        changed = [(t, v, c) for t, v, c in self._copies.values()
                   if t._version != v or t.shape != c.shape or not torch.equal(t, c)]
        for t, _, c in changed:
            with torch.no_grad():
                t.copy_(c)
        set_version_counters(tuple(t for t, _, _ in changed), [v for _, v, _ in changed])
        self._copies.clear()
        set_rng_and_grad_state(self._rng)


#: What an other-side run stops before, whatever the monitor makes of it (writes it records as
#: a replay for the mock, or that no record ever sees): state outside the call it cannot undo.
_WRITES_AFTER_FLIP = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
                                "DELETE_DEREF"})
_ITEM_WRITES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE", "DELETE_SLICE"})


@functools.cache
def _generators() -> tuple:
    kinds: list = [torch.Generator, random.Random]
    try:
        import numpy as np

        kinds += [np.random.Generator, np.random.RandomState, np.random.BitGenerator]
    except Exception:   # noqa: BLE001 - numpy is optional
        pass
    return tuple(kinds)


def _made_in_call(mon: Any, v: Any) -> bool:
    """Was ``v`` made in the call: a tensor the graph computed that shares no memory with a tensor
    from outside (``buf.data``, a view of one, is computed but is outside memory), or an object
    the RefGraph saw made?"""
    if isinstance(v, torch.Tensor):
        n = mon.graph.node_of(v)
        if n is None or n.op in ("placeholder", "get_attr"):
            return False
        sides = mon.other_sides
        return sides is None or storage_key(v) not in sides.outside_storages(mon)
    node = mon.node(v)
    return node is not None and node.source is None


def _gate(mon: Any, fs: Any, ins: Any, stack: list, flipped: bool) -> str | None:
    """Why the instruction ``ins`` may leave a trace the run cannot undo (None: it may not). After
    a flip: any attribute, global or cell write, an item write into what the call did not make,
    a torch setter of global state; always: a call that steps a random generator object from
    outside, fills a ``functools.lru_cache`` or registers a hook, and an in-place change of a
    tensor from outside by a method (its metadata, ``resize_``, ``requires_grad_``, is not
    restored from a copy)."""
    op = ins.real
    if flipped and op in _WRITES_AFTER_FLIP:
        return f"it would write outside ({op})"
    if flipped and op in _ITEM_WRITES and len(stack) >= 3:
        target = stack[-3] if op == "STORE_SLICE" else stack[-2]   # (TOS: the key, or a slice's end)
        if not _made_in_call(mon, target):
            return f"it would write an item of what the call did not make ({op})"
    if ins.opname not in ("CALL", "CALL_FUNCTION_EX"):   # (the call events of every CPython's decoder)
        return None
    try:
        if op == "CALL_FUNCTION_EX":
            fn, args, kwargs = DECODER.call_ex_operands(ins, stack)
            values = [*args, *(kwargs or {}).values()]
        else:
            fn, args, _ = DECODER.call_operands(ins, stack, fs.kw_names)
            values = list(args)
    except Exception:   # noqa: BLE001 - a call MagPy cannot read: not gated here (the monitor decides)
        return None
    name = getattr(fn, "__name__", "") or ""
    owner = getattr(fn, "__self__", None)
    kinds = _generators()
    if isinstance(owner, kinds) or any(isinstance(v, kinds) for v in values):
        return "it would step a random number generator object"
    if hasattr(fn, "cache_info") and hasattr(fn, "cache_clear"):
        return f"it would fill the cache of {name}"
    if name.startswith("register_"):
        return f"it would register something ({name})"
    target = owner if owner is not None else (values[0] if values else None)   # (`t.add_(1)`: unbound, t first)
    if name.endswith("_") and not name.endswith("__") and isinstance(target, torch.Tensor) \
            and not _made_in_call(mon, target):
        return f"it would change a tensor from outside in place ({name})"
    module = getattr(fn, "__module__", "") or getattr(type(fn), "__module__", "") or ""
    if flipped and module.startswith("torch") and is_state_setter_name(name):
        return f"it would change torch's global state ({name})"
    return None
