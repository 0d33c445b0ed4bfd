"""The other-side run (magpy.dynamic.other_side): right after a miss whose branches on tensor
values have one side in the arm library, the program runs again on the same arguments taking
the other sides, so that one record with conditional nodes serves every combination.

What these programs check is that the run the program did not ask for leaves nothing behind:
a flipped side that would print, write an attribute, change a buffer in place, draw a random
number or raise. Each is compared with eager on every call, and with eager's outside state
after the calls (the counters, the buffer's values and version, the generators' next numbers,
what was printed). What MagPy should do with each: the pure ones are served by one record with
conditional nodes once a run's side differed and the other-side run took the rest; the others
by records of their own, with the other-side run stopped (``other_side_runs`` counts it).
"""
from __future__ import annotations

import itertools

import pytest
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


def test_pure_sides_two_runs_and_one_other_side_run_serve_every_policy():
    m, x = Skip(), torch.randn(2, 4)
    st = _serve(m, [(x + k, p) for k, p in enumerate(_policies(3) * 2)])
    # run 1 skips every block; run 2 (the first record's side of block 2 did not hold) keeps block
    # 2, and its branch becomes a conditional; the other-side run then keeps blocks 0 and 1
    assert (st.monitor_runs, st.other_side_runs, st.fallbacks, st.unheld) == (2, 1, 0, 1)
    assert st.conditionals == 1 + 3   # (over the records held: run 2's, and the other-side run's)


def test_no_other_side_run_while_every_branch_goes_one_way():
    m, x = Skip(), torch.randn(2, 4)
    st = _serve(m, [(x + k, torch.tensor([1, 0, 1])) for k in range(4)])
    assert (st.monitor_runs, st.other_side_runs, st.conditionals) == (1, 0, 0)


#: block 0 kept, then skipped: the second run is a miss whose first side did not hold, and the
#: other-side run then takes the other side of block 1, where ``extra`` does its thing
FLIP_BLOCK_1 = [torch.tensor([0, 0, 0]), torch.tensor([1, 0, 0]), torch.tensor([0, 0, 0])]


def _twins(extra):
    """The compiled model and an eager twin, both from the same seed (outside state compared)."""
    return Skip(extra), Skip(extra)


def _run_both(extra, policies, out=None):
    """Each policy on the compiled model and on its eager twin; returns both models and stats.
    ``out``: pytest's capsys, whose output must be eager's on every call."""
    m, twin = _twins(extra)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    for p in policies:
        with torch.no_grad():
            a = cf(x, p)
            said = out.readouterr().out if out is not None else None
            assert same(a, twin(x, p)), p
            if out is not None:
                assert said == out.readouterr().out, p
    return m, twin, magpy.stats(cf)


def test_a_side_that_writes_an_attribute_stops_the_other_side_run_before_the_write():
    def count(self, i):
        if i == 1:
            self.count += 1

    m, twin, st = _run_both(count, FLIP_BLOCK_1 + [torch.tensor([1, 1, 0])])
    assert m.count == twin.count == 1
    assert st.other_side_runs == 1 and st.fallbacks == 0


def test_a_side_that_prints_stops_before_the_print(capsys):
    def say(self, i):
        if i == 1:
            print("block", i)

    _, _, st = _run_both(say, FLIP_BLOCK_1 + [torch.tensor([1, 1, 0])], out=capsys)
    assert st.other_side_runs == 1


@pytest.mark.slow
def test_a_side_that_changes_a_buffer_in_place_is_undone():
    def bump(self, i):
        if i == 1:
            self.seen.add_(1.0)

    m, twin = _twins(bump)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    version = m.seen._version
    with torch.no_grad():
        for p in FLIP_BLOCK_1:
            assert same(cf(x, p), twin(x, p))
            assert torch.equal(m.seen, twin.seen) and m.seen._version == version
        for p in _policies(3):
            assert same(cf(x, p), twin(x, p))
    assert torch.equal(m.seen, twin.seen)
    assert magpy.stats(cf).other_side_runs == 1


def test_a_side_that_draws_leaves_the_generators_as_eager_does():
    def noise(self, i):
        if i == 1:
            self.last = torch.rand(1)

    m, twin = _twins(noise)
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for p in FLIP_BLOCK_1:
            torch.manual_seed(5)
            cf(x, p)
            after = torch.rand(3)
            torch.manual_seed(5)
            twin(x, p)
            assert torch.equal(after, torch.rand(3))
    assert not hasattr(m, "last") and magpy.stats(cf).other_side_runs == 1


def test_a_side_that_raises_records_nothing_and_the_calls_stay_correct():
    class Picky(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, a, b):
            x = self.lin(x)
            if a.sum() > 0:
                x = x * 3
            if b.sum() > 0:
                x = x[:, :2] @ torch.ones(3, 4)   # (raises: no input with b > 0 is ever given)
            return x * 2

    m = Picky()
    # (100 elements: a small CPU tensor from outside would be guarded by value, not branched on)
    x, zero, one, off = torch.randn(2, 4), torch.zeros(100), torch.ones(100), torch.zeros(100)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for a in (zero, one, zero, one):
            assert same(cf(x, a, off), m(x, a, off))
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.other_side_runs, st.fallbacks, st.conditionals) == (2, 1, 0, 1)


def test_no_flip_inside_a_try_block_of_a_caller():
    def count(self, i):
        if i == 1:
            self.count += 1   # (the other side of block 1 would write: a stop there)

    class Guarded(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Skip(count)
            self.errors = 0

        def forward(self, x, policy):
            try:
                return self.inner(x, policy)
            except BaseException:   # (a handler of the program's own: a stop would run it)
                self.errors += 1
                raise

    m, twin = Guarded(), Guarded()
    x = torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for p in FLIP_BLOCK_1:
            assert same(cf(x, p), twin(x, p))
    assert (m.errors, m.inner.count) == (twin.errors, twin.inner.count) == (0, 0)
    st = magpy.stats(cf)
    # (the other-side run took no other side; an operator under the caller's `try` is speculative,
    # so no arm is clean enough for a conditional either)
    assert (st.other_side_runs, st.conditionals) == (1, 0)


def test_a_side_that_enters_try_finally_is_stopped_before_it():
    def guarded(self, i):
        if i == 1:
            try:
                print("block", i)   # (a stop here would run the finally below)
            finally:
                self.count += 1

    m, twin, st = _run_both(guarded, FLIP_BLOCK_1)
    assert m.count == twin.count == 0
    assert st.other_side_runs == 1


def test_explain_and_stats_agree_on_conditionals():
    m, x = Skip(), torch.randn(2, 4)
    cf = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for p in FLIP_BLOCK_1:
            cf(x, p)
    st = magpy.stats(cf)
    assert (st.other_side_runs, st.conditionals) == (1, 1 + 3)
    e = magpy.explain(m)(x, torch.tensor([1, 0, 1]))
    assert e.conditionals == 0   # (one call explained: one run, no side of it differed yet)


class Sinkhorn(nn.Module):
    """``while err > tol`` on a number read from a tensor: its exit has a clean (empty) arm, and
    the other-side run flips the exit into one more iteration: once (a branch is flipped once
    per run), not on every iteration after (the run would never end)."""

    def forward(self, cost):
        K = torch.exp(-cost / 0.5)
        u, v = torch.ones(cost.shape[0]), torch.ones(cost.shape[1])
        err = 1.0
        while err > 1e-4:
            u_prev = u
            u = 1.0 / (K @ v)
            v = 1.0 / (K.t() @ u)
            err = (u - u_prev).abs().max().item()
        return u[:, None] * K * v[None, :]


@pytest.mark.slow
def test_a_loop_exit_is_flipped_once_and_the_run_ends():
    m = Sinkhorn()
    gen = torch.Generator().manual_seed(0)
    cf = magpy.compile(m, backend="eager")
    for _ in range(4):
        c = torch.rand(3, 4, generator=gen)
        assert same(cf(c), m(c))
    st = magpy.stats(cf)
    # (the flipped exit merges nothing: that run records nothing, and none follows)
    assert st.other_side_runs == 1 and st.fallbacks == 0


def test_an_other_side_run_that_runs_on_is_stopped(monkeypatch, caplog):
    from magpy.dynamic import other_side

    init = other_side.OtherSides.__init__

    def short(self, ops_before=0):
        init(self, ops_before)
        self.op_limit = 3   # (as if the flips had led into a loop that does not end)

    monkeypatch.setattr(other_side.OtherSides, "__init__", short)
    with caplog.at_level("INFO", logger="magpy.recompiles"):
        _, _, st = _run_both(None, FLIP_BLOCK_1)
    assert st.other_side_runs == 1 and st.fallbacks == 0
    assert any("ran more than 3 operators" in r.getMessage() for r in caplog.records)


# -- what a forced side may touch that the monitor does not count as a write --
def _state_cases():
    """(name, make) pairs: ``make()`` gives ``(extra, snapshot)``: ``extra(self, i)`` runs on block
    1's kept side only (the side FLIP_BLOCK_1 never takes in eager, and the other-side run
    forces), ``snapshot()`` the outside state it would change."""
    import functools
    import random as pyrandom

    import numpy as np

    def bytearray_alias():
        ba = bytearray(b"ab")

        def extra(self, i):
            h = ba
            h += b"x"
        return extra, lambda: bytes(ba)

    def torch_generator():
        g = torch.Generator().manual_seed(0)

        def extra(self, i):
            torch.randn(2, generator=g)
        return extra, lambda: tuple(g.get_state().tolist())

    def numpy_generator():
        rng = np.random.default_rng(0)

        def extra(self, i):
            rng.normal()
        return extra, lambda: repr(rng.bit_generator.state)

    def random_instance():
        r = pyrandom.Random(0)

        def extra(self, i):
            r.random()
        return extra, lambda: r.getstate()

    def lru_cache():
        @functools.lru_cache(None)
        def scale(k):
            return k * 2

        def extra(self, i):
            scale(3)
        return extra, lambda: repr(scale.cache_info())

    def data_inplace():
        buf = torch.zeros(3)

        def extra(self, i):
            buf.data.add_(1)
        return extra, lambda: (buf.tolist(), buf._version)

    def requires_grad_flag():
        w = torch.nn.Parameter(torch.ones(3))

        def extra(self, i):
            w.requires_grad_(False)
        return extra, lambda: w.requires_grad

    def resize():
        buf = torch.zeros(3)

        def extra(self, i):
            buf.resize_(5)
        return extra, lambda: (tuple(buf.shape), buf._version)

    def default_dtype():
        def extra(self, i):
            torch.set_default_dtype(torch.float64)
        return extra, lambda: torch.get_default_dtype()

    def batch_norm_running_stats():
        rm, rv = torch.zeros(4), torch.ones(4)

        def extra(self, i):
            torch.nn.functional.batch_norm(torch.randn(2, 4), rm, rv, training=True)
        return extra, lambda: (rm.tolist(), rv.tolist())

    def grad_hook():
        w = torch.nn.Parameter(torch.ones(3))
        seen = []

        def extra(self, i):
            w.register_post_accumulate_grad_hook(lambda p: seen.append(1))
        return extra, lambda: len(w._post_accumulate_grad_hooks or {}) if hasattr(w, "_post_accumulate_grad_hooks") else 0

    def param_data_assignment():
        w = torch.nn.Parameter(torch.ones(3))

        def extra(self, i):
            w.data = torch.zeros(3)
        return extra, lambda: w.tolist()

    def global_settings():
        def extra(self, i):
            torch.set_num_threads(1)
            torch.set_float32_matmul_precision("medium")
        return extra, lambda: (torch.get_num_threads(), torch.get_float32_matmul_precision())

    def share_memory():
        buf = torch.zeros(3)

        def extra(self, i):
            buf.share_memory_()
        return extra, lambda: buf.is_shared()

    return [(f.__name__, f) for f in (bytearray_alias, torch_generator, numpy_generator, random_instance, lru_cache,
                                      data_inplace, requires_grad_flag, resize, default_dtype,
                                      batch_norm_running_stats, grad_hook, param_data_assignment, global_settings,
                                      share_memory)]


@pytest.mark.parametrize("name,make", _state_cases(), ids=[n for n, _ in _state_cases()])
def test_a_forced_side_leaves_outside_state_as_eager_does(name, make):
    extra, snapshot = make()
    threads = torch.get_num_threads()
    try:
        def gated(self, i):
            if i == 1:
                extra(self, i)

        m = Skip(gated)
        x = torch.randn(2, 4)
        cf = magpy.compile(m, backend="eager")
        before = snapshot()
        with torch.no_grad():
            for p in FLIP_BLOCK_1:   # (eager never takes block 1's kept side: nothing changes)
                assert same(cf(x, p), m(x, p))
                assert snapshot() == before, name
        assert magpy.stats(cf).other_side_runs == 1
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(torch.float32)
        torch.set_float32_matmul_precision("highest")


def test_a_forced_side_does_not_build_a_lazy_module():
    """A lazy module only the unseen side calls: building its parameters (weights drawn, its class
    changed) in a run eager never makes would leave it built where eager leaves it lazy."""
    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.a, self.lazy = nn.Linear(100, 100), nn.Linear(100, 100), nn.LazyLinear(100)

        def forward(self, x):
            h = self.lin(x)
            h = h * 2 if x.sum() > 0 else h - 1
            if x[0, 0] > -100:
                return self.a(h)
            return self.lazy(h)

    torch.manual_seed(0)
    m = Gated()
    cm = magpy.compile(m, backend="eager")
    for s in (1.0, -1.0, 1.0, -1.0):
        x = torch.full((1, 100), s)
        assert same(cm(x), m(x))
        assert type(m.lazy) is nn.LazyLinear   # (eager never calls it)
    assert magpy.stats(cm).other_side_runs == 1
