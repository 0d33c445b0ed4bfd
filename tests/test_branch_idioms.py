"""Data-dependent branches written the ways users write them become conditional nodes (paper
§6.2.2, the ``If`` node): a BlockDrop-like model whose policy skips any subset of N residual
blocks reaches one record that serves every policy within 3 monitor runs, for any N, including
the blocks skipped while ``x`` is still the caller's argument. Every call is compared with eager,
and so is whether the result is the argument itself (every block skipped)."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy


class Drop(nn.Module):
    def __init__(self, n_blocks: int, width: int = 8):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(n_blocks)])
        self.policy = nn.Linear(width, n_blocks)

    def forward(self, x):
        p = torch.sigmoid(self.policy(x.mean(0)))
        for i, blk in enumerate(self.blocks):
            if p[i] > 0.5:
                x = x + blk(x)
        return x


def _policies(model, calls, seed=1, cf=None):
    cf = cf or magpy.compile(model, backend="eager")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for k in range(calls):
            x = torch.randn(4, 8, generator=g) * 3
            out, ref = cf(x), model(x)
            assert same(out, ref), f"call {k}"
            assert (out is x) == (ref is x)
    return magpy.stats(cf), cf


@pytest.mark.slow
@pytest.mark.parametrize("n_blocks", [8, 54])
def test_any_number_of_gated_blocks_in_three_monitor_runs(n_blocks):
    torch.manual_seed(0)
    model = Drop(n_blocks).eval()
    st, cf = _policies(model, calls=12)
    assert st.monitor_runs <= 3 and st.fallbacks == 0, st
    assert st.conditionals >= n_blocks
    # warmed up: new policies are served by the record that holds every conditional, first try
    after, _ = _policies(model, calls=12, seed=2, cf=cf)
    assert (after.monitor_runs, after.fallbacks, after.unheld) == (st.monitor_runs, 0, st.unheld), after


def test_gates_as_an_argument_with_every_block_skipped():
    """``gate[i] > 0.5`` per block, the gates passed in: the policy with every block skipped
    returns the argument itself, as eager does."""
    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])

        def forward(self, x, gate):
            for i, blk in enumerate(self.blocks):
                if gate[i] > 0.5:
                    x = torch.relu(blk(x)) + x
            return x

    torch.manual_seed(0)
    m = Gated().eval()
    cf = magpy.compile(m, backend="eager")
    gates = [(1, 0, 1, 1), (0, 1, 0, 0), (0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 1, 0), (1, 0, 0, 1), (0, 0, 0, 0)]
    with torch.no_grad():
        for k, gate in enumerate(gates):
            x = torch.randn(2, 4)
            gt = torch.tensor(gate, dtype=torch.float32)
            out, ref = cf(x, gt), m(x, gt)
            assert same(out, ref), f"call {k}"
            assert (out is x) == (ref is x), f"call {k}"
    st = magpy.stats(cf)
    assert st.monitor_runs <= 3 and st.fallbacks == 0, st
