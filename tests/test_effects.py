"""Replayed effects (print to a file, logging, sleep) and text formatted from tensor values: one
graph, one monitor run, the call's values in the output (magpy/replayed_effects.py, magpy/monitor/scalars.py)."""
from __future__ import annotations

import io
import logging
import sys
import time

import torch
import torch.nn as nn
from conftest import same

import magpy


class _Keep(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, r):
        self.records.append((r.levelname, r.getMessage(), r.funcName, r.lineno, r.pathname))


def _logger(name):
    lg = logging.getLogger(name)
    lg.propagate = False
    lg.setLevel(logging.DEBUG)
    keep = _Keep()
    lg.addHandler(keep)
    return lg, keep


def _run(cm, fn, calls, make_input):
    for i in range(calls):
        x = make_input(i)
        assert same(cm(x), fn(x))


def test_logging_in_a_submodule_is_one_graph_with_the_callers_file_and_line():
    log, keep = _logger("magpy.test.effects.sub")

    class Sub(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            log.info("mean %.4f", y.mean().item())
            log.debug(f"max {y.max().item():.3f} rows {y.shape[0]}")
            return y.relu()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()

        def forward(self, x):
            return self.sub(x) * 2

    torch.manual_seed(0)
    m = M()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
            got, n = cm(x), len(keep.records)
            compiled_records = keep.records[n - 2:]
            want = m(x)
            assert same(got, want)
            assert compiled_records == keep.records[-2:]   # same messages, function, line and file
    assert keep.records[0][2] == "forward" and keep.records[0][4] == __file__
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.guard_hits, st.fallbacks, st.unheld) == (1, 1, 3, 0, 0)
    # the logger's level is read when the call runs: raised, nothing is logged, as in eager
    log.setLevel(logging.WARNING)
    n = len(keep.records)
    with torch.no_grad():
        cm(torch.randn(2, 4))
    assert len(keep.records) == n and magpy.stats(cm).monitor_runs == 1


def test_replacing_the_logger_or_the_file_is_a_miss():
    a, keep_a = _logger("magpy.test.effects.a")
    b, keep_b = _logger("magpy.test.effects.b")
    box = {"log": a}
    buf = io.StringIO()
    state = {"file": buf}

    def f(x):
        y = x + 1
        box["log"].warning("s=%s", "%.2f" % y.sum().item())   # noqa: UP031 - the user's spelling under test
        print("max", y.max(), file=state["file"])
        return y

    cm = magpy.compile(f, backend="eager")
    _run(cm, f, 2, lambda i: torch.full((3,), float(i)))
    assert [r[1] for r in keep_a.records] == ["s=3.00", "s=3.00", "s=6.00", "s=6.00"]
    box["log"] = b
    other = io.StringIO()
    state["file"] = other
    x = torch.full((3,), 5.0)
    assert same(cm(x), x + 1)
    assert [r[1] for r in keep_b.records] == ["s=18.00"] and len(keep_a.records) == 4
    assert other.getvalue() == "max tensor(6.)\n"
    assert buf.getvalue() == "max tensor(1.)\n" * 2 + "max tensor(2.)\n" * 2
    assert magpy.stats(cm).monitor_runs == 2


def test_print_to_standard_error_and_sleep_are_replayed(capsys):
    def f(x):
        y = x * 2
        print(f"total {y.sum().item():.1f}", file=sys.stderr)
        time.sleep(0)
        return y

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        cm(torch.full((2,), float(i)))
    assert capsys.readouterr().err == "total 0.0\ntotal 4.0\ntotal 8.0\n"
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.guard_hits) == (1, 1, 2)


def test_text_from_tensor_values_is_a_graph_node_and_plain_str_outside():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.msg = ""

        def forward(self, x):
            s = x.std().item()
            self.msg = "std {:.2f} / mean %s".format(s) % str(x.mean().item())   # noqa: UP031,UP032 - under test
            return x * 2, f"{s!r:>12}", ", ".join([f"{v:.1f}" for v in (s, x.max().item())]), repr(x[:2])

    m = M()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        x = torch.randn(5, generator=torch.Generator().manual_seed(i))
        got = cm(x)
        msg = m.msg
        want = m(x)
        assert same(got, want) and msg == m.msg
        assert type(msg) is str and all(type(t) is str for t in got[1:])
    ex = magpy.explain(M())(x)
    assert ex.graph_count == 1 and ex.assumptions == [] and not ex.dynamic
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.unheld) == (1, 1, 0)


def test_text_used_as_a_key_or_in_a_branch_is_assumed():
    counts = {}

    def f(x):
        key = f"{x.sum().item():.0f}"
        counts[key] = counts.get(key, 0) + 1
        return x + 1

    cm = magpy.compile(f, backend="eager")
    for v in (1.0, 2.0, 1.0, 3.0):
        cm(torch.tensor([v]))
    assert counts == {"1": 2, "2": 1, "3": 1}
    ex = magpy.explain(f)(torch.tensor([1.0]))
    assert len(ex.assumptions) == 1 and "'1'" in ex.assumptions[0]


def test_text_without_a_backend_that_takes_values_is_assumed():
    # TorchScript compiles for fixed values: the formatted number is an assumption (a record per value)
    def f(x):
        return x + 1, f"{x.sum().item():.1f}"

    cm = magpy.compile(f, backend="torchscript")
    for v in (1.0, 2.0, 1.0):
        out = cm(torch.tensor([v]))
        assert out[1] == f"{v:.1f}"
    assert magpy.stats(cm).records == 2


def test_magpy_logs_stay_quiet_under_a_programs_basic_config(capsys):
    root = logging.getLogger()
    old_level, handler = root.level, logging.StreamHandler(sys.stdout)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        cm = magpy.compile(lambda x: x + 1, backend="eager")
        cm(torch.ones(2))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert "guards of record" not in capsys.readouterr().out


def test_print_of_a_tensor_with_grad_shows_eagers_grad_fn(capsys):
    lin = nn.Linear(3, 3)

    def f(x):
        y = lin(x)
        print("loss", y.sum(), round(y.mean().item(), 3))
        return y

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        x = torch.randn(2, 3, generator=torch.Generator().manual_seed(i))
        cm(x)
        got = capsys.readouterr().out
        f(x)
        assert got == capsys.readouterr().out and "grad_fn=<SumBackward0>" in got
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.guard_hits) == (1, 1, 2)


def test_get_logger_inside_forward_is_the_registrys_logger():
    name = "magpy.test.effects.getlogger"
    lg, keep = _logger(name)

    def f(x):
        y = x * 2
        logging.getLogger(name).info("sum %.1f", y.sum().item())
        return y

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        cm(torch.full((2,), float(i)))
    assert [r[1] for r in keep.records] == ["sum 0.0", "sum 4.0", "sum 8.0"]
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.guard_hits) == (1, 1, 2)
    # another logger registered under that name: the registry entry is guarded
    other, keep2 = _logger(name + ".other")
    logging.Logger.manager.loggerDict[name] = other
    try:
        cm(torch.ones(2))
    finally:
        logging.Logger.manager.loggerDict[name] = lg
    assert [r[1] for r in keep2.records] == ["sum 4.0"] and magpy.stats(cm).monitor_runs == 2


def test_print_of_a_parameter_from_outside_shows_its_repr_with_the_calls_values(capsys):
    lin = nn.Linear(2, 2)

    def f(x):
        print(lin.bias)
        return lin(x)

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        if i == 2:
            with torch.no_grad():
                lin.bias.add_(1)   # (changed in place between calls: the record holds, the text follows)
        cm(torch.ones(1, 2))
        got = capsys.readouterr().out
        f(torch.ones(1, 2))
        assert got == capsys.readouterr().out and got.startswith("Parameter containing:")
    assert magpy.stats(cm).monitor_runs == 1


def test_text_of_a_lifted_shape_is_a_graph_node(capsys):
    """``print(f"{x.shape}")``, ``str(x.shape)`` and ``"%d" % x.size(0)`` with lifted sizes: the
    text is made in the graph from the call's sizes (the ``torch.Size`` is rebuilt there), so the
    lengths of a stream share one record instead of one record per length."""
    def f(x):
        y = x * 2
        print(f"shape {x.shape} rows {'%d' % x.size(0)}")  # noqa: UP031 - %-formatting is what is under test
        return y, str(y.shape)

    cf = magpy.compile(f, backend="eager", dynamic=True)
    for n in (12, 15, 31, 20):
        x = torch.randn(n, 3)
        out = cf(x)
        got = capsys.readouterr().out
        ref = f(x)
        assert got == capsys.readouterr().out == f"shape torch.Size([{n}, 3]) rows {n}\n"
        assert out[1] == ref[1] == f"torch.Size([{n}, 3])" and type(out[1]) is str
    st = magpy.stats(cf)
    assert (st.monitor_runs, st.records, st.unheld, st.guard_hits) == (1, 1, 0, 3), st
