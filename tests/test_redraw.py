"""Random draws re-drawn by the mock (paper footnote 4, magpy.redraw): programs that draw from
Python's ``random`` or numpy's generators compile to records, match eager call by call, and
leave every generator in eager's state."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import magpy


def _seed(i: int) -> None:
    random.seed(i)
    np.random.seed(i)


def _states():
    return random.getstate(), np.random.get_state()[2], np.random.get_state()[1][:3].tolist()


def _side_by_side(fn, compiled, inputs, seeds):
    """Call eager and compiled from the same seeds; outputs and generator states must match."""
    for i, s in enumerate(seeds):
        _seed(s)
        want = fn(*inputs(i))
        want_state = _states()
        _seed(s)
        got = compiled(*inputs(i))
        assert _states() == want_state, f"call {i}: generator state differs"
        torch.testing.assert_close(got, want)


class Jitter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.p = 0.5

    def forward(self, x):
        x = self.lin(x) * random.uniform(0.9, 1.1)
        if random.random() < self.p:
            x = x.flip(1)
        return x * np.random.rand() + random.randint(1, 3)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_draws_feed_the_graph_and_branch_records(backend):
    m = Jitter()
    c = magpy.compile(m, backend=backend)
    _side_by_side(m, c, lambda i: (torch.arange(8.0).reshape(2, 4) - i,), seeds=[0, 1, 2, 3, 4, 5, 6, 7, 0, 1])
    st = magpy.stats(c)
    assert st.fallbacks == 0 and st.break_reasons == []
    if backend == "eager":
        # one record per side of the branch on random.random(): every other call is a guard hit
        assert st.monitor_runs == 2 and st.guard_hits == 8
    else:
        # Inductor takes int draws as inputs; float draws are pinned (magpy.redraw): a record
        # per drawn value, each correct
        assert "is pinned" in magpy.records(c)[0].guards_text


def test_explain_lists_the_draws():
    m = Jitter()
    ex = magpy.explain(m)(torch.randn(2, 4))
    assert not ex.dynamic and ex.graph_count == 1
    assert "draws again: draw 0: random.uniform(0.9, 1.1)" in ex.guards
    assert "draw 2: numpy.rand()" in ex.guards and "draw 3: random.randint(1, 3)" in ex.guards


def test_branch_on_draw_is_checked_before_the_graph():
    """A draw that selects the path is checked right after drawing (the graph never runs for a
    call whose draw takes the other path), and the generator is put back for the next record."""
    def f(x):
        if random.random() < 0.5:
            return x + 1
        return x - 1

    c = magpy.compile(f, backend="eager")
    _side_by_side(f, c, lambda i: (torch.ones(2),), seeds=list(range(10)))
    st = magpy.stats(c)
    assert st.monitor_runs == 2 and st.fallbacks == 0
    rec = magpy.records(c)[0]
    assert "_restore_draws" in rec.run_source


def test_int_draw_returned_is_a_plain_int():
    def f(x):
        k = random.randint(0, 100)
        return x * 2, k

    c = magpy.compile(f, backend="eager")
    for s in range(4):
        _seed(s)
        want = f(torch.ones(1))
        _seed(s)
        got = c(torch.ones(1))
        assert type(got[1]) is int and got[1] == want[1]
    assert magpy.stats(c).monitor_runs == 1


def test_generator_replaced_between_calls_is_a_miss():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rng = random.Random(0)

        def forward(self, x):
            return x + self.rng.random()

    m, ref = M(), M()
    c = magpy.compile(m, backend="eager")
    for i in range(5):
        if i == 3:
            m.rng, ref.rng = random.Random(9), random.Random(9)
        torch.testing.assert_close(c(torch.zeros(2)), ref(torch.zeros(2)))
    assert m.rng.getstate() == ref.rng.getstate()
    assert magpy.stats(c).monitor_runs == 2


def test_draw_arguments_are_guarded():
    class Cfg:
        hi = 1.0

    def f(x):
        return x * random.uniform(0.0, Cfg.hi)

    c = magpy.compile(f, backend="eager")
    for i in range(4):
        Cfg.hi = 1.0 + (i // 2)
        _seed(0)
        want = f(torch.ones(2))
        _seed(0)
        torch.testing.assert_close(c(torch.ones(2)), want)
    assert magpy.stats(c).monitor_runs == 2


class Subsample(torch.nn.Module):
    """Relations picked by np.random.choice (an array) and a random row mask: pinned draws."""

    def __init__(self):
        super().__init__()
        self.lins = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(5))
        self.prob = 0.5

    def forward(self, x):
        for i in np.random.choice(len(self.lins), 2, replace=False):
            x = self.lins[i](x)
        keep = np.random.choice([True, False], len(x), p=[self.prob, 1 - self.prob])
        return x[torch.tensor(keep)] * 2


def test_array_draws_are_pinned():
    m = Subsample()
    c = magpy.compile(m, backend="eager")
    # reseeded before each call (as a data pipeline with fixed seeds does): one record per seed
    _side_by_side(m, c, lambda i: (torch.ones(3, 4),), seeds=[0, 1, 0, 1, 0, 1])
    st = magpy.stats(c)
    assert st.monitor_runs == 2 and st.fallbacks == 0 and st.guard_hits == 4
    assert "is pinned: array(" in magpy.records(c)[0].guards_text
    # draws that differ on every call: misses, each one correct, generators as eager leaves them
    m.prob = 0.3
    _side_by_side(m, c, lambda i: (torch.ones(3, 4),), seeds=[10, 11, 12])
    assert magpy.stats(c).monitor_runs == 5


def test_draws_that_cannot_be_repeated_stay_dynamic():
    def shuffled(x):
        order = [0, 1, 2]
        random.shuffle(order)
        return x[order]

    def own_generator(x):
        rng = random.Random(int(x.numel()))
        return x * rng.random()

    for fn in (shuffled, own_generator):
        ex = magpy.explain(fn)(torch.arange(3.0))
        # the call runs eagerly, or (3.11+) splits there: the draw runs with its real generator (and
        # the code after it is the continuation's graph, which explain counts as stats does)
        split = any(s.startswith("split at") for s in ex.splits)
        assert (ex.graph_count == 0 and ex.break_reasons) or (split and ex.graph_count == 1), fn.__name__
        c = magpy.compile(fn, backend="eager")
        _side_by_side(fn, c, lambda i: (torch.arange(3.0),), seeds=[0, 1])


def test_backend_without_lifting_keeps_draws_dynamic():
    def f(x):
        return x * random.random()

    ex = magpy.explain(magpy.compile(f, backend="torchscript"))(torch.ones(2))
    said = ex.break_reasons + [s for s in ex.splits if s.startswith("split at")]   # (a split on 3.11+)
    assert ex.dynamic and "random" in said[0]
    ex = magpy.explain(f)(torch.ones(2))
    assert not ex.dynamic


def test_clock_readings_are_read_again_where_the_program_read_them():
    """``time.perf_counter()`` around the work (a module that times itself): the first reading
    comes before the graph, the second after it, so the elapsed time the mock writes measures the
    compiled graph; a reading that feeds an operator is read before the graph."""
    import time

    class Timed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.elapsed = 0.0
            self.calls = 0

        def forward(self, x):
            t0 = time.perf_counter()
            y = self.lin(x).relu()
            self.elapsed += time.perf_counter() - t0
            self.calls += 1
            return y * (time.time() > 0)

    m = Timed()
    c = magpy.compile(m, backend="eager")
    for i in range(6):
        before = m.elapsed
        torch.testing.assert_close(c(torch.ones(2, 3)), m.lin(torch.ones(2, 3)).relu())
        assert m.calls == i + 1 and m.elapsed > before and type(m.elapsed) is float
    st = magpy.stats(c)
    assert st.fallbacks == 0 and st.monitor_runs == 2 and st.guard_hits == 4   # then elapsed/calls are lifted
    run = magpy.records(c)[0].run_source
    assert run.index("o = _graph(") < run.index("_draw1 = ")   # the second reading after the graph
