"""Natives that call the program's Python code back from C: ``sorted``/``min``/``max``/``list.sort``
with a ``key=`` function, and ``sum``/``tuple``/``any``/``functools.reduce`` drawing from
``map(f, xs)``. The callback's frames are monitored, but what the native does with what they
return happens in C: the order of keys read from tensors must be assumed (else a record serves
another order: a silent wrong result), and what a mapped function returns must reach the
native's rule (else the result is a tensor MagPy never saw, and the call runs eagerly).

Each program is compared with eager on calls whose values change the outcome, and the test
says what MagPy should do: one record per distinct order, or one record for all calls."""
from __future__ import annotations

import functools

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy


def _compare(f, inputs):
    cm = magpy.compile(f, backend="eager")
    for x in inputs:
        want, got = f(x), cm(x)
        if isinstance(want, torch.Tensor):
            assert same(got, want)
        elif isinstance(want, (list, tuple)):
            assert type(got) is type(want) and len(got) == len(want)
            assert all(same(g, w) for g, w in zip(got, want))
        else:
            assert got == want
    return magpy.stats(cm)


def _signs(n=8):
    """Inputs whose sums alternate in sign: the key order flips between calls."""
    g = torch.Generator().manual_seed(0)
    return [(torch.rand(4, generator=g) + 0.1) * (1 if i % 2 else -1) for i in range(n)]


KEYED = {
    "sorted": lambda x: sorted([x, x * 2, x - 1], key=lambda t: t.sum().item()),
    "sorted_reverse": lambda x: sorted([x, x * 2, x + 1], key=lambda t: t.sum().item(), reverse=True),
    "min": lambda x: min([x * 2, x, x + 0.5], key=lambda t: t.sum().item()),
    "max_of_arguments": lambda x: max(x, x * 2, x - 0.5, key=lambda t: t.sum().item()),
    "list_sort": lambda x: (lambda rows: (rows.sort(key=lambda t: t.mean().item()), rows)[1])([x, -x, x * 3]),
    "sorted_enumerate": lambda x: [t for _, t in sorted(enumerate([x, -x]), key=lambda p: p[1].max().item())],
}


@pytest.mark.parametrize("name", sorted(KEYED))
def test_keys_read_from_tensors_assume_their_order_not_their_values(name):
    st = _compare(KEYED[name], _signs())
    # every value differs between calls: a record per order (two signs), not one per call
    assert st.records <= 2 and st.monitor_runs <= 3 and st.fallbacks == 0, (st.monitor_runs, st.break_reasons)
    assert st.guard_hits >= 5


def test_equal_keys_keep_their_order_as_the_stable_sort_does():
    def f(x):
        return sorted([x, x * 2, x * 3], key=lambda t: round(t.sum().item()))   # (rounded: ties)

    st = _compare(f, [torch.full((2,), v) for v in (0.1, 0.2, 0.1, 0.3, 1.0, -1.0, 0.2)])
    assert st.fallbacks == 0


def test_keys_that_are_not_numbers_are_assumed_by_value():
    def f(x):
        return sorted([x, x * 2, x - 1], key=lambda t: (t.sum().item(), 0))

    _compare(f, _signs(6))


def test_max_of_two_keyed_tensors_is_not_a_value_read():
    st = _compare(lambda x: max(x, -x, key=lambda t: t.sum().item()), _signs(4))
    assert not st.break_reasons


MAPPED = {
    "sum": lambda branches: lambda x: sum(map(lambda fn: fn(x), branches)),
    "sum_start": lambda branches: lambda x: sum(map(lambda fn: fn(x), branches), torch.ones(4)),
    "tuple": lambda branches: lambda x: tuple(map(lambda fn: fn(x) * 2, branches)),
    "reduce": lambda branches: lambda x: functools.reduce(torch.add, map(lambda fn: fn(x), branches)),
    "any": lambda branches: lambda x: x * any(map(lambda fn: fn(x).dim() > 3, branches)),
    "bound_method": lambda branches: lambda x: sum(map(_Heads(branches).head, [x, x * 2])),
}


class _Heads:
    def __init__(self, branches):
        self.branches = branches

    def head(self, x):
        return self.branches[0](x).relu()


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_a_native_drawing_from_a_python_map_is_one_graph(name):
    branches = nn.ModuleList([nn.Linear(4, 4), nn.Tanh(), nn.Sequential(nn.ReLU(), nn.Linear(4, 4))])
    st = _compare(MAPPED[name](branches), [torch.randn(4) for _ in range(4)])
    assert st.monitor_runs == 1 and st.guard_hits == 3 and not st.break_reasons, st.break_reasons


def test_a_map_left_half_drawn_is_not_mistaken_for_a_whole_one():
    lin = nn.Linear(4, 4)

    def f(x):
        m = map(lambda t: lin(t), [x, x * 2, x * 3])
        first = next(m)
        return first, sum(m)

    st = _compare(f, [torch.randn(4) for _ in range(3)])
    assert st.fallbacks == 0


def test_filter_with_a_python_predicate_tests_what_it_returns_not_the_elements():
    lin = nn.Linear(2, 2)
    lin.bias.requires_grad_(False)

    def by_shape(x):
        return sum(filter(lambda t: t.shape[0] > 2, [x, x[:2], x * 2]))

    def trainable(x):
        return x * len(list(filter(lambda p: p.requires_grad, lin.parameters())))

    def by_value(x):   # the predicate's comparison of a number read from a tensor is assumed
        return list(filter(lambda t: t.sum().item() > 0, [x, -x, x * 2]))

    inputs = [torch.randn(4) for _ in range(5)]
    for f in (by_shape, trainable):
        st = _compare(f, inputs)
        assert st.monitor_runs == 1 and st.guard_hits == 4 and not st.break_reasons, st.break_reasons
    st = _compare(by_value, inputs)
    assert st.fallbacks == 0 and st.records <= 2


def test_filter_whose_predicate_returns_a_tensor_reads_its_truth_in_c():
    def f(x):
        return list(filter(lambda t: t.sum() > 0, [x, -x, x * 2]))

    st = _compare(f, [torch.randn(4) for _ in range(4)])
    assert any("reads the truth of tensors its predicate returns" in r for r in st.break_reasons)


def test_a_break_in_a_native_mapped_from_c_names_the_users_line():
    """A native mapped over tensors runs from MagPy's applier frame (callbacks.native_applier): a
    break there names the line that drew the map, not the applier."""
    def f(xs):
        sizes = tuple(map(torch.Tensor.untyped_storage, xs))   # (reads the storage: a break)
        return xs[0] + len(sizes[0])

    xs = [torch.randn(3), torch.randn(3)]
    ex = magpy.explain(f)(xs)
    assert len(ex.break_reasons) == 1
    reason = str(ex.break_reasons[0])
    line = f.__code__.co_firstlineno + 1
    assert f"{__file__}:{line} in {f.__name__} (under `map`)" in reason, reason
    assert "apply_native" not in reason and "monitor/callbacks.py" not in reason, reason
    assert torch.equal(magpy.compile(f, backend="eager")(xs), f(xs))
