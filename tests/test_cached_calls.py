"""``functools.lru_cache`` functions called by the program: a record holds while the cache
answers the call without running the body, with the run's result; the mock makes the call
again, a hit as in eager. Each program is compiled, compared with eager over calls that change
the cache from outside, and counted (monitor runs, records)."""
from __future__ import annotations

import functools
import logging

import torch
import torch.nn as nn
from conftest import same

import magpy


def test_a_cached_probe_after_a_write_outside_is_one_record():
    seen = []
    log = {}

    @functools.lru_cache
    def available():
        seen.append(1)
        return True

    def f(x):
        log["rows"] = x.shape[0]                     # a write outside, before the cached call
        if available():
            x = x * 2
        return x + 1

    cm = magpy.compile(f, backend="eager")
    for _ in range(4):
        x = torch.randn(2, 3)
        assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.monitor_runs == 1 and st.records == 1 and st.guard_hits == 3
    assert seen == [1] and available.cache_info().misses == 1 and available.cache_info().hits == 7


def test_a_cleared_cache_is_a_miss_whose_run_reads_the_state_after_the_call_wrote_it():
    config = {"mode": "a"}

    @functools.cache
    def pick(name):
        return 2.0 if config["mode"] == "a" else 5.0

    def f(x, mode):
        config["mode"] = mode
        return x * pick("scale")

    cm = magpy.compile(f, backend="eager")
    x = torch.ones(3)
    assert same(cm(x, "a"), x * 2) and same(cm(x, "b"), x * 2)   # eager keeps the cached 2.0
    pick.cache_clear()
    assert same(cm(x, "b"), x * 5)                                 # the body ran after the write
    assert same(cm(x, "b"), x * 5)
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.unheld == 0
    assert st.monitor_runs == 3 and st.guard_hits == 1              # ("a" then "b": two records)
    assert pick.cache_info().hits == 1 and pick.cache_info().misses == 1   # (as eager: cleared, then one hit)


def test_a_bounded_cache_refilled_with_another_result_misses_without_an_extra_hit():
    table = {"a": 2.0}

    @functools.lru_cache(maxsize=4)
    def factor(name):
        return table[name]

    def f(x):
        return x * factor("a")

    cm = magpy.compile(f, backend="eager")
    x = torch.ones(3)
    assert same(cm(x), x * 2) and same(cm(x), x * 2)
    table["a"] = 7.0
    factor.cache_clear()
    factor("a")                                   # the cache answers 7.0 before the call
    assert same(cm(x), x * 7) and same(cm(x), x * 7)
    st = magpy.stats(cm)
    assert st.records == 2 and st.monitor_runs == 2 and st.unheld == 0
    assert factor.cache_info().hits == 2          # the call's hits only, as in eager


def test_warning_once_on_a_logger_warns_once_and_records_once():
    messages = []

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    class Logger(logging.Logger):
        pass

    def warning_once(self, *args):
        self.warning(*args)

    Logger.warning_once = functools.lru_cache(None)(warning_once)
    log = Logger("magpy-test-warning-once")
    log.addHandler(Collect())
    log.propagate = False

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            log.warning_once("rows: %d", 2)
            return self.lin(x)

    m = M()
    cm = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(2, 3)
        assert same(cm(x), m(x))
    assert messages == ["rows: 2"]
    Logger.warning_once.cache_clear()
    assert same(cm(x), m.lin(x))                  # warned again, as eager warns after a clear
    assert messages == ["rows: 2", "rows: 2"]
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.monitor_runs == 2 and st.guard_hits == 2
