"""Conditional nodes as ``torch.cond`` under TorchInductor (magpy.dynamic.cond): a branch on a
tensor value whose two sides were both monitored becomes one ``torch.cond`` in the record's
graph, which Inductor compiles whole (one region), instead of regions around a Python node.
Every call is compared with eager; where ``torch.cond`` would not mean what the branch does (a
side passing its input through, autograd recording), the record keeps its regions."""
from __future__ import annotations

import torch
import torch.nn as nn
from conftest import same

import magpy


class TwoSided(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(x)
        if h.mean() > 0:
            h = self.a(h) * 2
        else:
            h = self.b(h) - 1
        return h.sum(1)


class PassThrough(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(x)
        if h.mean() > 0:
            h = self.a(h)
        return h * 3


def _calls(model, xs, backend="inductor"):
    cf = magpy.compile(model, backend=backend)
    for x in xs:
        with torch.no_grad():
            assert same(cf(x), model(x)), x
    return cf


def test_both_sides_become_one_torch_cond_graph():
    torch.manual_seed(0)
    m = TwoSided()
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    cf = _calls(m, [pos, neg, pos * 2, neg * 3, pos, neg])
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.fallbacks) == (2, 0)
    rec = magpy.records(cf)[0]
    assert "higher_order.cond" in rec.graph_module.code and "conditional" not in rec.graph_module.code
    assert rec.regions == 1


def test_a_side_passing_its_input_through():
    """The skipping side returns its input: a copy in the torch.cond arm (torch.cond's outputs may
    not alias its operands); merging already refuses branches where that identity is observed."""
    torch.manual_seed(0)
    m = PassThrough()
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    cf = _calls(m, [pos, neg, pos * 2, neg * 3, pos])
    rec = magpy.records(cf)[0]
    assert "higher_order.cond" in rec.graph_module.code and rec.regions == 1


def test_gated_blocks_operands_that_are_views():
    """BlockDrop's loop: the gate column (a view of the gate) and the gate itself are operands
    of one conditional: the view is copied, every record is one graph."""
    import itertools
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_branches import Gated, _gate

    torch.manual_seed(0)
    m = Gated()
    cf = magpy.compile(m, backend="inductor")
    x = torch.randn(2, 8)
    for bits in itertools.product([0, 1], repeat=3):
        with torch.no_grad():
            assert same(cf(x, _gate(bits)), m(x, _gate(bits))), bits
    recs = magpy.records(cf)
    assert magpy.stats(cf).fallbacks == 0
    assert any("higher_order.cond" in r.graph_module.code for r in recs)
    assert all(r.regions == 1 for r in recs)


def test_eager_backend_keeps_the_python_conditional():
    torch.manual_seed(0)
    m = TwoSided()
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    cf = _calls(m, [pos, neg, pos, neg], backend="eager")
    code = magpy.records(cf)[0].graph_module.code
    assert "conditional" in code and "higher_order.cond" not in code


def test_with_autograd_recording_the_record_keeps_regions():
    torch.manual_seed(0)
    m = TwoSided()
    cf = magpy.compile(m, backend="inductor")
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    for x in (pos, neg, pos, neg):
        y, ref = cf(x), m(x)
        assert same(y, ref)
        y.sum().backward()
    assert "higher_order.cond" not in magpy.records(cf)[0].graph_module.code


def test_stats_counts_the_torch_cond_as_a_conditional():
    torch.manual_seed(0)
    m = TwoSided()
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    cf = _calls(m, [pos, neg, pos])
    st = magpy.stats(cf)
    assert st.conditionals == 1 and st.graph_count == st.records == 2   # (the first run's record, and the one with torch.cond)
