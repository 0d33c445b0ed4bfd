"""Branches on tensor values as conditional nodes (magpy.branches, paper §6.2.2).

A record used to assume the side of each branch on a tensor value that its monitor run took: a
program that skips blocks by a policy (BlockDrop) was one record per combination of skipped
blocks. Once two runs have seen both sides of a branch (same function, same place, same live
locals), the record runs a conditional node instead, and every combination is served. Every
program here is compared with eager on every call; outside state read by only one side is
changed between calls; the branches that must not become conditionals (a side that writes, a
tensor passed through that something else holds, an in-place change after the branch, a side
that returns, a conditional expression) check that the result is still eager's.
"""
from __future__ import annotations

import itertools
import sys

import torch
import torch.nn as nn
from conftest import same

import magpy

torch.manual_seed(0)


class Gated(nn.Module):
    """BlockDrop's loop: a block whose gate is all zero is skipped (``x = residual; continue``)."""

    def __init__(self, n=3, d=8):
        super().__init__()
        self.stem = nn.Linear(d, d)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.Tanh()) for _ in range(n)])
        self.head = nn.Linear(d, 2)

    def forward(self, x, gate):
        x = self.stem(x)
        layer = 0
        for b in range(len(self.blocks)):
            action = gate[:, layer]
            residual = x
            if action.sum() == 0:
                x = residual
                layer += 1
                continue
            mask = action.float().view(-1, 1)
            x = torch.relu(residual + self.blocks[b](x)) * mask + residual * (1 - mask)
            layer += 1
        return self.head(x)


def _gate(bits):
    return torch.tensor([list(bits), list(bits)], dtype=torch.int64)


def _run(model, calls, backend="eager"):
    cf = magpy.compile(model, backend=backend)
    for args in calls:
        with torch.no_grad():
            assert same(cf(*args), model(*args)), f"call with {args[1:]}"
    return cf, magpy.stats(cf)


def test_skipped_blocks_every_combination_after_two_runs():
    torch.manual_seed(0)
    model = Gated().eval()
    x = torch.randn(2, 8)
    combos = [(1, 1, 1), (0, 0, 0)] + [c for c in itertools.product((0, 1), repeat=3) if c not in ((1, 1, 1), (0, 0, 0))]
    cf, st = _run(model, [(x + k, _gate(c)) for k, c in enumerate(combos * 2)])
    # the first run sees every block kept, the second every block skipped (the first record's
    # assumption fails once): from then on one record with three conditional nodes serves all
    # eight combinations
    assert (st.monitor_runs, st.records, st.fallbacks, st.unheld) == (2, 2, 0, 1)
    rec = magpy.records(cf)[0]
    assert "conditional" in rec.graph_module.code
    assert sum(line.startswith("conditional") for line in rec.branches) == 3
    assert len(rec.assumptions) == 0
    first = magpy.records(cf)[1]
    assert len(first.assumptions) == 3 and all(line.startswith("assumed") for line in first.branches)


def test_random_policies_need_few_runs():
    torch.manual_seed(0)
    model = Gated(n=6).eval()
    g = torch.Generator().manual_seed(3)
    calls = [(torch.randn(2, 8, generator=g), (torch.rand(2, 6, generator=g) > 0.5).long()) for _ in range(40)]
    cf, st = _run(model, calls)
    # (one record per policy before: 40 calls with up to 40 different policies)
    assert st.monitor_runs <= 6 and st.fallbacks == 0


class TwoSided(nn.Module):
    """Both sides compute: ``h = a(h)`` or ``h = b(h) * 2``."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x):
        h = torch.tanh(x)
        if h.mean() > 0:
            h = self.a(h) * self.scale
        else:
            h = self.b(h) - 1
        return h.sum(1)


def test_both_sides_compute_and_outside_state_read_by_one_side():
    torch.manual_seed(0)
    m = TwoSided()
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    cf = magpy.compile(m, backend="eager")
    for x in (pos, neg, pos * 2, neg * 3, pos):
        assert same(cf(x), m(x))
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.fallbacks) == (2, 0)
    assert "conditional" in magpy.records(cf)[0].graph_module.code
    # the side only the first run took reads self.a and self.scale: changing them is a miss, and
    # the record made then takes the other side from the library again (one run for both sides)
    m.a = nn.Linear(4, 4)
    assert same(cf(pos), m(pos)) and same(cf(neg), m(neg)) and same(cf(pos * 2), m(pos * 2))
    assert magpy.stats(cf).monitor_runs == 3
    m.scale = 3.0   # (a number that changed between records is lifted: no conditional in that run)
    assert same(cf(pos), m(pos)) and same(cf(neg), m(neg))
    with torch.no_grad():
        m.b.weight.mul_(2)   # (a parameter's values: read by the graph on every call)
    assert same(cf(neg), m(neg)) and same(cf(pos), m(pos))
    assert magpy.stats(cf).fallbacks == 0


class Helper(nn.Module):
    """The tensor passed through is also the caller's local: identity is observed after it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)

    def step(self, x):
        if x.sum() > 0:
            x = self.a(x)
        return x

    def forward(self, inp):
        h = torch.tanh(inp)
        out = self.step(h)
        return out * 1, out is h, h * 2


def test_pass_through_held_by_the_caller_is_not_merged():
    torch.manual_seed(0)
    m = Helper()
    pos, neg = torch.ones(2, 4), -torch.ones(2, 4)
    cf = magpy.compile(m, backend="eager")
    for x in (pos, neg, pos, neg, neg * 2, pos * 3):
        assert same(cf(x), m(x))
    assert not any(line.startswith("conditional") for r in magpy.records(cf) for line in r.branches)


class ListHeld(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)

    def forward(self, inp):
        x = torch.tanh(inp)
        seen = (x,)
        if x.sum() > 0:
            x = self.a(x)
        return x + seen[0], x is seen[0]


def test_pass_through_held_by_a_tuple_is_correct():
    torch.manual_seed(0)
    m = ListHeld()
    pos, neg = torch.ones(2, 4), -torch.ones(2, 4)
    cf = magpy.compile(m, backend="eager")
    for x in (pos, neg, pos, neg):
        assert same(cf(x), m(x))


class Writes(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        if x.sum() > 0:
            self.count += 1
            x = x * 2
        else:
            x = x - 1
        return x


def test_a_side_that_writes_keeps_the_assumption():
    m = Writes()
    ref = Writes()
    cf = magpy.compile(m, backend="eager")
    for x in (torch.ones(3), -torch.ones(3), torch.ones(3), -torch.ones(3) * 2):
        assert same(cf(x), ref(x))
        assert m.count == ref.count
    assert not any(line.startswith("conditional") for r in magpy.records(cf) for line in r.branches)


def test_in_place_change_after_the_branch_keeps_the_assumption():
    def f(x):
        y = x * 1
        if y.sum() > 0:
            y = y * 2
        y.add_(1)
        return y

    cf = magpy.compile(f, backend="eager")
    for x in (torch.ones(3), -torch.ones(3), torch.ones(3) * 4, -torch.ones(3) * 2):
        assert same(cf(x), f(x))
    assert not any(line.startswith("conditional") for r in magpy.records(cf) for line in r.branches)


def test_conditional_expressions():
    """``z = y * 2 if c else y - 1``: each side leaves its value on the stack; passed through
    (``y if c else ...``) only while nothing else holds ``y`` after the merge point."""

    def ternary(x):
        y = torch.tanh(x)
        z = y * 2 if y.sum() > 0 else y - 1
        return z + 1

    def in_a_call(x):
        y = torch.tanh(x)
        return torch.add(x, y * 2 if y.sum() > 0 else y - 1)

    def pass_through(x):
        y = torch.tanh(x)
        z = y if y.sum() > 0 else y - 1
        return z * 3

    def pass_through_still_held(x):
        y = torch.tanh(x)
        z = y if y.sum() > 0 else y - 1
        return z * 3, z is y, y + 1

    expect = {ternary: True, in_a_call: True, pass_through: True, pass_through_still_held: False}
    for fn, merged in expect.items():
        cf = magpy.compile(fn, backend="eager")
        for x in (torch.ones(3), -torch.ones(3), torch.ones(3) * 4, -torch.ones(3) * 2):
            assert same(cf(x), fn(x)), fn.__name__
        lines = [line for r in magpy.records(cf) for line in r.branches]
        assert any(line.startswith("conditional") for line in lines) is merged, (fn.__name__, lines)


def test_branch_on_a_changed_local_number_is_not_confused():
    """The key holds the numbers of the live locals: a branch reached with another ``k`` is
    another branch."""

    def f(x, k):
        y = torch.tanh(x)
        if y.sum() > 0:
            y = y * k
        return y + k

    cf = magpy.compile(f, backend="eager")
    calls = [(torch.ones(3), 2), (-torch.ones(3), 2), (torch.ones(3), 3), (-torch.ones(3), 3), (torch.ones(3), 2)]
    for args in calls:
        assert same(cf(*args), f(*args))


def test_explain_lists_the_conditional():
    torch.manual_seed(0)
    m = TwoSided()
    cf = magpy.compile(m, backend="eager")
    cf(torch.ones(2, 4))
    cf(-torch.ones(2, 4))
    rec = magpy.records(cf)[0]
    assert any(line.startswith("conditional: the branch at") and "test_branches.py" in line for line in rec.branches)
    assert magpy.stats(cf).graph_count >= 2


def test_explain_says_which_branches_can_become_conditionals():
    torch.manual_seed(0)
    text = str(magpy.explain(TwoSided())(torch.ones(2, 4)))
    assert "Branches on tensor values (1):" in text and "becomes one side of a conditional node" in text
    m = Writes()
    text = str(magpy.explain(m)(torch.ones(3)))
    assert "kept: the branch at" in text and "in its arm" in text


def test_sides_that_both_return_meet_in_the_caller():
    """``if c: return a(h)`` / ``return b(h)``, and an if/else before a short ``return h``
    (CPython 3.10 and 3.12+ copy that return into both sides): the sides meet at the returned
    value, in the caller."""
    torch.manual_seed(0)
    lin_a, lin_b = nn.Linear(4, 4), nn.Linear(4, 4)

    def early(x):
        h = torch.tanh(x)
        if h.sum() > 0:
            return lin_a(h)
        return lin_b(h) * 2

    def short_tail(x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = lin_a(h)
        else:
            h = h * 2
        return h

    def caller(x):
        return short_tail(x) + 1, early(x) - 1

    for fn in (early, short_tail, caller):
        cf = magpy.compile(fn, backend="eager")
        with torch.no_grad():
            for k in range(6):
                x = torch.ones(2, 4) * (k + 1) * (1 if k % 2 == 0 else -1)
                assert same(cf(x), fn(x))
        st = magpy.stats(cf)
        assert (st.monitor_runs, st.fallbacks) == (2, 0), fn.__name__
        assert any(line.startswith("conditional") for line in magpy.records(cf)[0].branches), fn.__name__


class SkipBlock(nn.Module):
    """A block that decides to skip itself and hands its input back (``return x``)."""

    def __init__(self):
        super().__init__()
        self.f = nn.Linear(4, 4)

    def forward(self, x, gate):
        if gate.sum() == 0:
            return x
        return x + torch.tanh(self.f(x))


class SkipNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([SkipBlock(), SkipBlock()])

    def forward(self, x, gates):
        x = self.stem(x)
        for i, block in enumerate(self.blocks):
            x = block(x, gates[i])
        return x * 2


class SkipNetKeeps(SkipNet):
    """The caller still reads the block's input after the call: not passed through."""

    def forward(self, x, gates):
        x = self.stem(x)
        outs = []
        for i, block in enumerate(self.blocks):
            y = block(x, gates[i])
            outs.append(y is x)
            x = y + x * 0
        return x, outs


def test_a_block_that_returns_its_input_when_skipped():
    torch.manual_seed(0)
    for cls in (SkipNet, SkipNetKeeps):
        m = cls().eval()
        cf = magpy.compile(m, backend="eager")
        gates = [(1, 1), (0, 0), (1, 0), (0, 1), (1, 1), (0, 0)]
        with torch.no_grad():
            for g in gates:
                x, gt = torch.randn(2, 4), torch.tensor([[g[0]], [g[1]]])
                assert same(cf(x, gt), m(x, gt)), (cls.__name__, g)
        lines = [line for r in magpy.records(cf) for line in r.branches]
        if cls is SkipNetKeeps:
            assert not any(line.startswith("conditional") for line in lines), lines
        elif sys.version_info >= (3, 11):   # (3.10: a caller's stack during a call is not analysed)
            assert magpy.stats(cf).monitor_runs == 2, lines


def test_blockdrop_smoke_policies_through_conditionals():
    """The paper's BlockDrop (models/blockdrop.py): the branch sits in ``forward_single``, which
    ``forward`` calls; a handful of runs serve every policy of the stream."""
    import models

    model, _ = models.build("blockdrop", "smoke")
    cf = magpy.compile(model, backend="eager")
    with torch.no_grad():
        for args, kwargs in models.dynamic_inputs("blockdrop", 12, size="smoke"):
            assert same(cf(*args, **kwargs), model(*args, **kwargs))
    st = magpy.stats(cf)
    assert st.monitor_runs <= 3 and st.fallbacks == 0
    assert any(line.startswith("conditional") for line in magpy.records(cf)[0].branches)


def test_skip_block_merges_after_two_runs_on_311_and_later():
    torch.manual_seed(0)
    m = SkipNet().eval()
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for g in [(1, 1), (0, 0), (1, 0), (0, 1)]:
            x, gt = torch.randn(2, 4), torch.tensor([[g[0]], [g[1]]])
            assert same(cf(x, gt), m(x, gt))
    merged = any(line.startswith("conditional") for line in magpy.records(cf)[0].branches)
    assert merged is (sys.version_info >= (3, 11))
