"""Guards strong enough, and no stronger: programs whose outside state does not change must hit
their record on the next call (one monitor run), however they reach that state.

The soundness suite (tests/soundness) checks that changed state is seen; this file checks the
other side, a guard that can never pass (a bound builtin method guarded by identity, NaN compared
with ==, a computed module attribute fetched from ``__dict__``) which makes every call a monitor run.
"""
from __future__ import annotations

import enum
import functools
import math
import types
import weakref

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from conftest import same

import magpy

cfg = types.ModuleType("user_cfg")
cfg.SCALE = 3.0
cfg.act = torch.tanh


class Mode(enum.Enum):
    A = 1
    B = 2


class Base(nn.Module):
    LIMIT = 4

    def act(self, x):
        return torch.relu(x)


class Child(Base):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.mode = Mode.A
        self.table = {"a": 2, "b": 1}
        self.owner = weakref.ref(self.lin)
        self.register_buffer("nan_flag", torch.tensor(float("nan")))
        self.scale_fn = functools.partial(torch.mul, other=2.0)

    @property
    def width(self):
        return self.lin.out_features

    @classmethod
    def limit(cls):
        return cls.LIMIT

    def act(self, x):
        return super().act(x) + 1

    def forward(self, x):
        y = self.act(self.lin(x)) * cfg.SCALE
        y = cfg.act(y) if self.mode is Mode.A else y
        keys = sorted(self.table, key=self.table.get)
        y = y * len(keys) / np.sqrt(self.width) + self.limit() + type(self).LIMIT
        if math.isnan(self.nan_flag.item()):
            y = y + 1
        y = self.scale_fn(y) + self.owner().bias
        return F.layer_norm(y, (self.width,))


def helper(x, k=2.0, *, bias=None):
    return x * k if bias is None else x * k + bias


def lstm_program(rnn, x):
    out, (h, c) = rnn(x)
    return out + helper(h[-1].unsqueeze(1))


@pytest.mark.parametrize("build", [
    lambda: (Child(), (torch.randn(2, 4),)),
    lambda: (functools.partial(lstm_program, nn.LSTM(3, 5, batch_first=True)), (torch.randn(2, 4, 3),)),
], ids=["object-model", "lstm-helper-defaults"])
def test_unchanged_state_hits_the_record(build):
    target, args = build()
    fn = target if isinstance(target, nn.Module) else (lambda *a: target(*a))
    cm = magpy.compile(fn, backend="eager")
    with torch.no_grad():
        for _ in range(4):
            assert same(cm(*args), fn(*args))
    st = magpy.stats(cm)
    assert st.break_reasons == [], st.break_reasons
    assert st.monitor_runs == 1 and st.guard_hits == 3, st


def test_tensors_made_in_the_call_changed_in_place_need_no_distinct_inputs():
    """Only an outside tensor changed in place must keep the storage sharing the arguments had;
    a change of a tensor the call made cannot reach an input, so overlapping views of one tensor
    passed where two tensors were still hit the record."""
    def f(a, b):
        y = a * 2
        y.add_(b)
        return y.relu_()

    a, b, c = torch.randn(3), torch.randn(3), torch.randn(4)
    cf = magpy.compile(f, backend="eager")
    for args in ((a, b), (a, b), (c[:3], c[1:]), (c[1:], c[:3])):
        assert same(cf(*args), f(*args))
    assert magpy.stats(cf).monitor_runs == 1


def test_held_tensors_tied_after_the_record_are_not_taken_as_distinct():
    """Parameters served from the version-tagged cache were distinct when it was filled; tying
    one to another moves a tag, the refill sees two names for one tensor and the call misses."""
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)

        def forward(self, x):
            with torch.no_grad():
                self.a.weight.mul_(0.9)
            return self.b(self.a(x))

    m, ref = Two(), Two()
    ref.load_state_dict(m.state_dict())
    cm = magpy.compile(m, backend="eager")
    x = torch.ones(2, 3)
    for i in range(5):
        if i == 2:
            m.b._parameters["weight"] = m.a.weight
            ref.b._parameters["weight"] = ref.a.weight
        assert same(cm(x), ref(x))
        assert same(m.a.weight, ref.a.weight) and same(m.b.weight, ref.b.weight)
    assert magpy.stats(cm).monitor_runs == 2
