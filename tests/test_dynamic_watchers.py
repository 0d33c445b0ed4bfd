"""The dynamic watchers' contracts (magpy.dynamic): the protocol the monitor reaches them by,
the one place they decide what a stretch of the run wrote, and the OpGraph's public rebinding
that the loop and branch passes use instead of its private table."""
from __future__ import annotations

import heapq
import types

import pytest
import torch

from magpy.dynamic import WATCHERS
from magpy.graph import OpGraph
from magpy.monitor import Monitor, RunSwitches, Watcher


def _ins(opname, real=None, argrepr=""):
    return types.SimpleNamespace(opname=opname, real=real or opname, argrepr=argrepr)


def test_the_monitor_reaches_its_watchers_through_the_protocol():
    def f(x):
        return x

    mon = Monitor(f.__code__, {}, {}, switches=RunSwitches(watchers=WATCHERS))
    assert [w.name for w in mon.watchers] == ["loop_watcher", "branch_watcher"]
    assert mon.loop_watcher is mon.watchers[0] and mon.branch_watcher is mon.watchers[1]
    assert all(isinstance(w, Watcher) for w in mon.watchers)
    assert not any(w.active for w in mon.watchers)
    # the watchers' tables live on the watchers alone (the run holds no copy of them)
    assert not hasattr(mon, "loops") and not hasattr(mon, "branch_active")
    why = []
    arms = mon.branch_watcher.branch_active
    arms.append(types.SimpleNamespace(fail=why.append))   # (an arm still open at the run's end)
    assert mon.branch_watcher.active
    assert mon.branch_watcher.on_finish() == []
    assert why == ["did not reach its merge point"]
    assert arms == [] and not mon.branch_watcher.active


def test_a_run_without_its_watchers_is_refused_by_name():
    """The rules ask the loop and branch watchers by name: a run made without them says so."""
    with pytest.raises(ValueError, match="loop watcher and a branch watcher"):
        Monitor((lambda: None).__code__, {}, {})


def _writes_of(fn, *args):
    """The RefGraph's writes of the monitor run of ``fn(*args)``'s first compiled call, as
    (kind, key, written object's id)."""
    import magpy
    from magpy.refgraph import RefGraph

    seen, note = [], RefGraph.note_write

    def spy(self, node, change, obj=None):
        seen.append((change.kind, change.key, id(obj)))
        return note(self, node, change, obj)

    RefGraph.note_write = spy
    try:
        magpy.compile(fn, backend="eager")(*args)
    finally:
        RefGraph.note_write = note
    return seen


def test_the_refgraph_records_every_write():
    """Writes to objects made in the call are RefGraph writes (no version: no mock replays them),
    beside the versions of objects from outside; the dynamic watchers ask for them."""
    class Box:
        pass

    outside = Box()

    def f(x):
        b = Box()
        b.v = x                       # an attribute of an object made in the call
        lst = [x]
        lst[0] = x + 1                # an item of a list made in the call
        lst.append(x)                 # a native method that writes its list
        lst += [x]                    # an augmented assignment on a mutable
        n = 1
        n += 1                        # ... not on an int
        sq = [v for v in lst]         # a comprehension adding to the list it builds
        outside.seen = n              # an attribute of an object from outside (also a version)
        return b.v + sq[0]

    writes = _writes_of(f, torch.ones(2))
    kinds = [(k, key) for k, key, _ in writes]
    assert ("attr", "v") in kinds and ("item", None) in kinds and ("call", "list.append") in kinds
    assert ("call", "+=") in kinds and ("attr", "seen") in kinds
    assert any(k == "build" for k, _ in kinds)
    assert sum(1 for k, key in kinds if key == "+=") == 1      # (n += 1 makes a new int)
    assert any(k == "attr" and oid == id(outside) for k, _, oid in writes)


def test_what_natives_write():
    from magpy.annotations.builtins import native_writes

    o = object()
    assert native_writes(setattr, [o, "a", 1]) == ("setattr", o)
    lst = []
    assert native_writes(heapq.heappush, [lst, 1]) == ("heappush", lst)
    assert native_writes(lst.append, [1]) == ("list.append", lst)
    assert native_writes({}.get, ["k"]) is None
    assert native_writes(torch.relu, [torch.ones(1)]) is None
    assert native_writes(len, [lst]) is None


def test_loops_and_arms_ask_the_refgraph():
    """A loop that writes an object made in the call is not rolled; one whose body only builds a
    comprehension is; the reason names the write and the user's line."""
    from magpy.monitor.writes import arm_write, loop_write
    from magpy.refgraph import Change, RefGraph

    g = RefGraph()
    mon = types.SimpleNamespace(rg=g)
    g.note_write(None, Change("build", "LIST_APPEND"), [])
    assert loop_write(mon, 0, {}) is None and arm_write(mon, 0) is not None
    acc = []
    g.note_write(None, Change("call", "list.append"), acc)
    assert loop_write(mon, 0, {id(acc): (acc, "acc", None)}) is None
    assert loop_write(mon, 0, {}).describe() == "calls `list.append`"
    assert loop_write(mon, len(g.writes), {}) is None


def test_rebinding_replaced_nodes():
    g = OpGraph()
    a, b, c = torch.ones(1), torch.ones(2), torch.ones(3)
    na = g.placeholder(a, "a")
    nb = g.call("function", torch.neg, (na,), {})
    nc = g.call("function", torch.neg, (nb,), {})
    g.bind(b, nb)
    g.bind(c, nc)
    assert g.bound_nodes() == [na, nb, nc]
    new = g.call("function", torch.abs, (na,), {})
    g.rebind({nb: new, nc: None})
    assert g.node_of(a) is na and g.node_of(b) is new and g.node_of(c) is None
    assert g.bound_nodes() == [na, new]
