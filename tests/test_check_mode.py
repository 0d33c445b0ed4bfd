"""Check mode (magpy.check): every call runs eagerly, the record MagPy would have used is
evaluated on a sandbox beside it and compared with what eager returned and left."""
import warnings

import pytest
import torch

import magpy
from magpy.guards import ValueGuard
from magpy.monitor import Monitor

COUNTER = 0
LOG: list = []


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x):
        return self.lin(x).relu() * self.scale


def _eager(m, x):
    with torch.no_grad():
        return m.lin(x).relu() * m.scale


@pytest.fixture
def weak_scale_guard(monkeypatch):
    """MagPy with one guard dropped: the value guard on an attribute named ``scale`` (a bug)."""
    add = Monitor.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe().endswith(".scale"):
            return
        add(self, guard)

    monkeypatch.setattr(Monitor, "add_guard", add_guard)


def test_correct_program_no_report():
    torch.manual_seed(0)
    m = Scaled()
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", magpy.CheckError)
        for i in range(5):
            if i == 3:
                m.scale = 3.0   # (guarded: a miss, a new record, then checked hits)
            out = cm(x)
            assert torch.equal(out, m.lin(x).relu() * m.scale)
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.guard_hits == 3 and st.checks == 3
    assert st.check_divergences == 0 and st.check_reports == []
    assert st.calls == 5


def test_weakened_guard_warns_and_user_gets_eager(weak_scale_guard):
    torch.manual_seed(0)
    m = Scaled()
    x = torch.randn(3, 4)
    # without check mode, the weakened guard makes MagPy wrong (what check mode must find)
    plain = magpy.compile(m, backend="eager")
    plain(x)
    m.scale = 5.0
    assert not torch.allclose(plain(x), _eager(m, x))
    m.scale = 2.0

    cm = magpy.compile(m, backend="eager", check=True)
    cm(x)
    assert cm(x) is not None   # a checked hit, no divergence
    m.scale = 3.0
    with pytest.warns(magpy.CheckError) as caught:
        out = cm(x)
    assert torch.equal(out, _eager(m, x))   # the user gets eager's result
    msg = str(caught[0].message)
    assert "return value" in msg and "tensor values differ" in msg
    assert "`self.scale` was 2.0 when the record was made and is 3.0 now" in msg
    assert "test_check_mode.py:" in msg and "no guard of the record checks it" in msg
    st = magpy.stats(cm)
    assert st.check_divergences == 1 and st.checks == 2 and st.check_reports == [msg]


def test_check_raise(weak_scale_guard):
    torch.manual_seed(0)
    m = Scaled()
    cm = magpy.compile(m, backend="eager", check="raise")
    x = torch.randn(3, 4)
    cm(x)
    cm(x)
    m.scale = 4.0
    with pytest.raises(magpy.CheckError, match=r"self\.scale"):
        cm(x)
    assert magpy.stats(cm).check_divergences == 1


def test_env_var_turns_check_on(monkeypatch, weak_scale_guard):
    torch.manual_seed(0)
    m = Scaled()
    x = torch.randn(3, 4)
    monkeypatch.setenv("MAGPY_CHECK", "1")
    cm = magpy.compile(m, backend="eager")
    off = magpy.compile(m, backend="eager", check=False)   # (the option overrides the environment)
    monkeypatch.delenv("MAGPY_CHECK")   # read when compiling: the compiled callable stays in check mode
    cm(x)
    cm(x)
    off(x)
    m.scale = 6.0
    with pytest.warns(magpy.CheckError):
        assert torch.equal(cm(x), _eager(m, x))
    assert magpy.stats(cm).checks == 2
    assert magpy.stats(off).checks == 0
    monkeypatch.setenv("MAGPY_CHECK", "raise")
    m.scale = 2.0
    raising = magpy.compile(m, backend="eager")
    raising(x)
    m.scale = 7.0
    with pytest.raises(magpy.CheckError):
        raising(x)


class Writer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("steps", torch.zeros(()))
        self.phase = 0
        self.seen = []

    def forward(self, x):
        global COUNTER
        self.steps += 1
        self.phase = 1 - self.phase
        COUNTER = 1 - COUNTER
        y = self.lin(x) + self.phase
        LOG.append(y.sum())
        self.seen.append(self.phase)
        return y


def test_writes_outside_not_applied_twice():
    global COUNTER
    torch.manual_seed(0)
    n = 7
    COUNTER = 0
    LOG.clear()
    m = Writer()
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.randn(2, 4)
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", magpy.CheckError)
        for _ in range(n):
            outs.append(cm(x))
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.checks == n - 2 and st.check_divergences == 0
    # the same program run eagerly n times from the same start
    torch.manual_seed(0)
    ref = Writer()
    ref_log, ref_counter = [], 0
    for _ in range(n):
        ref.steps += 1
        ref.phase = 1 - ref.phase
        ref_counter = 1 - ref_counter
        y = ref.lin(x) + ref.phase
        ref_log.append(y.sum())
        ref.seen.append(ref.phase)
    assert m.steps.item() == n and m.phase == ref.phase and m.seen == ref.seen
    assert COUNTER == ref_counter
    assert len(LOG) == n and all(torch.allclose(a, b) for a, b in zip(LOG, ref_log))
    assert all(torch.allclose(o, (ref.lin(x) + p).detach()) for o, p in zip(outs, ref.seen))


def test_weakened_guard_on_a_float_argument(monkeypatch):
    add = Monitor.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe() == "alpha":
            return
        add(self, guard)

    monkeypatch.setattr(Monitor, "add_guard", add_guard)

    def f(x, alpha):
        return x * alpha + 1

    cf = magpy.compile(f, backend="eager", check="raise")
    x = torch.randn(3)
    cf(x, 0.5)
    assert torch.equal(cf(x, 0.5), x * 0.5 + 1)
    with pytest.raises(magpy.CheckError, match=r"`alpha` was 0.5 when the record was made and is 2.0 now"):
        cf(x, 2.0)


def test_outside_write_divergence_names_attribute(monkeypatch):
    """A weakened guard whose record writes the wrong value outside: the report names the attribute."""
    add = Monitor.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe().endswith(".step"):
            return
        add(self, guard)

    monkeypatch.setattr(Monitor, "add_guard", add_guard)

    class Stepper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.step = 1
            self.last = None

        def forward(self, x):
            self.last = self.step * 10
            return x + 1

    m = Stepper()
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.randn(2)
    cm(x)
    cm(x)
    m.step = 2
    with pytest.warns(magpy.CheckError, match=r"outside state self\.last: eager has 20, the record would have 10"):
        cm(x)
    assert m.last == 20


def test_prints_not_doubled(capsys):
    def f(x):
        y = x * 2
        print("sum", y.sum().item())
        return y

    cf = magpy.compile(f, backend="eager", check=True)
    x = torch.ones(2)
    for _ in range(3):
        cf(x)
    assert capsys.readouterr().out.count("sum 4.0") == 3
    st = magpy.stats(cf)
    assert st.checks == 2 and any("print" in n for n in st.check_notes)


def test_state_holding_a_non_leaf_tensor_is_copied():
    """A module that keeps a tensor with a history (deepcopy refuses those) is still checked."""

    class Keeps(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.memory = self.lin(torch.ones(1, 3))   # (a non-leaf tensor, kept outside)

        def forward(self, x):
            return self.lin(x) + self.memory

    m = Keeps()
    cm = magpy.compile(m, backend="eager", check="raise")
    x = torch.randn(2, 3)
    for _ in range(3):
        out = cm(x)
    assert torch.allclose(out, m.lin(x) + m.memory)
    st = magpy.stats(cm)
    assert st.checks == 2 and not any("could not be copied" in n for n in st.check_notes)
