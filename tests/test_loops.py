"""Loop bodies compiled once (magpy.loops, paper §6.2.2).

A Python loop whose trip count follows a lifted size (``for i in range(len(xs))`` over an
``unbind``, ``for i in range(x.size(0))``) is rolled into one loop node when its iterations repeat:
then one record serves every length. Every program here runs over changing lengths and is
compared with eager on every call; the loops that must stay unrolled (the index or the
accumulator observed, state that changes between iterations, writes inside the loop, an iterator
from before the loop) check that the result is still eager's, with one record per length as before.
"""
from __future__ import annotations

import torch
import torch.nn as nn
from conftest import same

import magpy

LENGTHS = (5, 7, 9, 4, 11, 3, 2, 1, 12, 6, 8)   # (1: a record of its own, sizes 0 and 1 are never lifted)


def _stream(fn, make, lengths=LENGTHS):
    """Compile ``fn``, call it and eager on ``make(T)`` for each length; return the stats."""
    cf = magpy.compile(fn, backend="eager")
    for t in lengths:
        args = make(t)
        ref_args = make(t)
        assert same(cf(*args), fn(*ref_args)), f"length {t}"
    return magpy.stats(cf), cf


class Cell(nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.ih = nn.Linear(n, 4 * n)
        self.hh = nn.Linear(n, 4 * n)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, (h, c)


class Layer(nn.Module):
    """The custom-LSTM idiom: unbind, index loop, `outputs += [out]`, stack."""

    def __init__(self):
        super().__init__()
        self.cell = Cell()

    def forward(self, x, state):
        inputs = x.unbind(0)
        outputs = []
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return torch.stack(outputs), state


def _seq(t, seed=None):
    g = torch.Generator().manual_seed(100 + t if seed is None else seed)
    return (torch.randn(t, 2, 6, generator=g), (torch.randn(2, 6, generator=g), torch.randn(2, 6, generator=g)))


def test_lstm_layer_one_record_for_every_length():
    torch.manual_seed(0)
    layer = Layer()
    st, cf = _stream(layer, _seq)
    # the first call is static; the second lifts the length and rolls the loop; length 1 (never
    # lifted, as in TorchDynamo) makes a record of its own
    assert (st.monitor_runs, st.records, st.fallbacks, st.unheld) == (3, 3, 0, 0)
    rolled = magpy.records(cf)[0]
    assert "rolled_loop" in rolled.graph_module.code
    assert not any(" is 7 " in a for a in rolled.assumptions)


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer(), Layer()])

    def forward(self, x, states):
        out_states = []
        for layer, s in zip(self.layers, states):
            x, s = layer(x, s)
            out_states.append(s)
        return x, out_states


def test_stacked_layers_roll_each_loop():
    torch.manual_seed(1)
    m = Stacked()

    def make(t):
        x, s = _seq(t)
        return x, [s, (s[0] * 2, s[1]), (s[0], s[1] * 3)]
    st, _ = _stream(m, make)
    assert (st.monitor_runs, st.fallbacks, st.unheld) == (3, 0, 0)


def test_stacked_layers_share_one_compiled_body():
    """The three layers' loop bodies compute the same (their weights are invariants): their body
    graphs have the same code, which is what a compiled body is shared by (RolledLoop.compile_with),
    so one backend compile serves all three, for every length."""
    from magpy.dynamic.nodes import RolledLoop

    torch.manual_seed(1)
    m = Stacked()
    cf = magpy.compile(m, backend="eager")
    for t in (5, 7, 9, 4):
        x, s = _seq(t)
        args = (x, [s, (s[0] * 2, s[1]), (s[0], s[1] * 3)])
        assert same(cf(*args), m(*args)), f"length {t}"
    rolled = [n.target for r in magpy.records(cf) if r.graph_module is not None
              for n in r.graph_module.graph.nodes if isinstance(n.target, RolledLoop)]
    assert len(rolled) == 3
    assert len({loop.body.code for loop in rolled}) == 1
    shared: dict = {}
    for loop in rolled:
        loop.compile_with(lambda gm, example: gm.forward, shared)
    assert len(shared) == 1


def test_loop_over_a_lifted_size_with_tensor_indexing():
    w = torch.randn(6, 6)

    def f(x, h):
        for t in range(x.size(0)):
            h = torch.tanh(x[t] @ w + h) * (t + 1)   # the index is a graph input of the body
        return h
    st, _ = _stream(f, lambda t: (torch.randn(t, 6, generator=torch.Generator().manual_seed(t)), torch.ones(6)))
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_count_used_by_the_graph_too():
    def f(x):
        xs = x.unbind(0)
        acc = torch.zeros(3)
        for i in range(len(xs)):
            acc = acc + xs[i]
        return acc / len(xs)
    st, _ = _stream(f, lambda t: (torch.arange(3.0 * t).reshape(t, 3),))
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_early_exit_on_a_tensor_value_is_checked_in_every_iteration():
    def f(x):
        xs = x.unbind(0)
        h = torch.zeros(3)
        for i in range(len(xs)):
            if h.sum() > 20:
                break
            h = h + xs[i]
        return h
    # rows of ones: the break comes after 7 rows, so lengths over 7 take the other path
    st, _ = _stream(f, lambda t: (torch.ones(t, 3),))
    assert st.fallbacks == 0


# -- loops that must stay unrolled, and stay right ---------------------------------------------------------
def test_index_compared_beyond_the_lengths_seen():
    def f(x):
        xs = x.unbind(0)
        h = torch.zeros(3)
        for i in range(len(xs)):
            h = h + xs[i] * (2.0 if i >= 6 else 1.0)
        return h
    st, _ = _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 9, 12))
    assert st.monitor_runs == 5   # one record per length: the index decides a Python branch


def test_counter_on_an_object_made_in_the_call():
    class Counter:
        n = 0

    def f(x):
        xs = x.unbind(0)
        c = Counter()
        h = torch.zeros(3)
        for i in range(len(xs)):
            c.n += 1
            h = h + xs[i] * (-1.0 if c.n > 5 else 1.0)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 12))


def test_state_held_by_an_object_made_in_the_call():
    """The carry lives in an attribute of an object the call made before the loop: no local
    changes between iterations (the object is the same), the graph repeats, but each iteration
    writes the object: the RefGraph's record of that write keeps the loop unrolled."""
    class State:
        pass

    lin = nn.Linear(3, 3)

    def f(x):
        xs = x.unbind(0)
        st = State()
        st.h = torch.zeros(3)
        for i in range(len(xs)):
            st.h = torch.tanh(lin(xs[i]) + st.h)
        return st.h * 2
    _, cf = _stream(f, lambda t: (torch.randn(t, 3, generator=torch.Generator().manual_seed(t)),),
                    lengths=(3, 4, 5, 8))
    loops = [line for r in magpy.records(cf) for line in r.loops]
    assert loops and all("writes attribute `h` inside the loop" in line for line in loops), loops


def test_iterator_from_before_the_loop():
    scales = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]

    def f(x):
        xs = x.unbind(0)
        it = iter(scales)
        h = torch.zeros(3)
        for i in range(len(xs)):
            h = h + xs[i] * next(it, 0.5)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 12))


def test_accumulator_read_inside_the_loop():
    def f(x):
        xs = x.unbind(0)
        outs = []
        h = torch.zeros(3)
        for i in range(len(xs)):
            h = h + xs[i] * (0.5 if len(outs) > 4 else 1.0)
            outs.append(h)
        return torch.stack(outs)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 12))


def test_accumulator_returned_as_a_list():
    def f(x):
        xs = x.unbind(0)
        outs = []
        for i in range(len(xs)):
            outs += [xs[i] * 2]
        return outs
    st, _ = _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8))
    assert st.monitor_runs == 4


def test_state_that_changes_between_iterations():
    def f(x):
        xs = x.unbind(0)
        scale = 1.0
        h = torch.zeros(3)
        for i in range(len(xs)):
            scale = scale * 0.5
            h = h + xs[i] * scale
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8))


def test_outside_attribute_written_in_the_loop():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, x):
            xs = x.unbind(0)
            h = torch.zeros(3)
            for i in range(len(xs)):
                self.steps += 1
                h = h + xs[i]
            return h

    m, ref = M(), M()
    cf = magpy.compile(m, backend="eager")
    for t in (3, 4, 5, 8, 12):
        x = torch.ones(t, 3)
        assert same(cf(x), ref(x))
        assert m.steps == ref.steps


def test_in_place_update_inside_the_loop():
    def f(x):
        xs = x.unbind(0)
        h = torch.zeros(3)
        for i in range(len(xs)):
            h.add_(xs[i])
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8))


def test_value_from_two_iterations_back():
    def f(x):
        xs = x.unbind(0)
        a = b = torch.ones(3)
        for i in range(len(xs)):
            a, b = b, a + b * xs[i]
        return b
    _stream(f, lambda t: (torch.full((t, 3), 0.5),), lengths=(3, 4, 5, 8, 11))


def test_direct_iteration_and_earlier_element():
    def f(x):
        xs = x.unbind(0)
        h = xs[0] * 0
        for i in range(len(xs)):
            h = h + xs[i] - xs[0]
        return h
    _stream(f, lambda t: (torch.arange(3.0 * t).reshape(t, 3),), lengths=(3, 4, 5, 8))


def test_nested_counted_loops():
    def f(x, y):
        h = torch.zeros(3)
        for i in range(x.size(0)):
            for j in range(y.size(0)):
                h = h + x[i] * y[j]
        return h
    _stream(f, lambda t: (torch.ones(t, 3), torch.full((t + 1, 3), 0.5)), lengths=(3, 4, 5, 7))


def test_printing_inside_the_loop(capsys):
    def f(x):
        xs = x.unbind(0)
        h = torch.zeros(3)
        for i in range(len(xs)):
            h = h + xs[i]
            print("step")
        return h
    cf = magpy.compile(f, backend="eager")
    for t in (3, 4, 5, 8):
        cf(torch.ones(t, 3))
        compiled_out = capsys.readouterr().out
        f(torch.ones(t, 3))
        assert compiled_out == capsys.readouterr().out


def test_comprehension_over_the_index():
    # the list a comprehension builds is not a local of the loop's frame: its length is read
    # after the loop as a plain int, so the loop must stay unrolled
    def f(x):
        xs = x.unbind(0)
        ys = [xs[i] * 2 for i in range(len(xs))]
        return torch.stack(ys) * len(ys)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_comprehension_over_a_lifted_size():
    def f(x):
        ys = [x[t] + t for t in range(x.size(0))]
        return sum(ys) / len(ys)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_for_over_the_unbound_sequence():
    torch.manual_seed(2)
    cell = Cell()

    def f(x, state):
        outs = []
        for x_t in x.unbind(0):
            out, state = cell(x_t, state)
            outs.append(out)
        return torch.stack(outs), state
    st, _ = _stream(f, _seq)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_for_over_the_rows_of_a_tensor():
    torch.manual_seed(3)
    cell = Cell()

    def f(x, state):
        h = state[0]
        for x_t in x:
            h, state = cell(x_t, state)
        return h
    st, _ = _stream(f, _seq)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_for_over_a_sequence_kept_and_measured():
    def f(x):
        xs = x.unbind(0)
        h = torch.zeros(3)
        for x_t in xs:
            h = h + x_t
        return h * len(xs) if len(xs) > 4 else h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 2))


def test_enumerate_over_the_rows():
    def f(x):
        h = torch.zeros(3)
        for i, x_t in enumerate(x):
            h = h + x_t * (1.0 if i < 5 else -1.0)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_record_says_which_loops_rolled():
    torch.manual_seed(4)
    layer = Layer()
    _, cf = _stream(layer, _seq, lengths=(5, 7))
    rolled, static = magpy.records(cf)
    assert len(rolled.loops) == 1 and rolled.loops[0].startswith("rolled: the loop at ") and static.loops == ()
    assert rolled.regions == 2   # the graph, and the loop's body compiled once


def test_generator_loop_consumed_by_a_comprehension():
    def gen(x):
        xs = x.unbind(0)
        for i in range(len(xs)):
            yield xs[i] * 2

    def f(x):
        out = [y for y in gen(x)]
        return torch.stack(out) * len(out)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_native_function_changes_a_heap_held_by_an_object():
    import heapq

    class Box:
        def __init__(self):
            self.heap = []

    def f(x):
        box = Box()
        h = torch.zeros(3)
        for t in range(x.size(0)):
            heapq.heappush(box.heap, t * 1.5)
            h = h + x[t] * (2.0 if len(box.heap) > 5 else 1.0)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_backwards_over_the_sequence():
    torch.manual_seed(6)
    cell = Cell()

    def f(x, state):
        xs = x.unbind(0)
        outs = []
        for i in reversed(range(len(xs))):
            out, state = cell(xs[i], state)
            outs.append(out)
        return torch.stack(outs), state
    st, _ = _stream(f, _seq)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_range_from_one_with_a_step():
    def f(x):
        h = x[0]
        for t in range(1, x.size(0), 2):
            h = torch.tanh(h + x[t] * t)
        return h
    st, _ = _stream(f, lambda t: (torch.randn(t, 3, generator=torch.Generator().manual_seed(t)),))
    assert (st.monitor_runs, st.fallbacks) == (3, 0)   # (length 1: no iteration at all, another path)


def test_range_counting_down_by_hand():
    def f(x):
        h = torch.zeros(3)
        for t in range(x.size(0) - 1, -1, -1):
            h = h * 0.5 + x[t]
        return h
    st, _ = _stream(f, lambda t: (torch.randn(t, 3, generator=torch.Generator().manual_seed(t)),))
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_last_iteration_is_special():
    def f(x):
        n = x.size(0)
        h = torch.zeros(3)
        for t in range(n):
            h = h + x[t] * (10.0 if t == n - 1 else 1.0)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_range_kept_and_measured():
    def f(x):
        r = range(x.size(0))
        h = torch.zeros(3)
        for t in r:
            h = h + x[t]
        return h * len(r)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_enumerate_over_the_sequence():
    torch.manual_seed(7)
    cell = Cell()

    def f(x, state):
        outs = []
        for t, x_t in enumerate(x.unbind(0)):
            out, state = cell(x_t * (t + 1), state)
            outs.append(out)
        return torch.stack(outs), state
    st, _ = _stream(f, _seq)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_enumerate_index_decides():
    def f(x):
        h = torch.zeros(3)
        for t, x_t in enumerate(x.unbind(0)):
            h = h + x_t * (1.0 if t < 5 else -1.0)
        return h
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_enumerate_kept_as_a_list():
    def f(x):
        pairs = list(enumerate(x.unbind(0)))
        h = torch.zeros(3)
        for _t, x_t in pairs:
            h = h + x_t
        return h * len(pairs)
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_list_only_read_in_the_loop_beside_an_accumulator():
    def f(x):
        scales = [1.0, 2.0]
        later = []
        outs = []
        for t in range(x.size(0)):
            outs.append(x[t] * scales[1] + len(scales))
        later.append(x[0])   # (a list of the frame that grows after the loop, not in it)
        return torch.stack(outs), later
    st, _ = _stream(f, lambda t: (torch.randn(t, 3, generator=torch.Generator().manual_seed(t)),))
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_length_read_into_a_plain_number_before_the_loop():
    def f(x):
        xs = x.unbind(0)
        label = "n=%d" % len(xs)  # noqa: UP031 - the %-form users write
        h = torch.zeros(3)
        for i in range(len(xs)):
            h = h + xs[i]
        return h, label
    _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))


def test_length_in_a_local_then_the_loop():
    def f(x):
        xs = x.unbind(0)
        n = len(xs)
        h = torch.zeros(3)
        for i in range(n):
            h = h + xs[i]
        return h
    st, _ = _stream(f, lambda t: (torch.ones(t, 3),), lengths=(3, 4, 5, 8, 11))
    assert (st.monitor_runs, st.fallbacks) == (2, 0)


def test_two_loops_over_one_sequence_and_the_last_output():
    torch.manual_seed(8)
    fwd, bwd = Cell(), Cell()

    def f(x, state):
        xs = x.unbind(0)
        outs_f, outs_b = [], []
        s = state
        for i in range(len(xs)):
            out, s = fwd(xs[i], s)
            outs_f.append(out)
        s = state
        for i in reversed(range(len(xs))):
            out, s = bwd(xs[i], s)
            outs_b.append(out)
        return torch.stack(outs_f), outs_b[-1], outs_f[-1]
    st, cf = _stream(f, _seq)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)
    assert [line.split(":")[0] for line in magpy.records(cf)[0].loops] == ["rolled", "rolled"]


def test_zip_of_inputs_and_masks():
    torch.manual_seed(9)
    cell = Cell()

    def f(x, m, state):
        outs = []
        for x_t, m_t in zip(x.unbind(0), m.unbind(0)):
            out, new = cell(x_t, state)
            state = (torch.where(m_t, new[0], state[0]), torch.where(m_t, new[1], state[1]))
            outs.append(out)
        return torch.stack(outs), state

    def make(t):
        x, s = _seq(t)
        return x, torch.arange(t * 2).reshape(t, 2, 1) % 3 > 0, s
    st, _ = _stream(f, make)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)


def test_zip_of_sequences_of_other_lengths():
    def f(x, y):
        h = torch.zeros(3)
        for a, b in zip(x.unbind(0), y.unbind(0)):
            h = h * 0.5 + a * b
        return h
    st, _ = _stream(f, lambda t: (torch.ones(t, 3), torch.full((t + 2 if t % 2 else t - 1, 3), 2.0)),
                    lengths=(3, 4, 5, 8, 11, 6))
    assert st.fallbacks == 0
