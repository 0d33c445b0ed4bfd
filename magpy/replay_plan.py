"""The mock's replay plan, read from the RefGraph's versions (paper §4.2, Algorithm 1 ``GetMockNodes``).

The mock reproduces the final state the monitor run left outside the call. Algorithm 1 names the
nodes it must reproduce: objects created in the run and stored outside (reached from SN #0
through the *last* versions' edges) and objects that existed at entry and were changed in place
(more than one :class:`~magpy.refgraph.ShadowVersion`). The first kind is rebuilt where a write
stores it, so the plan is made of the second kind, one :class:`Step` per thing their versions
changed, in the order the run first changed each object:

* an attribute written or deleted (``Change("attr")``): set to the object's final value or deleted;
* a global written or deleted (a version of SN #0, ``Change("global")``): the module dict's final entry;
* a closure cell written (``Change("cell")``): the cell's final contents;
* a container changed by calls the mock repeats (``Change("call")``: ``append``, ``d[k] = v``...):
  the same calls, in program order, so items the run never read stay unguarded;
* a container changed in a way taken whole (``Change("whole")``: ``+=``, ``del d[k]``, ``sort``,
  a read after logged calls folded them): refilled with its final contents;
* a tensor changed in place: replayed by the operator graph itself (``"graph"``).

Versions hold which references changed, not the final values: the final value of each is read
from the runtime object when the mock is generated (paper §4.1: "MAGPY only needs the state of
reference, which can be easily obtained by inspecting runtime variables"). A node created in the
run holds no object for a tensor (:meth:`RefGraph.new`), so the runtime object is the only
complete answer.

A container that native code changed with no event the monitor saw (a C function mutating a
list it was given) shows up at the end: its state at entry (``ShadowNode.snapshot``, kept where
the run read it whole) differs from its state now. :func:`replay_plan` gives such a node its
missing version first, so GetMockNodes lists it like any other.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

import torch

from .refgraph import WHOLE, RefGraph, ShadowNode, mock_nodes


@dataclass(frozen=True, eq=False)
class Step:
    """One thing the mock does: ``kind`` is ``"attr"``, ``"global"``, ``"cell"``, ``"call"``,
    ``"refill"`` or ``"graph"``; ``key`` the attribute/global name or the method; ``args``
    the arguments of a repeated call; ``holder`` the globals dict of a global."""

    kind: str
    node: ShadowNode
    key: Any = None
    args: tuple = ()
    holder: Any = None


CONTAINERS = (list, dict, set, collections.deque)


def replay_plan(rg: RefGraph) -> list[Step]:
    """The steps that reproduce the run's changes outside, from the RefGraph's versions."""
    _close_unseen_changes(rg)
    changed = [n for n in mock_nodes(rg) if len(n.versions) != 1 and (n.source is not None or n is rg.sn0)]
    # Pre-existing objects reached along a path the monitor made no edge for (a default argument,
    # an object found through ``sys.modules``, a cell's contents): outside state all the same.
    seen = {n.node_id for n in changed}
    changed += [rg.sn[nid] for nid in rg.changed if nid not in seen and rg.sn[nid].source is not None]
    order = {nid: i for i, nid in enumerate(rg.changed)}
    changed.sort(key=lambda n: order[n.node_id])
    plan: list[Step] = []
    for node in changed:
        plan += _node_steps(node)
    return plan


def _node_steps(node: ShadowNode) -> list[Step]:
    changes = [v.change for v in node.versions[1:]]
    if node.node_id == 0:
        firsts = {}
        for c in changes:
            firsts.setdefault((id(c.holder), c.key), c)
        return [Step("global", node, c.key, holder=c.holder) for c in firsts.values()]
    if all(c.kind == "cell" for c in changes):
        return [Step("cell", node)]
    names = dict.fromkeys(c.key for c in changes if c.kind == "attr")
    steps = [Step("attr", node, name) for name in names]
    obj = node.obj
    if any(c.kind == "whole" for c in changes):
        if isinstance(obj, torch.Tensor):
            if not names:   # (`x.grid = None` on a tensor: the attribute is its change)
                steps.append(Step("graph", node))
        elif not names or isinstance(obj, CONTAINERS):
            # (an object with attributes written: those are its change; a container's items changed too)
            steps.append(Step("refill", node))
    else:
        steps += [Step("call", node, c.key, c.args) for c in changes if c.kind == "call"]
    return steps


def _close_unseen_changes(rg: RefGraph) -> None:
    """A new version for each container read whole whose contents changed with no event seen."""
    for node in rg.sn[1:]:
        if node.snapshot is None or node.source is None:
            continue
        if any(v.change.kind in ("call", "whole") for v in node.versions[1:]):
            continue   # (calls replayed, or already reproduced from the final contents)
        if _changed(node):
            rg.inplace(node, WHOLE)


def _changed(node: ShadowNode) -> bool:
    obj, snap = node.obj, node.snapshot
    if isinstance(obj, dict) and not isinstance(snap, dict):   # (a mapping kept as its keys)
        return list(obj) != list(snap)
    if isinstance(obj, dict):   # (the order too: `move_to_end`, a key removed and set again)
        return not (len(obj) == len(snap) and all(k in snap and snap[k] is v for k, v in obj.items())
                    and list(obj) == list(snap))
    if isinstance(obj, (list, collections.deque)):
        return len(obj) != len(snap) or any(a is not b for a, b in zip(obj, snap))
    if isinstance(obj, set):
        return obj != snap
    return False

