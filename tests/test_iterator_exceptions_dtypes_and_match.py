"""Exceptions whose raising follows only structure in a run that follows changing numbers
(``next`` on a list iterator, ``issubclass`` on a numpy dtype), numpy dtypes from outside,
exceptions made in the call as outputs, ``zip`` over modules and tensors, ``match`` statements.
Each compiled program is compared with eager on every call, and the tests assert that records
serve the calls (no break)."""
from __future__ import annotations

import collections.abc

import numpy as np
import torch
from conftest import same

import magpy


def _mean(values, empty=0):
    """A `statistics.mean` for generators (the Lovasz loss's helper): `next` inside `try`."""
    it = iter(values)
    try:
        n = 1
        acc = next(it)
    except StopIteration:
        return empty
    for n, v in enumerate(it, 2):  # noqa: B007 - (the count after the loop is the mean's divisor)
        acc += v
    return acc / n


def _present_class_loss(p, labels):
    valid = labels != 255
    p = p[valid.nonzero().squeeze(1)]   # (a value-shaped tensor: the run follows changing sizes)
    labels = labels[valid]
    losses = []
    for c in range(p.shape[1]):
        fg = (labels == c).float()
        if fg.sum() == 0:
            continue
        losses.append((fg - p[:, c]).abs().sum())
    return _mean(losses)


def test_stop_iteration_of_a_list_iterator_follows_its_length():
    # `next` on an iterator of a list the run built raises by the list's length, which the record
    # guards (each `fg.sum() == 0` is assumed): the except path is recorded, not a break.
    cf = magpy.compile(_present_class_loss, backend="eager")
    for i in range(6):
        p = torch.rand(8, 3)
        labels = torch.randint(0, 2, (8,)) if i % 2 else torch.rand(8)   # no class present: `empty`
        assert same(cf(p, labels), _present_class_loss(p, labels))
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 2 and st.guard_hits == 4, st


def test_stop_iteration_of_a_range_iterator_on_a_read_count_stays_sound():
    # The list's length follows a count read from a tensor: the count is assumed where the list
    # is made, so a record made for an empty list is not one for a full one.
    def f(x, m):
        valid = x[m.nonzero().squeeze(1)]
        first = iter([1.0] * int((m.sum() // 4).item()))
        try:
            a = next(first)
        except StopIteration:
            return valid.sum() * 0
        return valid.sum() + a

    cf = magpy.compile(f, backend="eager")
    for i in range(6):
        x, m = torch.rand(8), torch.zeros(8, dtype=torch.bool)
        m[: (i * 3) % 9] = True
        assert same(cf(x, m), f(x, m))
    assert magpy.stats(cf).guard_hits >= 1


def test_issubdtype_of_an_array_read_from_tensor_values():
    # `np.issubdtype(a.dtype, ...)` calls `issubclass` on a dtype inside `try`: the TypeError follows
    # the dtype, never a value.
    def f(x, m):
        v = x[m.nonzero().squeeze(1)]
        if np.issubdtype(v.numpy().dtype, np.floating):
            return v * 2
        return v

    cf = magpy.compile(f, backend="eager")
    for _ in range(4):
        x, m = torch.rand(8), torch.rand(8) > 0.5
        assert same(cf(x, m), f(x, m))
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 1 and st.guard_hits == 3, st


G = np.array([0.0, 1.0, 2.0])


def test_numpy_method_passing_a_module_dtype_reads_a_global_array():
    # `G.any()` runs numpy's `_methods._any`, which passes the module's `bool_dt` to
    # `ufunc.reduce`: a dtype's items (its fields) are fixed, so nothing makes that read dynamic;
    # the array's values are guarded, and a change of them is a new record.
    def f(x):
        if G.any():
            return x + float(G.sum())
        return x

    cf = magpy.compile(f, backend="eager")
    try:
        for i in range(4):
            if i == 2:
                G[:] = 0
            x = torch.rand(3)
            assert same(cf(x), f(x))
    finally:
        G[:] = [0.0, 1.0, 2.0]
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 2 and st.guard_hits == 2, st


def test_exceptions_made_in_the_call_are_outputs():
    # `return NotImplementedError("...")` (a loss for an unsupported option): an exception object
    # never raised is rebuilt by the mock, fresh each call, with its args and attributes; a
    # program's own exception class without `__init__` is made by builtin code.
    class Missing(Exception):
        pass

    def f(x, order):
        if order == 4:
            return NotImplementedError("order not implemented")
        e = Missing("nope", 3)
        e.tag = x.sum()
        return x * 2, e

    cf = magpy.compile(f, backend="eager")
    outs = []
    for order in (4, 4, 5, 5, 5):
        x = torch.rand(2)
        eager, got = f(x, order), cf(x, order)
        if order == 4:
            assert type(got) is NotImplementedError and got.args == eager.args and got.__traceback__ is None
        else:
            assert same(got[0], eager[0]) and type(got[1]) is Missing and got[1].args == ("nope", 3)
            assert same(got[1].tag, eager[1].tag)
        outs.append(got)
    assert outs[0] is not outs[1] and outs[3][1] is not outs[4][1]
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 2 and st.guard_hits == 3, st


def test_identity_of_an_argument_with_a_constant():
    # `if real_flag is True` where real_flag is a tensor on some calls: a tensor is never True,
    # so the types (guarded) decide, for every tensor.
    def f(x, real_flag):
        if real_flag is True:
            x = -x
        return torch.relu(1.0 + x).mean()

    cf = magpy.compile(f, backend="eager")
    for flag in (torch.rand(2), torch.rand(2), True, True, False, torch.rand(2)):
        x = torch.randn(4)
        assert same(cf(x, flag), f(x, flag))
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 3 and st.guard_hits == 3, st


class _Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 4))

    def forward(self, x):
        return torch.matmul(self.w, x.t()).t()


def test_zip_of_a_module_list_and_a_tensor():
    # `zip(self.projections, outs)` with `outs` a tensor: ModuleList.__iter__ (Python) reads the
    # modules from outside, and is monitored; the tensor's rows are what its monitored
    # `__iter__` unbinds.
    class Average(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.projections = torch.nn.ModuleList([_Projection(), _Projection()])

        def forward(self, outs):
            return torch.stack([p(o) for p, o in zip(self.projections, outs)]).mean(0)

    m = Average()
    cf = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.rand(2, 5, 4)
        assert same(cf(x), m(x))
    with torch.no_grad():
        m.projections[1].w.mul_(2)   # (a parameter changed in place: read at the next call)
    x = torch.rand(2, 5, 4)
    assert same(cf(x), m(x))
    st = magpy.stats(cf)
    assert not st.break_reasons and st.records == 1 and st.guard_hits == 3, st


class _Scales:
    """An iterable whose `__iter__` reads state a program changes between calls."""

    def __init__(self):
        self.scales = [1.0, 2.0]

    def __iter__(self):
        return iter(self.scales)


def test_zip_of_a_tensor_and_a_python_iterable_reads_its_state():
    # A silent wrong result before: `zip(t, bag)` ran `bag.__iter__` unmonitored (with the
    # tensor's), so the floats it handed out were constants of the record.
    bag = _Scales()

    def f(x):
        return torch.stack([r * s for r, s in zip(x, bag)])

    cf = magpy.compile(f, backend="eager")
    for i in range(4):
        if i == 2:
            bag.scales[0] = 5.0
        if i == 3:
            bag.scales = [7.0, 8.0]
        x = torch.ones(2, 3)
        assert same(cf(x), f(x)), i


_CONFIG = {"kind": "scale", "factor": 2.0}


def _by_pattern(x, spec):
    """Every kind of pattern but class patterns that extract attributes (PEP 634)."""
    match spec:
        case "double":
            return x * 2
        case ("shift", k):
            return x + k
        case [first, second, *rest]:
            return x + first - second + len(rest)
        case {"kind": "scale", "factor": f, **others}:
            return x * f + len(others)
        case torch.nn.Linear():
            return spec(x)
        case int(n) if n > 3:
            return x - n
        case collections.abc.Mapping():
            return x * 0
        case _:
            return -x


def test_match_statements():
    cf = magpy.compile(_by_pattern, backend="eager")
    lin = torch.nn.Linear(2, 2)
    specs = ["double", "double", ("shift", 3), [1, 2, 3], [1, 2], _CONFIG, _CONFIG, lin, lin, 5, 2,
             {"other": 1}, "none"]
    try:
        for i, spec in enumerate(specs):
            if i == 6:
                _CONFIG["factor"] = 3.0   # (a dict from outside read by a mapping pattern: guarded)
            x = torch.ones(2)
            assert same(cf(x, spec), _by_pattern(x, spec)), spec
    finally:
        _CONFIG["factor"] = 2.0
    st = magpy.stats(cf)
    assert not st.break_reasons and st.guard_hits >= 2, st


class _Point:
    __match_args__ = ("x",)

    def __init__(self, x):
        self.x = x


def test_match_class_pattern_with_attributes_is_a_clear_break():
    def f(t, p):
        match p:
            case _Point(x=0):
                return t
            case _:
                return t + 1

    cf = magpy.compile(f, backend="eager")
    for p in (_Point(0), _Point(1), "not a point"):
        assert same(cf(torch.ones(2), p), f(torch.ones(2), p))
    assert any("class pattern extracts attributes" in r for r in magpy.stats(cf).break_reasons)
