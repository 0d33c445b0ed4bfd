"""``explain`` and ``stats`` count rolled loops, conditionals and splits the same way (issue 27).

Both count from the records a call made (:func:`magpy.pipeline.record_counts`, continuations
included): ``explain(compiled)(*args)`` before a call that misses says what that call will
record, with the branch arms and lifted sizes the compiled callable plans with; ``stats`` after
it must have grown by exactly that. Programs: an RNN-style loop over a length that changes (the
second length rolls the loop: explain plans the lifted length as the compiled callable does), a
branch on a tensor value whose second side makes a conditional, a write split under
``torch.no_grad()``.
"""
from __future__ import annotations

import io

import torch
import torch.nn as nn
from conftest import same

import magpy
from magpy.bytecode.resume import supported

LOG = io.StringIO()
COUNTED = ("graph_count", "splits", "loop_regions", "conditionals")


class Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(4, 4)

    def forward(self, x, h):
        for t in x.unbind(0):
            h = torch.tanh(self.cell(t) + h)
        return h


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x, h):
        h = torch.tanh(h + x.sum(0))
        if h.mean() > 0:
            h = self.a(h) * 2.0
        else:
            h = self.b(h) - 1
        return h


class Logged(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, h):
        h = self.fc(h + x.sum(0))
        with torch.no_grad():
            LOG.write(f"{h.mean().item():.3f}\n")
        return h * 2


def _calls(lengths, signs):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(n, 2, 4, generator=g), s * torch.ones(2, 4)) for n, s in zip(lengths, signs)]


def _agree(model, calls):
    """Explain each call that will miss, then make it; returns the per-call (explained, counted).
    A call is an argument tuple, or a function making one (fresh arguments for each use: an
    iterator is used up by the call it is passed to)."""
    torch.manual_seed(0)
    cf = magpy.compile(model, backend="eager")
    seen = []
    for call in calls:
        fresh = call if callable(call) else lambda call=call: call
        before = magpy.stats(cf)
        ex = magpy.explain(cf)(*fresh())
        got = cf(*fresh())
        assert same(got, model(*fresh()))
        after = magpy.stats(cf)
        if after.monitor_runs == before.monitor_runs:
            continue   # (a hit records nothing; explain reports what a miss would record)
        said = (ex.graph_count, ex.split_count, ex.loop_regions, ex.conditionals)
        made = tuple(getattr(after, k) - getattr(before, k) for k in COUNTED)
        assert said == made, f"explain says (graphs, splits, loops, conditionals) = {said}, the call recorded {made}"
        seen.append(said)
    return cf, seen


def test_rolled_loop_counted_alike():
    cf, seen = _agree(Loop(), _calls([3, 5, 4, 7], [1, 1, 1, 1]))
    assert seen == [(1, 0, 0, 0), (2, 0, 1, 0)], seen   # (the body is a graph of its own)
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.loop_regions, st.guard_hits) == (2, 1, 2), st


def test_conditional_counted_alike():
    cf, seen = _agree(Branch(), _calls([3, 3, 3, 3], [1, -1, 1, -1]))
    assert seen[-1][3] == 1 and magpy.stats(cf).conditionals == 1, seen


def test_split_counted_alike():
    cf, seen = _agree(Logged(), _calls([3, 3, 3], [1, -1, 1]))
    if supported():
        assert seen[0] == (1, 1, 0, 0), seen
        assert magpy.stats(cf).splits == 1


class Guarded(nn.Module):
    """The `with` of forward covers the call of a helper that writes a tensor's value."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def helper(self, h):
        LOG.write(f"{h.mean().item():.3f}\n")
        return h * 2

    def forward(self, x, h):
        h = self.fc(h + x.sum(0))
        with torch.no_grad():
            g = self.helper(h)
        return h + g


class Stepped(nn.Module):
    """A loop over an iterator from outside the call."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(4, 4)

    def forward(self, rows, h):
        h = h * 2
        for t in rows:
            h = torch.tanh(self.cell(t) + h)
        return h.sum()


def test_split_under_an_outer_with_counted_alike():
    cf, seen = _agree(Guarded(), _calls([3, 3, 3], [1, -1, 1]))
    if supported():
        # (the `with` covers the split: the first call goes on eagerly past it, the continuation
        # is monitored, and counted, on the next call)
        assert seen[0] == (1, 1, 0, 0), seen
        st = magpy.stats(cf)
        assert (st.splits, st.graph_count, st.resumed_monitor_runs) == (1, 2, 1), st


def test_split_at_a_loops_step_counted_alike():
    def call(n):
        return lambda: (iter([torch.ones(2, 4) * k for k in range(n)]), torch.zeros(2, 4))

    cf, seen = _agree(Stepped(), [call(3), call(5), call(2)])
    if supported():
        # (one split point, its two continuations: the body, recorded twice, since its first step
        # gets `h` without grad and the later ones the cell's output; and what follows the loop)
        assert seen == [(4, 1, 0, 0)], seen
        st = magpy.stats(cf)
        assert (st.splits, st.graph_count, st.resumed_monitor_runs, st.monitor_runs) == (1, 4, 3, 1), st


def test_explanation_text_names_the_counts():
    ex = magpy.explain(Loop())(*_calls([3], [1])[0])
    assert "Splits: 0, rolled loops: 0, conditionals: 0" in str(ex)


def _branch(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    else:
        y = y - 1
    return y.relu()


def test_a_call_a_record_answers_is_explained_by_that_record():
    """After both sides of a branch ran, the record with the conditional serves every call the
    one-sided record served (the same guards, one assumption fewer), which is dropped: stats counts
    the graphs of the one record left and explain of a call it answers says the same. A call of a
    new length answered by the rolled loop is explained by that record (its graph and the body's),
    not by what a fresh run would record."""
    branch = magpy.compile(_branch, backend="eager")
    xs = [torch.ones(3), -torch.ones(3), torch.ones(3), -torch.ones(3)]
    for x in xs:
        assert same(branch(x), _branch(x))
    st, ex = magpy.stats(branch), magpy.explain(branch)(xs[0])
    assert st.records == 1 and st.conditionals == 1, st
    assert (ex.graph_count, ex.conditionals) == (st.graph_count, st.conditionals), (ex, st)

    torch.manual_seed(0)
    model = Loop()
    loop = magpy.compile(model, backend="eager")
    for x, h in _calls([3, 5, 4], [1, 1, 1]):
        loop(x, h)
    x, h = _calls([6], [1])[0]
    ex = magpy.explain(loop)(x, h)
    assert (ex.graph_count, ex.loop_regions) == (2, 1), ex   # (the rolled record: its graph and the body's)
    before = magpy.stats(loop)
    assert same(loop(x, h), model(x, h))
    assert magpy.stats(loop).monitor_runs == before.monitor_runs   # (answered by that record)
