"""Recurrent loops written the ways users write them roll into one body (paper §6.2.2).

Each program runs over sequences of changing length, is compared with eager on every call, and
must reach one record that serves every length >= 2 after two monitor runs (the first call is
static; the second lifts the length and rolls the loop). Objects made and dropped inside an
iteration (the list handed to ``torch.cat``, a tuple of states, ``enumerate``/``zip``/``reversed``
iterators) are no writes; a torch module class whose operator is reached through ``torch._VF``
(``nn.GRUCell``, ``nn.LSTMCell``) reads the same things in every iteration; an operator that
returns a fixed number of tensors (``lstm_cell``'s ``(h, c)``) has no count to follow.
"""
from __future__ import annotations

import torch
import torch.nn as nn
from conftest import same

import magpy

N = 6
LENGTHS = (5, 7, 9, 4, 11, 3, 6, 8, 10, 12)


def _run(model, make=None, lengths=LENGTHS):
    """Compile ``model``, call it and eager on inputs of each length; return its stats and the
    number of rolled loop nodes in its records."""
    make = make or (lambda t: (torch.randn(t, 2, N), torch.randn(2, N)))
    cf = magpy.compile(model, backend="eager")
    for t in lengths:
        args = make(t)
        with torch.no_grad():
            assert same(cf(*args), model(*args)), f"length {t}"
    st = magpy.stats(cf)
    rolled = sum(1 for r in magpy.records(cf) if r.graph_module is not None
                 for n in r.graph_module.graph.nodes if getattr(n.target, "__name__", "") == "rolled_loop")
    return st, rolled


def _one_record(st, rolled, loops=1):
    assert (st.monitor_runs, st.fallbacks, st.unheld) == (2, 0, 0), st
    assert rolled >= loops


class CatRNN(nn.Module):
    """An Elman RNN whose cell concatenates input and state."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(N, N)
        self.rec = nn.Linear(2 * N, N)

    def step(self, x, h):
        return torch.tanh(self.rec(torch.cat([self.inp(x), h], -1)))


def test_range_of_a_size_with_a_cat_in_the_body():
    class M(CatRNN):
        def forward(self, xs, h):
            for t in range(xs.size(0)):
                h = self.step(xs[t], h)
            return h
    _one_record(*_run(M()))


def test_range_of_len_of_unbind():
    class M(CatRNN):
        def forward(self, xs, h):
            inputs = xs.unbind(0)
            for i in range(len(inputs)):
                h = torch.tanh(self.rec(torch.cat([self.inp(inputs[i]), h], -1)))
            return h
    _one_record(*_run(M()))


def test_iterating_the_tensor():
    class M(CatRNN):
        def forward(self, xs, h):
            for x in xs:
                h = self.step(x, h)
            return h
    _one_record(*_run(M()))


def test_range_of_shape_index_with_a_tuple_literal_for_cat():
    class M(CatRNN):
        def forward(self, xs, h):
            for t in range(xs.shape[0]):
                h = torch.tanh(self.rec(torch.cat((self.inp(xs[t]), h), dim=1)))
            return h
    _one_record(*_run(M()))


def test_gru_cell_with_outputs_appended_and_stacked():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(N, N)

        def forward(self, xs, h):
            outs = []
            for x in xs.unbind(0):
                h = self.cell(x, h)
                outs.append(h)
            return torch.stack(outs)
    _one_record(*_run(M()))


def test_lstm_cell_with_a_tuple_state_under_enumerate():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(N, N)

        def forward(self, xs, h):
            state = (h, torch.zeros_like(h))
            outs = []
            for _step, x in enumerate(xs.unbind(0)):
                state = self.cell(x, state)
                outs.append(state[0])
            return torch.stack(outs, 0), state
    _one_record(*_run(M()))


def test_lstm_cell_with_unpacked_state_and_plus_equals_accumulator():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(N, N)

        def forward(self, xs, h):
            c = torch.zeros_like(h)
            outs = []
            for t in range(len(xs)):
                h, c = self.cell(xs[t], (h, c))
                outs += [h]
            return torch.stack(outs), (h, c)
    _one_record(*_run(M()))


def test_forward_then_reversed_loop():
    class M(CatRNN):
        def forward(self, xs, h):
            f = b = h
            steps = xs.size(0)
            for t in range(steps):
                f = self.step(xs[t], f)
            for t in reversed(range(steps)):
                b = self.step(xs[t], b)
            return f + b
    _one_record(*_run(M()), loops=2)


def test_zip_of_two_unbinds():
    class M(CatRNN):
        def forward(self, xs, h):
            ys = xs * 2
            for x, y in zip(xs.unbind(0), ys.unbind(0)):
                h = self.step(x + y, h)
            return h
    _one_record(*_run(M()))


def test_layers_outer_time_inner_share_one_record():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleList([nn.GRUCell(N, N) for _ in range(2)])

        def forward(self, xs, h):
            for cell in self.cells:
                outs = []
                hh = h
                for t in range(xs.size(0)):
                    hh = cell(xs[t], hh)
                    outs += [hh]
                xs = torch.stack(outs)
            return xs
    _one_record(*_run(M()), loops=2)


def test_functional_cell_with_weights_from_a_dict():
    w = {"ih": torch.randn(N, N), "hh": torch.randn(N, N)}

    def rnn(xs, h):
        hs = []
        for x in xs.unbind(0):
            h = torch.tanh(x @ w["ih"] + h @ w["hh"])
            hs.append(h)
        return torch.stack(hs, dim=0).mean(0), h
    _one_record(*_run(rnn))


def test_attention_over_the_steps_kept_in_a_list():
    class M(CatRNN):
        def forward(self, xs, h):
            states = []
            for x in xs.unbind(0):
                h = self.step(x, h)
                states.append(h)
            mem = torch.stack(states, 1)                       # (batch, T, N)
            att = torch.softmax((mem * h.unsqueeze(1)).sum(-1), -1)
            return (att.unsqueeze(-1) * mem).sum(1)
    _one_record(*_run(M()))


def test_a_loop_whose_state_changes_stays_unrolled_and_right():
    """A Python number that changes every iteration is part of the loop's path: one record per
    length, every result eager's."""
    class M(CatRNN):
        def forward(self, xs, h):
            decay = 1.0
            for x in xs.unbind(0):
                h = self.step(x, h) * decay
                decay = decay * 0.9
            return h
    st, rolled = _run(M(), lengths=(3, 4, 5, 3))
    assert st.monitor_runs == 3 and rolled == 0 and st.fallbacks == 0


def test_sorted_items_by_string_key_is_one_graph():
    """``sorted(d.items(), key=operator.itemgetter(0))`` over a dict of str -> tensor compares
    the strings only: the tensors are moved, never compared."""
    import operator

    def f(x):
        outs = {"b": x + 1, "a": x * 2, "c": x - 1}
        return torch.stack([v for _, v in sorted(outs.items(), key=operator.itemgetter(0))])
    cf = magpy.compile(f, backend="eager")
    for _ in range(3):
        x = torch.randn(3)
        assert same(cf(x), f(x))
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.graph_count, st.fallbacks) == (1, 1, 0)


def test_sorted_by_a_tensor_through_itemgetter_is_decided_per_call():
    import operator

    def f(x):
        outs = [(x.sum(), "a"), ((x * 2).sum(), "b"), ((x - 3).sum(), "c")]
        return sorted(outs, key=operator.itemgetter(0))[0][1]
    cf = magpy.compile(f, backend="eager")
    g = torch.Generator().manual_seed(3)
    for _ in range(8):
        x = torch.randn(3, generator=g)
        assert cf(x) == f(x)
    assert magpy.stats(cf).fallbacks + magpy.stats(cf).splits >= 1


def test_explain_says_why_a_loop_stays_unrolled_with_its_line():
    lin = nn.Linear(2 * N, N)

    def rnn(xs, h):
        decay = 1.0
        for x in xs.unbind(0):
            h = torch.tanh(lin(torch.cat([x, h], -1))) * decay
            decay = decay * 0.9
        return h
    cf = magpy.compile(rnn, backend="eager")
    for t in (4, 5, 6):
        cf(torch.randn(t, 2, N), torch.randn(2, N))
    text = str(magpy.explain(cf)(torch.randn(7, 2, N), torch.randn(2, N)))
    line = rnn.__code__.co_firstlineno + 2
    assert f"unrolled: the loop at {__file__}:{line}" in text
    assert "its Python state changes between iterations" in text


def test_explain_says_a_loop_rolled():
    lin = nn.Linear(2 * N, N)

    def rnn(xs, h):
        for x in xs.unbind(0):
            h = torch.tanh(lin(torch.cat([x, h], -1)))
        return h
    cf = magpy.compile(rnn, backend="eager")
    for t in (4, 5):
        cf(torch.randn(t, 2, N), torch.randn(2, N))
    exp = magpy.explain(cf)(torch.randn(7, 2, N), torch.randn(2, N))
    assert any(s.startswith("rolled: the loop at") for s in exp.loops), exp.loops


# -- while loops on a counter ---------------------------------------------------------------------------


def test_while_on_a_counter_below_a_size():
    class M(CatRNN):
        def forward(self, xs, h):
            t = 0
            while t < xs.size(0):
                h = self.step(xs[t], h)
                t += 1
            return h
    _one_record(*_run(M()))


def test_while_with_the_bound_in_a_local_and_the_size_on_the_left():
    class M(CatRNN):
        def forward(self, xs, h):
            steps = xs.shape[0]
            t = 0
            while steps > t:
                h = self.step(xs[t], h)
                t = t + 1
            return h
    _one_record(*_run(M()))


def test_while_counting_down_from_a_size():
    class M(CatRNN):
        def forward(self, xs, h):
            t = xs.size(0) - 1
            while t >= 0:
                h = self.step(xs[t], h)
                t -= 1
            return h
    _one_record(*_run(M()))


def test_while_with_outputs_appended_after_a_first_step():
    class M(CatRNN):
        def forward(self, xs, h):
            outs = []
            t = 0
            while t < len(xs):
                h = self.step(xs[t], h)
                outs.append(h)
                t += 1
            return torch.stack(outs)
    _one_record(*_run(M()))


def test_while_stepping_by_two_is_right_for_odd_and_even_lengths():
    class M(CatRNN):
        def forward(self, xs, h):
            t = 0
            while t < xs.size(0):
                h = self.step(xs[t], h)
                t += 2
            return h
    st, rolled = _run(M())
    assert st.fallbacks == 0 and st.monitor_runs <= 3 and rolled >= 1


def test_while_whose_counter_python_reads_stays_unrolled_and_right():
    class M(CatRNN):
        def forward(self, xs, h):
            t = 0
            while t < xs.size(0):
                h = self.step(xs[t], h) * (2.0 if t == 3 else 1.0)
                t += 1
            return h
    st, rolled = _run(M(), lengths=(3, 5, 6, 4))
    assert st.monitor_runs == 4 and rolled == 0 and st.fallbacks == 0


def test_while_whose_bound_grows_inside_stays_unrolled_and_right():
    class M(CatRNN):
        def forward(self, xs, h):
            t, n = 0, xs.size(0)
            while t < n:
                h = self.step(xs[t % xs.size(0)], h)
                t += 1
                if t == 2:
                    n = n + 1
            return h
    st, rolled = _run(M(), lengths=(3, 5, 6, 4))
    assert st.fallbacks == 0 and rolled == 0


def test_for_loop_after_a_first_step_outside_it():
    """``outs = [h]`` before the loop: the accumulator's first item is no iteration's."""
    class M(CatRNN):
        def forward(self, xs, h):
            outs = [h]
            for x in xs.unbind(0):
                h = self.step(x, h)
                outs += [h]
            return torch.stack(outs)
    _one_record(*_run(M()))
