"""Torch function modes entered inside the compiled call: each torch call in the block runs the
mode's Python ``__torch_function__``, which a graph would not run. MagPy says so, at the
user's ``with`` line, and runs the call eagerly: the results are eager's on every call."""
from __future__ import annotations

import torch
from conftest import same
from torch.overrides import TorchFunctionMode

import magpy


class Scale(TorchFunctionMode):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.seen = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen += 1
        out = func(*args, **(kwargs or {}))
        return out * self.k if func is torch.add else out


def test_a_mode_entered_in_the_call_runs_eagerly_with_a_reason_at_the_with():
    mode = Scale(2.0)

    def f(x):
        y = x + 1
        with mode:
            z = torch.add(y, 1)
        return z * 3

    cm = magpy.compile(f, backend="eager")
    x = torch.ones(3)
    assert same(cm(x), (x + 2) * 6)
    mode.k = 5.0
    assert same(cm(x), (x + 2) * 15)
    assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert st.guard_hits == 0 and st.records == 0
    reason = st.breaks[0]
    assert "torch mode `Scale`" in reason.message and reason.function == "f"
    assert reason.where.endswith(f":{f.__code__.co_firstlineno + 2}")   # the `with mode:` line


def test_a_device_block_in_the_call_is_named():
    def f(x):
        with torch.device("cpu"):
            t = torch.ones(3)
        return x + t

    cm = magpy.compile(f, backend="eager")
    for _ in range(3):
        x = torch.randn(3)
        assert same(cm(x), f(x))
    assert "torch.device('cpu')" in magpy.stats(cm).breaks[0].message


def test_a_mode_around_some_calls_leaves_the_record_for_the_others():
    mode = Scale(3.0)

    def f(x):
        return torch.add(x, 1) * 2

    cm = magpy.compile(f, backend="eager")
    x = torch.ones(3)
    assert same(cm(x), (x + 1) * 2)
    with mode:
        out = cm(x)                              # under the mode: eager, through the mode
    assert same(out, (x + 1) * 6)
    assert same(cm(x), (x + 1) * 2)
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 1 and st.fallbacks == 1
    assert mode.seen == 2                        # add and mul: MagPy's own checks are not seen
