"""A record serves its compiled graph or the same graph run eagerly, whichever its first matched
calls measured faster (magpy.adaptive, ``magpy.compile(..., adaptive=True)``).

The backend here is made deliberately slow (it sleeps in every call of what it compiles): after its
first matched calls the record serves the eager graph, with results equal to eager's and the
program's side effects made once per call; with ``adaptive=False`` it keeps the compiled graph.
"""
from __future__ import annotations

import time

import pytest
import torch

import magpy
from magpy.adaptive import TRIALS

SLEEP_S = 0.02
DECIDED = 2 + 2 * TRIALS   # matched calls before a record settles (a warm-up and TRIALS timed calls each)


def slow_backend(gm, example_inputs):
    def run(*args):
        time.sleep(SLEEP_S)
        return gm.forward(*args)
    return run


def rewriting_slow_backend(gm, example_inputs):
    """Rewrites the graph it is given in place (as Inductor's passes may): a sleep before the output."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    with gm.graph.inserting_before(out):
        gm.graph.call_function(time.sleep, (SLEEP_S,))
    gm.recompile()
    return gm.forward


class Counted(torch.nn.Module):
    """A module with side effects per call (a log, a buffer updated in place) around its tensor operations."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("calls", torch.zeros(()))
        self.log: list = []

    def forward(self, x):
        self.calls.add_(1)
        y = self.lin(x).relu() * 2
        self.log.append("called")
        return y + x


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


@pytest.mark.parametrize("backend", [slow_backend, rewriting_slow_backend])
def test_a_slow_backend_is_replaced_by_the_eager_graph(backend):
    torch.manual_seed(0)
    m, ref = Counted(), Counted()
    ref.load_state_dict(m.state_dict())
    cm = magpy.compile(m, backend=backend)
    x = torch.randn(4, 8)
    for i in range(1 + DECIDED):   # the monitor run, then the record's first matched calls
        assert torch.equal(cm(x), ref(x)), i
        assert m.log == ref.log and torch.equal(m.calls, ref.calls)   # each call's effects made once
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.guard_hits, st.fallbacks) == (1, DECIDED, 0)
    assert len(st.graphs_served) == 1 and "serves the eager graph" in st.graphs_served[0], st.graphs_served
    rec = magpy.records(cm)[0]
    assert min(rec.choice.times[0]) >= SLEEP_S > min(rec.choice.times[1])   # (the eager graph never slept)
    assert _timed(cm, x) < SLEEP_S   # the hot path calls the eager graph
    ref(x)
    assert torch.equal(cm(x), ref(x)) and m.log == ref.log and torch.equal(m.calls, ref.calls)
    assert "serves the eager graph" in str(magpy.explain(cm)(x))


def test_with_adaptive_off_the_compiled_graph_stays():
    torch.manual_seed(0)
    m, ref = Counted(), Counted()
    ref.load_state_dict(m.state_dict())
    cm = magpy.compile(m, backend=slow_backend, adaptive=False)
    x = torch.randn(4, 8)
    for _ in range(2 + DECIDED):
        assert torch.equal(cm(x), ref(x))
    assert m.log == ref.log and torch.equal(m.calls, ref.calls)
    assert magpy.stats(cm).graphs_served == []
    assert magpy.records(cm)[0].choice is None
    assert _timed(cm, x) >= SLEEP_S


def test_the_eager_graph_runs_a_conditionals_arms_uncompiled():
    def f(x):
        if x.sum() > 0:
            y = x * 2 + 1
        else:
            y = x.exp() - 1
        return y.relu()

    cf = magpy.compile(f, backend=slow_backend)
    xs = [torch.ones(5), -torch.ones(5)]
    for i in range(4 + 2 * DECIDED):
        x = xs[i % 2] * (i + 1)
        assert torch.equal(cf(x), f(x)), i
    recs = [r for r in magpy.records(cf) if r.choice is not None and r.choice.serving is not None]
    merged = [r for r in recs if "conditional" in r.graph_module.code]
    assert merged, [r.graph_module.code for r in magpy.records(cf)]
    for r in merged:
        assert r.choice.serving == "eager" and min(r.choice.times[1]) < SLEEP_S


def test_adaptive_must_be_a_bool():
    with pytest.raises(TypeError, match="adaptive must be True or False"):
        magpy.compile(lambda x: x, backend="inductor", adaptive="yes")


def test_only_calls_on_inputs_of_the_same_sizes_are_compared():
    # (a record with lifted sizes serves every length: a long eager call must not meet a short compiled one)
    from magpy.adaptive import GraphChoice

    def f(x):
        return (x.cumsum(0) * 2).relu()

    gm = torch.fx.symbolic_trace(f)
    choice = GraphChoice(slow_backend(gm, []), gm, "slow")
    calls = 0
    for n in [3, 5, 3, 5, 7] + [3, 5] * DECIDED:
        assert torch.equal(choice(torch.ones(n)), f(torch.ones(n)))
        calls += 1
        if choice.serving is not None:
            break
    assert choice.serving == "eager" and calls == 2 * DECIDED   # (sizes 3 and 5 alternate: both decide together)
    assert choice.times == tuple(choice.by_sig[((3,),)][1:])   # the timed calls of one size decided
    assert [len(t) for t in choice.times] == [TRIALS, TRIALS]


def test_sizes_that_never_repeat_keep_the_backends_graph():
    from magpy.adaptive import GIVE_UP, GraphChoice

    gm = torch.fx.symbolic_trace(lambda x: x * 2)
    choice = GraphChoice(slow_backend(gm, []), gm, "slow")
    for n in range(1, 1 + GIVE_UP * DECIDED):
        assert torch.equal(choice(torch.ones(n)), torch.ones(n) * 2)
    assert choice.serving == "slow" and "nothing to compare" in choice.describe()
