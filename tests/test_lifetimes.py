"""What a monitor run keeps alive after it: nothing of the run beyond what the record needs.

Checked with the cyclic collector off, so an object counts as freed only when reference
counting frees it, as it does in eager execution. A leak here is memory the user's program
does not have: a 3-D U-Net's module built for ``magpy.explain`` stayed alive (344 MB of
parameters) into the next compile, and an activation the program dropped stayed alive for as
long as the caller kept the output.
"""
from __future__ import annotations

import bisect
import gc
import weakref

import pytest
import torch

import magpy


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 7), torch.nn.ReLU())
        self.head = torch.nn.Linear(7, 5)

    def forward(self, x):
        h = self.body(x) * 2      # the only tensors of 7 columns: activations the program drops
        return self.head(h) + 1


def _live_activations() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is torch.Tensor and o.dim() == 2 and o.shape[1] == 7)


@pytest.fixture
def no_cyclic_gc():
    magpy.explain(Net())(torch.randn(2, 4))   # first-run imports, once
    gc.collect()
    gc.disable()
    try:
        with torch.no_grad():   # (with grad, the output's autograd graph keeps activations, as in eager)
            yield
    finally:
        gc.enable()


def test_an_activation_the_program_dropped_dies_although_the_output_is_kept(no_cyclic_gc):
    net = Net()
    compiled = magpy.compile(net, backend="eager")
    out = compiled(torch.randn(2, 4))          # the monitor run
    assert magpy.stats(compiled).monitor_runs == 1 and magpy.stats(compiled).graph_count == 1
    assert _live_activations() == 0
    del out


class Pairs(torch.nn.Module):
    """Each step returns its activations in a tuple the caller unpacks and drops."""

    STEPS = 300

    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(4, 7)

    def pair(self, h):
        return (h * 0.5, h.tanh())

    def forward(self, x):
        h = self.inp(x)
        for _ in range(self.STEPS):
            a, b = self.pair(h)
            h = a + b
        return h.sum(1)


def test_activations_in_tuples_the_program_dropped_die_during_the_monitor_run(no_cyclic_gc, monkeypatch):
    """The run's node of a tuple it made lets go of it once nothing else holds it, so the
    activations in it die during the run as in eager, not when the run ends (without that, all
    3 x 300 would be alive at the last step)."""
    from magpy.monitor.run import Monitor

    seen, steps, leave = [], [0], Monitor.leave_frame

    def counting(self, frame, value):
        leave(self, frame, value)
        if frame.f_code is Pairs.pair.__code__:
            steps[0] += 1
            if steps[0] % 25 == 0:
                seen.append(_live_activations())

    monkeypatch.setattr(Monitor, "leave_frame", counting)
    net = Pairs()
    compiled = magpy.compile(net, backend="eager")
    x = torch.randn(2, 4)
    out = compiled(x)
    monkeypatch.undo()
    assert magpy.stats(compiled).monitor_runs == 1
    torch.testing.assert_close(out, net(x))
    assert steps[0] == Pairs.STEPS and len(seen) == Pairs.STEPS // 25
    assert max(seen) < 24, seen   # (a scan per 4 tuples made while few are alive: a few dead ones wait for it)


def test_explain_keeps_nothing_of_the_run(no_cyclic_gc):
    net = Net()
    alive = weakref.ref(net)
    weight = weakref.ref(net.body[0].weight)
    x = torch.randn(2, 4)
    ex = magpy.explain(net)(x)
    assert ex.graph_count == 1
    del ex, net
    assert alive() is None and weight() is None


def test_a_record_keeps_no_argument_tensor_for_its_guard_text(no_cyclic_gc):
    """The guards' words are said when first read; what waits for that holds what the call
    found of an argument tensor (shape, strides, dtype), not the tensor."""
    net = Net()
    compiled = magpy.compile(net, backend="eager")
    x = torch.randn(3, 4)
    arg = weakref.ref(x)
    compiled(x)
    del x
    assert arg() is None
    (record,) = magpy.records(compiled)
    assert "shape=(3, 4)" in record.guards_text and "requires_grad=False" in record.guards_text
    assert "is <Sequential" in record.guards_text or "type(self.body) is Sequential" in record.guards_text, record.guards_text


def test_a_dropped_compiled_module_frees_its_module_and_records(no_cyclic_gc):
    net = Net()
    alive = weakref.ref(net)
    compiled = magpy.compile(net, backend="eager")
    x = torch.randn(2, 4)
    first, second = compiled(x), compiled(x)     # a monitor run, then a guard hit
    assert magpy.stats(compiled).guard_hits == 1
    torch.testing.assert_close(first, second)
    del compiled, net
    assert alive() is None


def _collector_on_after_first_call(program, *args) -> bool:
    """Whether the cyclic collector is on after the first (monitored) call of ``program``."""
    cf = magpy.compile(program, backend="eager")
    try:
        cf(*args)
    except ValueError:
        pass
    return gc.isenabled()


def test_the_cyclic_collector_is_on_again_after_every_kind_of_first_call():
    """The monitor run pauses the collector (finalizers of unrelated objects would run inside
    it, monitored); every way a first call ends turns it on again (recorded, raised, gave up,
    split), and a collector the caller turned off stays off."""
    def recorded(x):
        return x * 2

    def raises(x):
        y = x + 1
        raise ValueError(y.shape)

    def broken(x):
        return torch.tensor(x.tolist()) + 1   # (a value MagPy does not follow into a graph)

    def splits(x):
        bucket = bisect.bisect([-1.0, 0.0, 1.0], x.mean().item())   # (a native on a tensor's value)
        return x * bucket + 1

    assert gc.isenabled()
    for program in (recorded, raises, broken, splits):
        assert _collector_on_after_first_call(program, torch.randn(3)), program.__name__
        magpy.reset()
    gc.disable()
    try:
        assert not _collector_on_after_first_call(recorded, torch.randn(3))
    finally:
        gc.enable()

