"""Monitor-run fallbacks and Python features user models use: nothing raised where eager runs (a
MagPy bug in or after the monitor run falls back to eager; the program's own errors still
propagate), legacy constructors on list data, attribute writes on tensors made in the call,
records that only draw and print. Each compiled program is compared with eager on every call."""
from __future__ import annotations

import logging

import numpy as np
import torch
import torch.nn as nn
from conftest import same

import magpy
import magpy.pipeline as pipeline


class Counting(nn.Module):
    """Changes outside state on every call, so a call that ran twice shows."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.lin(x) * self.calls


def _eager_twin(m):
    twin = Counting()
    twin.load_state_dict(m.state_dict())
    return twin


def _three_calls_warn_once(caplog, warning: str):
    """Three calls of a compiled counting module equal eager's, the module counted each call once
    (the monitored call did not run again eagerly), and MagPy warned ``warning`` once."""
    m = Counting()
    ref = _eager_twin(m)
    cm = magpy.compile(m, backend="eager")
    with caplog.at_level(logging.WARNING, logger="magpy"):
        for _ in range(3):
            x = torch.randn(2, 4)
            assert same(cm(x), ref(x))
            assert m.calls == ref.calls
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warning in warnings[0].getMessage()
    return cm


def test_magpy_bug_after_the_monitor_run_returns_the_runs_result(monkeypatch, caplog):
    def broken(self, *a, **k):
        raise AttributeError("'NoneType' object is not callable (injected)")

    monkeypatch.setattr(pipeline.MonitorRun, "keep_arms", broken)
    cm = _three_calls_warn_once(caplog, "internal MagPy error while recording the monitor run")
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.fallbacks == 2


def test_magpy_bug_starting_the_monitor_run_runs_eagerly(monkeypatch, caplog):
    def broken(self, *a, **k):
        raise RuntimeError("injected")

    monkeypatch.setattr(pipeline.Runner, "start", broken)
    _three_calls_warn_once(caplog, "internal MagPy error while starting the monitor run")


def test_program_errors_still_propagate_from_the_monitor_run():
    def f(x):
        return x @ torch.ones(3, 3)

    cm = magpy.compile(f, backend="eager")
    try:
        cm(torch.ones(2, 4))
    except RuntimeError as e:
        assert "shapes cannot be multiplied" in str(e)
    else:
        raise AssertionError("the program's error was swallowed")


def _one_graph(fn, calls):
    cm = magpy.compile(fn, backend="eager")
    for args in calls:
        a, b = fn(*args), cm(*args)
        assert same(a, b)
        assert getattr(a, "__dict__", None) == getattr(b, "__dict__", None)
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.splits == 0 and st.graph_count == 1, st.break_reasons
    return cm


def test_legacy_constructor_of_numpy_numbers_and_tensors_is_one_graph():
    def f(x):
        stats = torch.FloatTensor([x.mean(), x[0, :1], np.float32(0.25)])
        idx = torch.LongTensor([[x.shape[0], torch.tensor(1)]])
        return x * stats[0] + stats.sum(), idx

    _one_graph(f, [(torch.randn(2, 3),) for _ in range(3)])


def test_legacy_constructor_refuses_what_it_cannot_read():
    def f(x):   # a float tensor into LongTensor: eager raises, as the compiled call must
        return torch.LongTensor([x[0], 1])

    cm = magpy.compile(f, backend="eager")
    for _ in range(2):
        try:
            cm(torch.randn(2))
        except TypeError as e:
            assert "integer tensors" in str(e)
        else:
            raise AssertionError("LongTensor of a float tensor did not raise")


def test_attribute_written_on_a_tensor_made_in_the_call_is_on_the_output():
    def f(x, flag):
        out = x * 2
        out.stop_gradient = flag
        out.my_tag = "x"
        return (out + 1 if out.stop_gradient else out), out

    _one_graph(f, [(torch.randn(2), True) for _ in range(3)])


def test_record_without_graph_replaying_a_drawn_number_does_not_call_a_missing_graph(capsys):
    import random

    def f(x):
        print("temperature", random.random())
        return x

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        random.seed(i)
        f(torch.ones(2))
        random.seed(i)
        cm(torch.ones(2))   # raised TypeError: 'NoneType' object is not callable on the first hit
        out = capsys.readouterr().out.splitlines()
        assert len(out) == 2 and out[0] == out[1]
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 2


def test_record_that_only_prints_is_held(capsys):
    def f(x):
        print("step")
        return x

    cm = magpy.compile(f, backend="eager")
    for _ in range(3):
        cm(torch.ones(2))
    assert capsys.readouterr().out == "step\n" * 3
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 2 and st.unheld == 0
