"""Tensor values read into Python (magpy.monitor.scalars): lifted into the graph, or assumed.

Each program is run compiled and eagerly on the same inputs, with the values it reads
changing between calls; results and outside state must match eager on every call, and
the monitor-run and graph counts must be as designed (no eager fallback).
"""
from __future__ import annotations

import pytest
import torch
from conftest import same

import magpy
from experiments.compare import EXACT, compare


def assert_same(got, want):
    c = compare(want, got, EXACT)
    assert c, c


def _calls(fn, inputs, state=None):
    """Run ``magpy.compile(fn)`` and ``fn`` on each input; compare results (and ``state()``)."""
    cf = magpy.compile(fn, backend="eager")
    for x in inputs:
        before = state() if state is not None else None
        got = cf(x)
        after_compiled = state() if state is not None else None
        if state is not None:
            _restore(before)
        want = fn(x)
        assert_same(got, want)
        if state is not None:
            assert_same(after_compiled, state())
    return magpy.stats(cf)


def _restore(snapshot):
    for t, v in snapshot:
        t.copy_(v)


def test_float_read_flows_into_operators_one_graph():
    class Q(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(8))

        def forward(self, x):
            scale = float(self.w.abs().max()) / 127.0
            scale = max(scale, 1e-8)
            return torch.round(x / scale) * scale + self.w

    m = Q()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for _ in range(4):
            m.w.mul_(1.5)   # the value read changes every call
            x = torch.randn(8)
            assert torch.equal(cm(x), m(x))
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.fallbacks, st.guard_hits) == (1, 1, 0, 3)


def test_item_arithmetic_and_math_stay_in_graph():
    import math

    def f(x):
        s = x.mean().item()
        t = math.sqrt(abs(s) + 1.0) * 2 - s ** 2
        return x * t, -s

    st = _calls(f, [torch.randn(5) for _ in range(4)])
    assert (st.monitor_runs, st.graph_count, st.fallbacks) == (1, 1, 0)


def test_max_returning_a_constant_gets_a_fresh_identity():
    # max(s, c) returns the object c when c wins: the constant of the code must not be taken
    # for the tracked number in the next calls (or in a later use of c).
    def f(x):
        s = max(x.sum().item(), 0.5)
        c = 0.5
        return x * s + c

    st = _calls(f, [torch.full((3,), v) for v in (-1.0, 2.0, -3.0, 4.0)])
    assert (st.monitor_runs, st.fallbacks) == (1, 0)


def test_branch_on_a_read_value_is_assumed_and_rechecked():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x - 1

    xs = [torch.ones(3), -torch.ones(3), torch.ones(3) * 3, -torch.ones(3) * 2]
    st = _calls(f, xs)
    # the second outcome's run makes the branch a conditional node: its record serves both
    # outcomes and drops the one-sided record of the first run (same guards), then hits
    assert (st.monitor_runs, st.records, st.fallbacks, st.conditionals) == (2, 1, 0, 1)


def test_branch_on_a_tensor_is_assumed():
    def f(x):
        y = x.relu()
        if (y > 1).any():
            y = y / y.max()
        return y + 1

    xs = [torch.tensor([0.5, 3.0]), torch.tensor([0.1, 0.2]), torch.tensor([2.0, 5.0]), torch.tensor([0.3, 0.9])]
    st = _calls(f, xs)
    assert (st.monitor_runs, st.fallbacks, st.guard_hits) == (2, 0, 2)


def test_max_of_a_tensor_and_a_number():
    def f(x):
        scale = (x.max() - x.min()) / 255.0
        scale = max(scale, 1e-8)
        return torch.round(x / scale) * scale

    xs = [torch.randn(6), torch.zeros(6), torch.randn(6) * 3, torch.ones(6)]
    st = _calls(f, xs)
    assert (st.monitor_runs, st.fallbacks) == (2, 0)


def test_int_read_used_by_python_is_assumed():
    def f(x):
        n = int(x[0].item()) % 3
        y = x
        for _ in range(n):
            y = y * 2
        return y

    # int(t) is assumed to be the number the run read: the record of 1 serves the calls that read 1
    xs = [torch.tensor([1.0, 2.0]), torch.tensor([1.0, 5.0]), torch.tensor([2.0, 0.0]), torch.tensor([1.0, 3.0])]
    st = _calls(f, xs)
    assert (st.fallbacks, st.monitor_runs, st.guard_hits) == (0, 2, 2)


def test_an_int_item_of_an_integer_tensor_stays_in_the_graph():
    """``k = (x > 0).sum().item()`` is an int the program computes with and returns: it is
    followed as a graph value (one record for every count), and a branch on it or a loop over
    it is an assumption on what decides the branch or the trip count."""
    def counts(x):
        k = (x > 0).sum().item()
        return x * k + k // 2, k, k * 0.5

    def branches(x):
        k = (x > 0).sum().item()
        return x * 2 if k > 4 else x - 1

    def loops(x):
        y = x
        for _ in range((x > 1).sum().item()):
            y = y + 1
        return y

    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(8, generator=g) * 2 for _ in range(6)]
    st = _calls(counts, xs)
    assert (st.fallbacks, st.monitor_runs, st.guard_hits) == (0, 1, 5)
    cm = magpy.compile(counts, backend="eager")
    for x in xs:
        got, want = cm(x), counts(x)
        assert type(got[1]) is int and got[1] == want[1] and got[2] == want[2]
    st = _calls(branches, xs + [torch.ones(8), -torch.ones(8)])
    assert st.fallbacks == 0 and st.records <= 2
    _calls(loops, [torch.tensor([2.0, 0.0]), torch.tensor([3.0, 3.0]), torch.tensor([0.0, 0.0])])


def test_returned_and_stored_numbers_are_the_calls_values():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.last = None
            self.history = []

        def forward(self, x):
            s = x.mean().item()
            self.last = s
            self.history.append(s * 2)
            return x - s, s

    m = M()
    cm = magpy.compile(m, backend="eager")
    ref = M()
    for v in (1.0, 2.0, 3.0):
        x = torch.full((2,), v)
        got, want = cm(x), ref(x)
        assert_same(got, want)
        assert m.last == ref.last and m.history == ref.history
    assert magpy.stats(cm).monitor_runs == 1


def test_formatting_and_hashing_read_the_exact_value():
    def f(x):
        s = x.sum().item()
        d = {s: "k"}
        return x + 1, f"{s:.2f}", len(d)

    xs = [torch.ones(2), torch.ones(2), torch.zeros(2), torch.ones(2)]
    st = _calls(f, xs)
    assert (st.monitor_runs, st.fallbacks) == (2, 0)


def test_speculation_undoes_an_outside_tensor_changed_in_place():
    """The graph changes ``buf`` before the branch's assumption is checked: a call that takes the
    other side puts ``buf`` back before the program runs again (one add per call)."""
    buf = torch.zeros(1)

    def f(x):
        buf.add_(1)   # must happen exactly once per call
        if x.sum() > 0:
            return x * buf
        return x - buf

    cf = magpy.compile(f, backend="eager")
    ref = torch.zeros(1)
    for v in (1.0, -1.0, 2.0):
        x = torch.full((2,), v)
        got = cf(x)
        ref += 1
        want = x * ref if v > 0 else x - ref
        assert torch.equal(got, want) and torch.equal(buf, ref)
    st = magpy.stats(cf)
    assert st.records == 2 and st.unheld == 2 and st.fallbacks == 0 and not st.break_reasons, st


def test_unheld_speculation_leaves_the_rng_as_eager_does():
    def f(x):
        noise = torch.rand(2)
        if x.sum() > 0:
            return x + noise
        return x - noise

    xs = [torch.ones(2), -torch.ones(2), torch.ones(2), -torch.ones(2), torch.ones(2)]
    torch.manual_seed(0)
    cf = magpy.compile(f, backend="eager")
    got = [cf(x) for x in xs] + [torch.rand(3)]
    torch.manual_seed(0)
    want = [f(x) for x in xs] + [torch.rand(3)]
    assert_same(got, want)
    assert magpy.stats(cf).fallbacks == 0


def test_bool_of_a_tensor_argument():
    def f(x, flag):
        if flag:
            return x + 1
        return x - 1

    cf = magpy.compile(f, backend="eager")
    for v in (True, False, True):
        flag = torch.tensor(v)   # a small input: guarded by value
        x = torch.ones(2)
        assert torch.equal(cf(x, flag), f(x, flag))
    st = magpy.stats(cf)
    assert (st.fallbacks, st.monitor_runs, st.guard_hits) == (0, 2, 1)


def test_profiled_path_counts_unheld_calls_as_misses():
    def f(x):
        # (the sides return other text: they never become one conditional node, magpy.branches)
        if x.sum() > 0:
            return x * 2, "pos"
        return x - 1, "neg"

    cf = magpy.compile(f, backend="eager", profile=True)
    for v in (1.0, -1.0, 1.0, -1.0, -1.0):
        x = torch.full((2,), v)
        assert same(cf(x), f(x))
    st = magpy.stats(cf)
    assert st.calls == 5 and st.guard_hits == 3 and st.guard_misses == 2 and st.matched_calls == 3
    # call 2 (-1): the record of +1 was tried and did not hold; calls 3 and 5 each tried the other
    # record first (most recently hit first)
    assert st.unheld == 3


def test_unheld_counts_the_speculative_tries_that_failed():
    def f(x):
        # (the sides return other text: they never become one conditional node, magpy.branches)
        if x.sum() > 0:
            return x * 2, "pos"
        return x - 1, "neg"

    cf = magpy.compile(f, backend="eager")
    for v in (1.0, 1.0, -1.0, -1.0, 1.0):
        x = torch.full((2,), v)
        assert same(cf(x), f(x))
    st = magpy.stats(cf)
    # -1 (first): record(+) unheld, then a monitor run; -1 again: hit; +1: record(-) unheld, record(+) hit
    assert (st.monitor_runs, st.guard_hits, st.unheld, st.calls) == (2, 3, 2, 5)


def test_recompile_limit_names_the_value_that_kept_changing(caplog):
    def f(x):
        n = int(x[0])   # a different number every call: one record each
        return x * n

    cf = magpy.compile(f, backend="eager", recompile_limit=3)
    for v in range(6):
        x = torch.full((2,), float(v))
        assert torch.equal(cf(x), f(x))
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.records, st.calls, st.fallbacks) == (3, 3, 6, 3)
    reason = st.break_reasons[-1]
    assert "recompile limit (3)" in reason and "values read from tensors that differ" in reason
    assert "the value of `getitem` is 2" in reason
    # the records still serve the calls they match
    x = torch.full((2,), 1.0)
    assert torch.equal(cf(x), f(x)) and magpy.stats(cf).guard_hits == 1


def test_a_result_given_a_fresh_identity_is_what_the_next_instruction_uses():
    # max() returns the constant 0.5 object when it wins; the multiplication right after it must
    # get the graph's max, not the constant of the monitor run
    def f(x):
        return x * max(x.sum().item(), 0.5)

    st = _calls(f, [torch.full((2,), v) for v in (-1.0, 3.0, 5.0, -2.0)])
    assert (st.monitor_runs, st.fallbacks) == (1, 0)


def test_print_is_replayed_with_the_values_of_the_call(capsys):
    class Logged(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 2)

        def forward(self, x):
            y = self.lin(x)
            print("mean", y.mean().item(), "shape", tuple(y.shape), sep="|")
            z = y.relu()
            print(z)
            z.add_(1)   # printed before this change
            return z

    torch.manual_seed(0)
    m = Logged()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(4, 3)
            got = cm(x)
            out_compiled = capsys.readouterr().out
            want = m(x)
            out_eager = capsys.readouterr().out
            assert torch.equal(got, want) and out_compiled == out_eager and "mean|" in out_eager
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.guard_hits, st.fallbacks) == (1, 1, 2, 0)


def test_print_of_lifted_sizes(capsys):
    def f(x):
        print("batch", x.shape, [x.size(0), 2])
        return x * 2

    cf = magpy.compile(f, backend="eager")
    for n in (2, 3, 4, 5):
        x = torch.ones(n, 2)
        cf(x)
        a = capsys.readouterr().out
        f(x)
        assert a == capsys.readouterr().out
    assert magpy.stats(cf).monitor_runs == 2


def test_packed_sequences_with_record_constant_or_assumed_lengths():
    """pack_padded_sequence's sizes come from the values of `lengths`: a list the program holds
    (here from `tolist()`, an assumption) or a lengths tensor argument (its values assumed) fixes
    them for the record; other lengths are another record."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    class Enc(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(4, 5, batch_first=True)

        def forward(self, x, lens, as_list):
            if as_list:
                sl, idx = torch.sort(lens, 0, descending=True)
                p = pack_padded_sequence(x[idx], sl.tolist(), batch_first=True)
            else:
                p = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
            out, (h, c) = self.rnn(p)
            return pad_packed_sequence(out, batch_first=True)[0], h

    m = Enc().eval()
    for as_list in (True, False):
        cm = magpy.compile(m, backend="eager")
        with torch.no_grad():
            for i in range(6):
                x = torch.randn(3, 6, 4)
                lens = torch.tensor([6, 3, 4]) if i % 2 else torch.tensor([2, 5, 1])
                assert_same(cm(x, lens, as_list), m(x, lens, as_list))
        st = magpy.stats(cm)
        assert st.monitor_runs == 2 and st.fallbacks == 0 and st.guard_hits == 4, (as_list, st)


def test_torch_allclose_is_an_assumption():
    """``torch.allclose`` (a convergence test that ends a ``while`` loop): the graph computes
    ``isclose(...).all()`` with the call's tolerances and the record assumes the outcome."""
    w = torch.tensor([[0.9, 0.2], [0.1, 0.8]])

    def power_iteration(v, tol):
        for step in range(40):
            nv = w @ v
            nv = nv / nv.norm()
            if torch.allclose(nv, v, atol=tol):
                return nv, step
            v = nv
        return v, -1

    def pick(a, b):
        return a * 2 if a.allclose(b, 1e-3, 1e-2) else b - 1

    cm = magpy.compile(power_iteration, backend="eager")
    starts = [torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0]) * 1.0, torch.tensor([0.0, 1.0])]
    for v in starts:
        assert_same(cm(v, 1e-4), power_iteration(v, 1e-4))
    st = magpy.stats(cm)
    assert st.fallbacks == 0 and st.monitor_runs == 2 and st.guard_hits == 1 and not st.break_reasons, st
    cp = magpy.compile(pick, backend="eager")
    for d in (0.0, 0.001, 0.5, 0.002, 0.7):
        a = torch.ones(3)
        assert_same(cp(a, a + d), pick(a, a + d))
    st = magpy.stats(cp)
    assert st.fallbacks == 0 and st.monitor_runs == 2 and st.guard_hits == 3, st


def test_torch_equal_is_an_assumption():
    """``torch.equal`` (multi-head attention's self-attention test): False for two shapes, else
    the graph computes whether all elements match and the record assumes the outcome."""
    def attn(q, k, v):
        if torch.equal(q, k) and k.equal(v):
            return q * 2
        if torch.equal(q, torch.zeros(3)):
            return q - 1
        return q + k + v

    x = torch.ones(3)
    cases = [(x, x, x), (x, x * 2, x), (x, x, x), (torch.zeros(3), x, x), (x, x + 0, x.clone()), (x, x * 2, x),
             (x, x, torch.ones(1, 3))]   # (two shapes: False, whatever the values)
    cm = magpy.compile(attn, backend="eager")
    for q, k, v in cases:
        assert_same(cm(q, k, v), attn(q, k, v))
    st = magpy.stats(cm)
    # (case 5 passes distinct objects where case 1 passed one object three times: its own record)
    assert st.fallbacks == 0 and st.monitor_runs == 5 and st.guard_hits == 2 and not st.break_reasons, st


def test_numpy_values_read_from_tensors_stay_in_the_graph():
    """``t.numpy()`` and numpy computations on the array are graph nodes (the paper's split at a
    dynamic operation, kept in one graph): numbers drawn from them flow into operators, the array
    returned or stored outside is the call's, a branch on them is an assumption, and an array
    changed in place runs eagerly."""
    import numpy as np

    fc = torch.nn.Linear(4, 4)
    box = {"order": None}

    def clip(x):
        y = fc(x)
        a = y.detach().numpy()
        hi = float(np.percentile(a, 90))
        box["order"] = np.argsort(-a[:, 0])
        return y.clamp(max=hi), a.mean(), torch.from_numpy(box["order"].copy())

    def branchy(x):
        a = np.asarray(x)
        return x / 2 if a.max() > 1.0 else x

    def writes(x):
        a = x.numpy()
        a[0] = 0.0
        return x + 1

    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        cm = magpy.compile(clip, backend="eager")
        for _ in range(4):
            x = torch.randn(5, 4, generator=gen)
            got, want = cm(x), clip(x)
            order = box["order"].copy()
            assert_same(got[0], want[0]) and assert_same(got[2], want[2])
            assert type(got[1]) is type(want[1]) and got[1] == want[1] and np.array_equal(order, box["order"])
        st = magpy.stats(cm)
        # (the second run: `box` held None at the first call's entry, an array since)
        assert st.fallbacks == 0 and st.monitor_runs == st.graph_count == 2 and st.guard_hits == 2, st
        ex = magpy.explain(clip)(torch.randn(5, 4, generator=gen))
        assert "numpy" in ex.graph.code and "percentile" in ex.graph.code
        assert any("`percentile`" in s and "test_scalar_reads.py" in s for s in ex.splits), ex.splits
        assert "Dynamic operations run in Python inside the record" in str(ex)

    cb = magpy.compile(branchy, backend="eager")
    for s in (0.1, 3.0, 0.2, 4.0):
        x = torch.ones(3) * s
        assert_same(cb(x), branchy(x))
    st = magpy.stats(cb)
    assert (st.monitor_runs, st.fallbacks) == (2, 0) and st.guard_hits == 2, st

    ex = magpy.explain(writes)(torch.ones(3))
    assert ex.graph_count == 0 and "in place" in ex.break_reasons[0]
    # a backend compiled ahead for fixed values (TorchScript) does not take numpy nodes
    ex = magpy.compile(branchy, backend="torchscript")
    ex(torch.ones(3))
    assert magpy.stats(ex).graph_count == 0


def test_a_failed_assumption_undoes_in_place_changes_of_buffers():
    """A branch on a tensor value, then buffers changed in place: the graph runs before the
    assumption can be checked, so the mock keeps a copy of each input the graph writes and puts
    it back when the check fails; the program then runs again from the state the call found
    (``count`` counts each call once)."""
    class Solver(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("sol", torch.zeros(3))
            self.register_buffer("count", torch.zeros(1))

        def forward(self, v):
            self.sol.fill_(1.0 / 3)
            g = v @ v.t()
            if g[0, 1] > 0:
                self.sol.add_(g[0])
            else:
                self.sol.sub_(g[1])
            self.count += 1
            return self.sol * 2

    torch.manual_seed(0)
    m, ref = Solver(), Solver()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for _ in range(8):
            v = torch.randn(3, 3)
            assert torch.equal(cm(v), ref(v)) and torch.equal(m.sol, ref.sol)
    assert m.count.item() == ref.count.item() == 8
    st = magpy.stats(cm)
    assert st.records == 2 and st.unheld > 0 and st.fallbacks == 0 and not st.break_reasons, st


def test_numpy_out_ellipsis_asks_for_an_array_and_writes_nothing():
    """``np.true_divide(q, 100, out=...)`` (numpy's own ``percentile`` does it): ``out=...`` only
    asks for a 0-d array instead of a scalar; nothing is written in place, so nothing splits."""
    import numpy as np

    def f(x, q):
        q = np.true_divide(q, 100, out=...)
        return x * float(q)

    cm = magpy.compile(f, backend="eager")
    try:
        f(torch.ones(3), 50.0)
    except TypeError:   # numpy before 2.3 (CPython 3.10 gets 2.2): no `out=...` ("return arrays must be of ArrayType")
        with pytest.raises(TypeError):
            cm(torch.ones(3), 50.0)
        return
    for q in (50.0, 50.0, 50.0):
        x = torch.randn(3)
        assert_same(cm(x, q), f(x, q))
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.splits == 0 and st.guard_hits == 2
