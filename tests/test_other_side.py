"""The other-side run (magpy.dynamic.other_side): right after a miss whose branches on tensor
values have one side in the arm library, the program runs again on the same arguments taking
the other sides, so that one record with conditional nodes serves every combination.

What these programs check is that the run the program did not ask for leaves nothing behind:
a flipped side that would print, write an attribute, change a buffer in place, draw a random
number or raise. Each is compared with eager on every call, and with eager's outside state
after the calls (the counters, the buffer's values and version, the generators' next numbers,
what was printed). What MagPy should do with each: the pure ones are served by one record with
conditional nodes after one run and one other-side run; the others by records of their own,
with the other-side run stopped (``other_side_runs`` counts it, and none follows).
"""
from __future__ import annotations

import itertools

import torch
import torch.nn as nn
from conftest import same

import magpy


def _policies(n):
    return [torch.tensor(bits) for bits in itertools.product((0, 1), repeat=n)]


class Skip(nn.Module):
    """Blocks skipped by a policy; ``extra`` runs on a kept block's side only."""

    def __init__(self, extra=None, n=3):
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
        self.register_buffer("seen", torch.zeros(4))
        self.count = 0
        self.extra = extra

    def forward(self, x, policy):
        x = self.stem(x)
        for i, block in enumerate(self.blocks):
            if policy[i] == 0:
                continue
            if self.extra is not None:
                self.extra(self, i)
            x = torch.tanh(block(x)) + x
        return x


def _serve(model, calls):
    cf = magpy.compile(model, backend="eager")
    for args in calls:
        with torch.no_grad():
            assert same(cf(*args), model(*args)), args[1:]
    return magpy.stats(cf)


def test_pure_sides_one_run_and_one_other_side_run_serve_every_policy():
    m, x = Skip(), torch.randn(2, 4)
    st = _serve(m, [(x + k, p) for k, p in enumerate(_policies(3) * 2)])
    assert (st.monitor_runs, st.other_side_runs, st.fallbacks, st.unheld) == (1, 1, 0, 0)
    assert st.conditionals == 3


def _twins(extra):
    """The compiled model and an eager twin, both from the same seed (outside state compared)."""
    return Skip(extra), Skip(extra)


def _run_both(extra, policies):
    """Each policy on the compiled model and on its eager twin; returns both models and stats."""
    m, twin = _twins(extra)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    for p in policies:
        with torch.no_grad():
            assert same(cf(x, p), twin(x, p)), p
    return m, twin, magpy.stats(cf)


def test_a_side_that_writes_an_attribute_stops_the_other_side_run_before_the_write():
    def count(self, i):
        self.count += 1

    # the first policy keeps no block: the other side of each would write self.count
    m, twin, st = _run_both(count, [torch.tensor([0, 0, 0])] * 3 + [torch.tensor([1, 0, 1])])
    assert m.count == twin.count == 2
    assert st.other_side_runs == 1 and st.fallbacks == 0


def test_a_side_that_prints_stops_before_the_print(capsys):
    def say(self, i):
        print("block", i)

    m, twin = _twins(say)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        p = torch.tensor([0, 0, 0])   # (eager prints nothing; the other sides would print)
        for _ in range(2):
            a = cf(x, p)
            assert capsys.readouterr().out == ""
            assert same(a, twin(x, p))
        p = torch.tensor([1, 1, 0])
        assert same(cf(x, p), twin(x, p))
        out = capsys.readouterr().out
    assert out == "block 0\nblock 1\n" * 2
    assert magpy.stats(cf).other_side_runs == 1


def test_a_side_that_changes_a_buffer_in_place_is_undone():
    def bump(self, i):
        self.seen.add_(1.0)

    m, twin = _twins(bump)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    version = m.seen._version
    with torch.no_grad():
        p = torch.tensor([0, 0, 0])
        assert same(cf(x, p), twin(x, p))
        assert torch.equal(m.seen, twin.seen) and m.seen._version == version
        for p in _policies(3):
            assert same(cf(x, p), twin(x, p))
    assert torch.equal(m.seen, twin.seen)


def test_a_side_that_draws_leaves_the_generators_as_eager_does():
    def noise(self, i):
        self.last = torch.rand(1)

    m, twin = _twins(noise)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    p = torch.tensor([0, 0, 0])
    with torch.no_grad():
        torch.manual_seed(5)
        cf(x, p)
        after = torch.rand(3)
        torch.manual_seed(5)
        twin(x, p)
        assert torch.equal(after, torch.rand(3))
        assert not hasattr(m, "last")


def test_a_side_that_raises_records_nothing_and_the_calls_stay_correct():
    class Picky(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, flag):
            x = self.lin(x)
            if flag.sum() > 0:
                x = x[:, :2] @ torch.ones(3, 4)   # (raises: only an input with flag 0 is ever given)
            return x * 2

    m = Picky()
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for _ in range(3):
            assert same(cf(x, torch.zeros(1)), m(x, torch.zeros(1)))
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.other_side_runs, st.records, st.fallbacks) == (1, 1, 1, 0)


class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_no_flip_inside_a_with_block_of_a_caller():
    class Guarded(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Skip()

        def forward(self, x, policy):
            with Quiet():   # (a handler of the program's own: a stop would run its __exit__)
                return self.inner(x, policy)

    m = Guarded()
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for p in [torch.tensor([0, 0, 0])] * 3:
            assert same(cf(x, p), m(x, p))
    st = magpy.stats(cf)
    assert (st.other_side_runs, st.conditionals) == (1, 0)   # (the other sides were not taken)


def test_explain_and_stats_agree_on_conditionals_after_an_other_side_run():
    m, x = Skip(), torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        cf(x, torch.tensor([1, 0, 1]))
        cf(x, torch.tensor([0, 1, 0]))
    st = magpy.stats(cf)
    assert st.conditionals == 3
    e = magpy.explain(m)(x, torch.tensor([1, 0, 1]))
    assert "conditional" in str(e)


def test_a_side_that_enters_try_finally_is_stopped_before_it():
    def guarded(self, i):
        try:
            print("block", i)   # (a stop here would run the finally below)
        finally:
            self.count += 1

    m, twin, st = _run_both(guarded, [torch.tensor([0, 0, 0])] * 2)
    assert m.count == twin.count == 0
    assert st.other_side_runs == 1
