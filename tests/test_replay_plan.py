"""The mock's replay plan (magpy.replay_plan) read from RefGraph versions: Algorithm 1's
GetMockNodes names the changed objects, their versions say what changed and in which order."""
from __future__ import annotations

import types

import torch

import magpy
from magpy.refgraph import DELETED, RefGraph, guard_nodes, mock_nodes
from magpy.replay_plan import replay_plan
from magpy.source import ArgSource, ItemSource


def _steps(plan):
    return [(s.kind, s.node.node_id, s.key, s.args) for s in plan]


def test_figure_9_writes_are_versions_and_the_plan_follows_them():
    x0_t, y = torch.ones(2), torch.ones(2)
    lst = [x0_t]
    g = RefGraph()
    x = g.external(lst, ArgSource(0, "x"), ("arg", "x"))
    x0 = g.external(x0_t, ItemSource(ArgSource(0, "x"), 0))
    g.add_initial_ref(x, ("item", 0), x0.node_id)
    g.inplace(x0)                                 # x[0] += y
    g.log_call(x, "append", [y])                  # x.append(...)
    assert [n.node_id for n in guard_nodes(g)] == [0, x.node_id, x0.node_id]
    assert {n.node_id for n in mock_nodes(g)} == {x.node_id, x0.node_id}
    assert _steps(replay_plan(g)) == [("graph", x0.node_id, None, ()), ("call", x.node_id, "append", (y,))]


def test_a_global_written_twice_is_one_step_with_its_final_value_and_stores_a_new_object():
    g = RefGraph()
    mod: dict = {"a": 0}
    made = [1, 2]
    g.write_global(mod, "a", 1)
    g.write_global(mod, "b", made)
    g.write_global(mod, "a", 2)
    assert g.global_written(mod, "a") and not g.global_written(mod, "c")
    assert g.sn0 in mock_nodes(g)                 # SN #0's versions are the global writes
    # the list made in the call and stored in a global: reached through SN #0's last version only
    assert g.get_node_by_var(made) is None        # (a global's value gets no node of its own)
    plan = replay_plan(g)
    assert [(s.kind, s.key) for s in plan] == [("global", "a"), ("global", "b")]
    assert all(s.holder is mod for s in plan)
    assert g.global_writes() == {(id(mod), "a"): (mod, "a"), (id(mod), "b"): (mod, "b")}


def test_a_cell_written_then_read_back_is_seen_as_written():
    def outer():
        v = 1

        def f():
            return v
        return f
    cell = outer().__closure__[0]
    g = RefGraph()
    assert not g.cell_written(cell)
    g.write_cell(cell, 5)
    g.write_cell(cell, DELETED)
    assert g.cell_written(cell)
    node = g.get_node_by_var(cell)
    assert node in guard_nodes(g) and node in mock_nodes(g)   # reached from SN #0 by ("cell", id)
    assert _steps(replay_plan(g)) == [("cell", node.node_id, None, ())]


def test_logged_calls_are_replayed_in_order_until_a_whole_read_folds_them():
    items = ["a"]
    g = RefGraph()
    n = g.external(items, ArgSource(0, "items"), ("arg", "items"))
    g.log_call(n, "append", ["b"])
    g.log_call(n, "__setitem__", [-1, "c"])
    assert g.calls_by_node() == {n.node_id: [("append", ["b"]), ("__setitem__", [-1, "c"])]}
    assert [s.kind for s in replay_plan(g)] == ["call", "call"]
    g.fold_calls(n)
    assert g.calls_by_node() == {}
    assert _steps(replay_plan(g)) == [("refill", n.node_id, None, ())]


def test_a_change_no_event_showed_gets_its_version_from_the_entry_snapshot():
    d = {"a": 1, "b": 2}
    g = RefGraph()
    n = g.external(d, ArgSource(0, "d"), ("arg", "d"))
    n.snapshot = dict(d)
    assert replay_plan(g) == []
    del d["a"]
    d["a"] = 1                                    # same items, another order
    assert _steps(replay_plan(g)) == [("refill", n.node_id, None, ())]
    assert len(n.versions) == 2
    assert len(replay_plan(g)) == 1               # (found once)


def test_attributes_written_in_first_change_order_across_objects():
    a, b = types.SimpleNamespace(), types.SimpleNamespace()
    g = RefGraph()
    na = g.external(a, ArgSource(0, "a"), ("arg", "a"))
    nb = g.external(b, ArgSource(1, "b"), ("arg", "b"))
    g.write_attr(nb, "x", 1)
    g.write_attr(na, "y", [])
    g.write_attr(nb, "z")                         # del b.z
    g.write_attr(nb, "x", 2)
    assert [(s.node.node_id, s.key) for s in replay_plan(g)] == [(nb.node_id, "x"), (nb.node_id, "z"), (na.node_id, "y")]
    assert g.attr_writes() == {nb.node_id: {"x": True, "z": True}, na.node_id: {"y": True}}


def test_a_compiled_call_replays_a_global_and_a_cell_written_twice():
    ns: dict = {}
    exec("def outer():\n"
         "    c = 0\n"
         "    def f(x):\n"
         "        global g\n"
         "        nonlocal c\n"
         "        g = x.shape[0]\n"
         "        c = g + 1\n"
         "        g = c * 10\n"
         "        c = c + g\n"
         "        return x * c\n"
         "    return f, lambda: c\n", ns)
    f, peek = ns["outer"]()
    cf = magpy.compile(f)
    for _ in range(4):
        ns["g"] = -1
        out = cf(torch.ones(3))
        assert ns["g"] == 40 and peek() == 44 and torch.equal(out, torch.full((3,), 44.0))
    assert magpy.stats(cf).guard_hits > 0
