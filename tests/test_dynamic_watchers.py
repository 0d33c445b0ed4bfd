"""The dynamic watchers' contracts (magpy.dynamic): the protocol the monitor reaches them by,
the one place they decide what a stretch of the run wrote, and the OpGraph's public rebinding
that the loop and branch passes use instead of its private table."""
from __future__ import annotations

import heapq
import types

import torch

from magpy.dynamic.watcher import Watcher
from magpy.dynamic.writes import ARM_IMMUTABLE, ARM_WRITES, call_writes, instruction_writes
from magpy.graph import OpGraph
from magpy.monitor import Monitor


def _ins(opname, real=None, argrepr=""):
    return types.SimpleNamespace(opname=opname, real=real or opname, argrepr=argrepr)


def test_the_monitor_reaches_its_watchers_through_the_protocol():
    def f(x):
        return x

    mon = Monitor(f.__code__, {}, {})
    assert [w.name for w in mon.watchers] == ["loops", "branches"]
    assert all(isinstance(w, Watcher) for w in mon.watchers)
    assert not any(w.active for w in mon.watchers)
    # the tables the monitor's dispatch tests are the watchers' own (one state, not a copy)
    assert mon.loops is mon.loop_watcher.loops and mon.watched is mon.loop_watcher.watched
    assert mon.branch_active is mon.branch_watcher.branch_active
    why = []
    mon.branch_active.append(types.SimpleNamespace(fail=why.append))   # (an arm still open at the run's end)
    assert mon.branch_watcher.active
    assert mon.branch_watcher.on_finish() == []
    assert why == ["did not reach its merge point"]
    assert mon.branch_active == [] and not mon.branch_watcher.active


def test_what_an_instruction_or_a_call_writes():
    assert instruction_writes(_ins("STORE_ATTR"), [1, 2]) == "STORE_ATTR"
    assert instruction_writes(_ins("LOAD_FAST"), [1, 2]) is None
    # a comprehension's append writes the list it builds: in an arm, not in a loop
    assert instruction_writes(_ins("LIST_APPEND"), [[], 1]) is None
    assert instruction_writes(_ins("LIST_APPEND"), [[], 1], ARM_WRITES, ARM_IMMUTABLE) == "LIST_APPEND"
    acc = []
    aug = _ins("BINARY_OP", argrepr="+=")
    assert instruction_writes(aug, [acc, [1]]) == "`+=` changes a list"
    assert instruction_writes(aug, [acc, [1]], accumulates=lambda obj: obj is acc) is None
    assert instruction_writes(aug, [3, 4]) is None
    assert instruction_writes(_ins("BINARY_OP", argrepr="<="), [[], []]) is None
    assert instruction_writes(_ins("BINARY_OP", argrepr="|="), [frozenset(), frozenset()], ARM_WRITES,
                              ARM_IMMUTABLE) is None
    assert call_writes(setattr, [object(), "a", 1], {}) == "calls `setattr`"
    assert call_writes(heapq.heappush, [[], 1], {}) == "passes an object to `heappush`"
    lst = []
    assert call_writes(lst.append, [1], {}) == "calls `list.append`"
    assert call_writes(lst.append, [1], {id(lst): (lst, "acc", None)}) is None   # (a watched accumulator)
    assert call_writes({}.get, ["k"], {}) is None
    assert call_writes(torch.relu, [torch.ones(1)], {}) is None


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
