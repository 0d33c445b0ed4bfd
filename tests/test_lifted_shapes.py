"""Lifted shapes (magpy.monitor.scalars, paper §6.1): sizes that change between calls stop being guarded.

After two calls differ in a tensor argument's size (or from the first call with
``dynamic=True``), that dimension is lifted: size reads become graph nodes, and a size that
Python code uses otherwise (a loop count, an index, a comparison) is checked in the guard.
Every call must match eager; the monitor-run counts are as designed (bounded, not one per size).
"""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from conftest import same

import magpy


def _stream(fn, inputs, **options):
    cf = magpy.compile(fn, backend="eager", **options)
    for args in inputs:
        args = args if isinstance(args, tuple) else (args,)
        assert same(cf(*args), fn(*args))
    return magpy.stats(cf), cf


class Flatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.lin = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        y = F.relu(self.conv(x))
        b, c, h, w = y.shape
        return self.lin(y.view(b, c * h * w)) + y.size(0)


def test_batch_sizes_two_records_at_most():
    m = Flatten()
    st, cm = _stream(m, [torch.randn(bs, 3, 8, 8) for bs in (2, 3, 5, 16, 2, 9, 4)])
    assert (st.monitor_runs, st.records, st.fallbacks, st.guard_hits) == (2, 2, 0, 5)
    lifted = magpy.records(cm)[0]
    assert lifted.lifted == {"x": [0]} and "shape=('*', 3, 8, 8)" in lifted.guards_text


def test_sequence_lengths_attention():
    torch.manual_seed(0)
    q = nn.Linear(8, 8)

    def attend(x, mask):
        b, n, d = x.shape
        s = q(x) @ x.transpose(1, 2) / d ** 0.5
        s = s.masked_fill(~mask[:, None, :].expand(b, n, n), float("-inf"))
        pos = torch.arange(n).float()[None, :, None]
        return s.softmax(-1) @ x + pos

    xs = [(torch.randn(2, n, 8), torch.rand(2, n) > 0.2) for n in (8, 13, 32, 64, 9)]
    for _, m in xs:
        m[:, 0] = True
    st, _ = _stream(attend, xs)
    assert (st.monitor_runs, st.fallbacks) == (2, 0)


def test_dynamic_true_lifts_from_the_first_call():
    st, cm = _stream(lambda x: x.view(x.size(0), -1).sum(1), [torch.randn(n, 2, 3) for n in (2, 4, 7, 1)],
                     dynamic=True)
    # (a size of 1 is never lifted, as in TorchDynamo: batch 1 makes a record of its own)
    assert st.monitor_runs == 2 and st.guard_hits == 2
    with pytest.raises(TypeError, match="dynamic"):
        magpy.compile(lambda x: x, backend="torchscript", dynamic=True)


def test_dynamic_false_keeps_one_record_per_shape():
    st, _ = _stream(lambda x: x * x.size(0), [torch.randn(n) for n in (1, 2, 3)], dynamic=False)
    assert st.monitor_runs == 3


def test_python_uses_of_a_lifted_size_are_guarded():
    def f(x):
        out = []
        for i in range(x.size(0)):      # the loop unrolls: its count is checked before the call runs
            out.append(x[i] * i)
        return torch.stack(out) + len(out)

    xs = [torch.randn(n, 2) for n in (2, 3, 3, 4, 2)]
    st, cm = _stream(f, xs)
    # 2 (static), 3 (lifted, count 3), 4 (count 4), then hits for 3... and 2 (static record)
    assert st.fallbacks == 0 and st.monitor_runs == 3
    assert any("lifted sizes" in r.guards_text for r in magpy.records(cm))


def test_split_count_follows_the_size():
    def f(x):
        parts = x.split(2)
        return torch.cat([p * (i + 1) for i, p in enumerate(parts)])

    st, _ = _stream(f, [torch.randn(n) for n in (4, 6, 6, 5, 4, 8)])
    assert st.fallbacks == 0 and st.monitor_runs <= 5


def test_training_batchnorm_with_lifted_batch():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6))
    ref = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6))
    ref.load_state_dict(m.state_dict())
    cm = magpy.compile(m, backend="eager")
    for bs in (3, 5, 8, 5):
        x = torch.randn(bs, 4)
        assert same(cm(x), ref(x))
        assert same(m[1].running_mean, ref[1].running_mean) and int(m[1].num_batches_tracked) == int(ref[1].num_batches_tracked)
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.fallbacks == 0


def test_sizes_left_outside_are_plain_ints():
    class Log(nn.Module):
        def __init__(self):
            super().__init__()
            self.shapes = []
            self.last = None

        def forward(self, x):
            self.shapes.append(tuple(x.shape))
            self.last = x.size(0)
            return x * 2, x.shape

    m, ref = Log(), Log()
    cm = magpy.compile(m, backend="eager")
    for n in (2, 3, 4, 5):
        x = torch.ones(n, 2)
        got, want = cm(x), ref(x)
        assert same(got, want) and type(got[1]) is torch.Size and all(type(v) is int for v in got[1])
    assert m.shapes == ref.shapes and m.last == ref.last
    assert all(type(v) is int for s in m.shapes for v in s) and type(m.last) is int


def test_strides_and_contiguity_of_a_lifted_input():
    def f(x):
        if x.is_contiguous():
            return x.view(-1) * 2
        return x.reshape(-1) - 1

    xs = [torch.randn(2, 3), torch.randn(4, 3), torch.randn(3, 5).t(), torch.randn(3, 7).t(), torch.randn(5, 3)]
    st, _ = _stream(f, xs)
    assert st.fallbacks == 0


def test_numel_and_len_of_lifted_tensors():
    def f(x):
        return x.sum() / x.numel() + len(x) + x.nelement()

    st, _ = _stream(f, [torch.randn(n, 3) for n in (1, 2, 5, 9)])
    assert (st.monitor_runs, st.fallbacks) == (2, 0)


def test_lifted_sizes_with_inductor():
    def f(x):
        return (x.view(x.size(0), -1) * 2).sum(1)

    cf = magpy.compile(f, backend="inductor")
    for n in (2, 3, 6, 11):
        x = torch.randn(n, 2, 2)
        assert same(cf(x), f(x))
    assert magpy.stats(cf).monitor_runs == 2


def test_branch_on_a_lifted_size_is_a_guard_not_a_speculation():
    # the comparison depends on input sizes only: checked in the guard, before the graph runs, so
    # the record may change a buffer in place
    torch.manual_seed(0)
    bn, ref = nn.BatchNorm1d(3), nn.BatchNorm1d(3)

    def f(m):
        def g(x):
            y = m(x)
            if x.size(0) > 4:
                return y * 2
            return y
        return g

    cf = magpy.compile(f(bn), backend="eager")
    for n in (2, 3, 6, 8, 3):
        x = torch.randn(n, 3)
        assert same(cf(x), f(ref)(x)) and same(bn.running_mean, ref.running_mean)
    st = magpy.stats(cf)
    assert st.fallbacks == 0 and st.monitor_runs == 3   # static 2, lifted n<=4, lifted n>4
    assert any("lifted sizes: bool(" in r.guards_text for r in magpy.records(cf))


def test_loop_over_the_rows_of_a_lifted_input_is_checked_in_the_guard():
    """``for x_t in x.unbind(0)`` (an RNN's time loop) over a lifted length, unrolled since a
    Python number changes every iteration: each trip count is a record, and which record fits is decided by the guard from ``x.size(0)``, before any graph
    runs (as a speculation each call would run the graphs of the records before the right one)."""
    torch.manual_seed(0)
    cell = nn.Linear(6, 3)

    def rnn(x, h):
        outs = []
        decay = 1.0   # (a Python number that changes every iteration: the loop stays unrolled)
        for x_t in x.unbind(0):
            h = torch.tanh(cell(torch.cat([x_t, h], -1))) * decay
            decay = decay * 0.5
            outs.append(h)
        return torch.stack(outs), h

    cf = magpy.compile(rnn, backend="eager")
    lengths = [2, 3, 5, 3, 2, 5, 4]
    for t in lengths:
        x, h = torch.randn(t, 2, 3), torch.zeros(2, 3)
        assert same(cf(x, h), rnn(x, h))
    st = magpy.stats(cf)
    assert st.fallbacks == 0 and st.unheld == 0 and st.monitor_runs == 4, st   # static 2, lifted 3, 5, 4
    assert any("lifted sizes:" in r.guards_text and ".size(0)" in r.guard_source for r in magpy.records(cf))


def test_a_counter_written_every_call_is_lifted():
    class Counted(nn.Module):
        def __init__(self):
            super().__init__()
            self.step = 0
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            self.step += 1
            y = self.lin(x) * self.step
            if self.step % 3 == 0:      # a guard on the lifted value, not on its number
                y = y + 1
            return y

    torch.manual_seed(0)
    m, ref = Counted(), Counted()
    ref.load_state_dict(m.state_dict())
    cm = magpy.compile(m, backend="eager")
    for _ in range(12):
        x = torch.randn(2, 3)
        assert same(cm(x), ref(x))
        assert m.step == ref.step and type(m.step) is int
    st = magpy.stats(cm)
    # step 1 is a record with the value guarded; the second call holds another value, so from
    # there it is a graph input (as TorchDynamo's automatic dynamic), one record per outcome of
    # `step % 3 == 0`
    assert (st.monitor_runs, st.fallbacks) == (3, 0)
    assert "type(self.step) is int" in magpy.records(cm)[0].guards_text


def test_a_counter_in_a_dict_is_lifted():
    def make():
        state = {"calls": 0}

        def f(x):
            state["calls"] += 1
            return x + state["calls"]
        return f, state

    f, state = make()
    g, ref_state = make()
    cf = magpy.compile(f, backend="eager")
    for _ in range(8):
        x = torch.ones(2)
        assert same(cf(x), g(x)) and state == ref_state and type(state["calls"]) is int
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.fallbacks) == (3, 0)



def test_number_arguments_and_float_attributes_are_lifted():
    """An int or float argument, or a float attribute, that changes on every call becomes a graph
    input after two records differ in it (paper §6.1); numbers computed from it alone and handed
    back are computed by the mock; branches on it are guards."""
    class Annealed(nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = 1.0

        def forward(self, x, k, scale=1.0):
            self.temperature *= 0.9
            y = x * k / self.temperature + scale
            if k > 100:
                y = y - 1
            return y, k * 2, scale / 2, self.temperature

    m, ref = Annealed(), Annealed()
    cm = magpy.compile(m, backend="eager")
    for i in range(12):
        args = (torch.ones(3), i * 17, 0.5 * i)
        got, want = cm(*args), ref(*args)
        assert same(got, want)
        assert type(got[1]) is int and type(got[2]) is float and m.temperature == ref.temperature
    st = magpy.stats(cm)
    # one record with values guarded (the next call changes them: lifted), then one per outcome of `k > 100`
    assert (st.monitor_runs, st.fallbacks) == (3, 0), st
    guards = magpy.records(cm)[0].guards_text
    assert "type(k) is int" in guards and "type(scale) is float" in guards and "type(self.temperature) is float" in guards


def test_float_arguments_stay_guarded_with_inductor():
    # (TorchInductor 2.13 on CPU computed wrong values from a float graph input in a fused kernel:
    # with it floats are not lifted; ints are)
    def f(x, scale, n):
        return torch.full((3,), scale) + x.clamp(max=scale), torch.arange(3.0) * n, x.pow(scale)

    cm = magpy.compile(f, backend="inductor")
    for i in range(2, 7):
        args = (torch.ones(3) * 0.3 * i, 0.1 + 0.25 * i, i)
        assert same(cm(*args), f(*args))
    assert magpy.stats(cm).monitor_runs == 5


def test_a_caught_keyerror_on_plain_data_does_not_end_lifting():
    """`Mapping.get` of a missing name raises KeyError inside, on a name: not because of a lifted
    size. The batch size is lifted after the first change, so five sizes take two monitor runs
    (before, lifting ended at the KeyError: one record per size)."""
    import collections.abc

    class Config(collections.abc.Mapping):
        def __init__(self, **kw): self._d = dict(kw)
        def __getitem__(self, k): return self._d[k]
        def __iter__(self): return iter(self._d)
        def __len__(self): return len(self._d)

    cfg = Config(scale=2.0)

    def f(x):
        return x * cfg["scale"] + cfg.get("bias", 0.5)

    cf = magpy.compile(f, backend="eager")
    for n in (2, 5, 3, 4, 6):
        x = torch.randn(n, 3)
        assert torch.equal(cf(x), f(x))
    st = magpy.stats(cf)
    assert st.monitor_runs == 2 and st.guard_hits == 3, st


def test_two_lifted_numbers_that_are_the_same_int_object_still_hit():
    """Two attributes lifted as graph inputs may hold equal small ints, which CPython shares: the
    record's distinct-objects guard (for writes) must not count them as aliased objects."""
    class Phased(nn.Module):
        def __init__(self):
            super().__init__()
            self.phase, self.other, self.seen = 0, 0, []

        def forward(self, x):
            self.phase = 1 - self.phase
            self.other = 1 - self.other
            self.seen.append(self.phase)
            return x + self.phase + self.other

    m, ref = Phased(), Phased()
    cm = magpy.compile(m, backend="eager")
    for _ in range(8):
        x = torch.randn(3)
        assert same(cm(x), ref(x)) and m.seen == ref.seen
    assert magpy.stats(cm).monitor_runs == 2


class _Config:
    def __init__(self, n):
        self.n = n
        self.dims = [4, 8]

    def __getattribute__(self, key):
        return super().__getattribute__(key)


def _missing_lookups(x):
    import copy

    cfg = copy.deepcopy(_Config(3))                     # the memo's KeyError (copy._keep_alive)
    extra = cfg.extra if hasattr(cfg, "extra") else 0.5
    try:
        other = cfg.other                                # AttributeError through __getattribute__
    except AttributeError:
        other = 1.5
    cache = {0: x * 2}
    try:
        more = cache[1]                                  # KeyError of a dict holding tensors
    except KeyError:
        more = x
    return cache[0] * cfg.n * x.shape[0] + extra + other + more


def test_lookups_that_raise_on_missing_names_keep_sizes_lifted():
    """A KeyError or AttributeError of a lookup by a plain key or name follows the keys and
    names present, not the numbers the objects hold: the batch stays lifted (two monitor runs
    for six sizes), not one record per size."""
    stats, _ = _stream(_missing_lookups, [torch.ones(n, 3) for n in (2, 5, 3, 4, 2, 6)])
    assert stats.monitor_runs == 2 and stats.guard_hits == 4 and not stats.dynamic
