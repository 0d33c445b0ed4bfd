"""Splits that used to run the whole call eagerly (magpy.splits, magpy.continuation, issue 27):

* a `try`/`with` of an outer frame covers the call that leads to the dynamic operation: the call
  splits, and an exception of the inner frames reaches the outer frame's handler as in eager;
* a `for` loop steps an iterator from outside the call: the call splits at each step, the loop
  body is one compiled continuation whatever the number of steps, and the steps run in a loop,
  not nested in one another (a loop of thousands of steps does not grow the Python stack).

Every call is compared with eager (outside state included); the counts asserted are the design's:
one monitor run for the code before the loop, one for the body, one for the code after it.
On CPython 3.10 frames cannot be resumed: the same programs run eagerly there, and still match.
"""
from __future__ import annotations

import io
import sys

import torch
import torch.nn as nn
from conftest import same

import magpy
from magpy.bytecode.resume import supported

SPLITS = supported()


class Logged(nn.Module):
    """`forward`'s `with torch.no_grad()` covers the call of a helper that writes a tensor's value."""

    def __init__(self, log):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.log = log

    def helper(self, x):
        z = self.fc(x)
        self.log.write(f"{z.sum().item():.3f}\n")
        return z * 2

    def forward(self, x):
        with torch.no_grad():
            y = self.helper(x)
        return self.fc(x) + y


def test_outer_no_grad_covers_the_helper_that_writes():
    log = io.StringIO()
    m = Logged(log)
    cm = magpy.compile(m, backend="eager")
    for _ in range(5):
        x = torch.randn(2, 3)
        n = len(log.getvalue())
        ref = m(x)
        ref_log = log.getvalue()[n:]
        got = cm(x)
        assert same(got, ref) and got.requires_grad and torch.is_grad_enabled()
        assert log.getvalue()[n + len(ref_log):] == ref_log
    st = magpy.stats(cm)
    if not SPLITS:
        assert st.records == 0 and st.splits == 0
        return
    # (call 0 goes on eagerly past the split the `with` covers; call 1 monitors the continuation)
    assert (st.monitor_runs, st.split_hits, st.splits, st.graph_count) == (1, 4, 1, 2), st
    assert (st.resumed_monitor_runs, st.resumed_guard_hits, st.fallbacks, st.resumed_fallbacks) == (1, 3, 0, 0), st


def test_outer_except_gets_what_the_inner_frame_raises_after_the_operation():
    log, seen = io.StringIO(), []

    def check(y, strict):
        log.write(f"{y.max().item():.2f};")
        if strict:
            raise KeyError("strict")
        return y + 1

    def f(x, strict):
        y = x * 3
        try:
            y = check(y, strict)
        except KeyError as e:
            seen.append(e.args)
            y = -y
        return y - x

    cf = magpy.compile(f, backend="eager")
    for k, strict in enumerate([False, False, True, False, True, True, False]):
        x = torch.randn(4)
        n = len(seen)
        ref = f(x, strict)
        assert same(cf(x, strict), ref) and seen[n:n + 1] == seen[n + 1:], k
    st = magpy.stats(cf)
    if SPLITS:
        # (the prefix reads `strict` at the split, for the continuation: one record per value)
        assert (st.monitor_runs, st.split_hits, st.splits) == (2, 5, 1), st
        assert st.fallbacks == 0 and st.resumed_fallbacks == 0, st


class Rnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.cell, self.out = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 2)

    def forward(self, steps, h0):
        h = self.inp(h0)
        for x in steps:
            h = torch.tanh(self.cell(x) + h)
        return self.out(h)


def _steps(seed, n):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        yield torch.randn(2, 4, generator=g)


def test_loop_over_a_generator_compiles_its_body_once_for_any_length():
    m = Rnn()
    cm = magpy.compile(m, backend="eager")
    lengths = [3, 5, 0, 7, 2]
    for k, n in enumerate(lengths):
        h0 = torch.randn(2, 4)
        assert same(cm(_steps(k, n), h0), m(_steps(k, n), h0)), n
    st = magpy.stats(cm)
    if not SPLITS:
        assert st.records == 0 and st.dynamic
        return
    # before the loop, the body, after the loop: a monitor run and a graph each
    assert (st.monitor_runs, st.resumed_monitor_runs, st.splits, st.graph_count) == (1, 2, 1, 3), st
    # every step but the first is a hit of the body's record, every call's end but the first a hit
    assert st.resumed_guard_hits == (sum(lengths) - 1) + (len(lengths) - 1), st
    assert st.split_hits == len(lengths) - 1 and st.fallbacks == 0 and st.resumed_fallbacks == 0, st


def test_steps_of_a_long_loop_run_at_one_stack_depth():
    depths = []

    def items(n):
        for k in range(n):
            f, d = sys._getframe(), 0
            while f is not None:
                f, d = f.f_back, d + 1
            depths.append(d)
            yield torch.full((3,), float(k % 7))

    def f(it, x):
        for t in it:
            x = x * 0.5 + t
        return x

    cf = magpy.compile(f, backend="eager")
    n = 2 * sys.getrecursionlimit()
    for k in range(3):
        x = torch.randn(3)
        ref = f(items(n), x)
        del depths[:]
        assert same(cf(items(n), x), ref)
        if SPLITS and k:
            assert len(set(depths)) == 1, sorted(set(depths))   # (a matched call: no nesting per step)
    if SPLITS:
        st = magpy.stats(cf)
        assert st.splits == 1 and st.resumed_monitor_runs == 2 and st.resumed_fallbacks == 0, st


def test_loop_over_a_global_iterator_leaves_it_where_eager_does():
    data = [torch.ones(3) * k for k in range(6)]
    box = [None]

    def f(x):
        for row in box[0]:
            if row.shape[0] > 3:
                break
            x = x + row
        return x

    cf = magpy.compile(f, backend="eager")
    for k in range(5):
        if k == 2:
            data.insert(3, torch.ones(4))   # (the loop stops there from now on)
        x = torch.randn(3)
        box[0] = iter(data)
        ref = f(x)
        left = box[0].__length_hint__()
        box[0] = iter(data)
        assert same(cf(x), ref) and box[0].__length_hint__() == left, k
    if SPLITS:
        st = magpy.stats(cf)
        assert st.splits == 1 and st.split_hits == 4 and st.resumed_fallbacks == 0, st
