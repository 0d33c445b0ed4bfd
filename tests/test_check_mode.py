"""Check mode (magpy.check): every call runs eagerly, the record MagPy would have used is
evaluated on a sandbox beside it and compared with what eager returned and left."""
import functools
import random
import re
import types
import warnings

import pytest
import torch

import magpy
from magpy.guards import ValueGuard
from magpy.monitor.reads import Reads

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
    add = Reads.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe().endswith(".scale"):
            return
        add(self, guard)

    monkeypatch.setattr(Reads, "add_guard", add_guard)


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
    add = Reads.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe() == "alpha":
            return
        add(self, guard)

    monkeypatch.setattr(Reads, "add_guard", add_guard)

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
    add = Reads.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe().endswith(".step"):
            return
        add(self, guard)

    monkeypatch.setattr(Reads, "add_guard", add_guard)

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


# -- a checked program's every observable is eager's ------------------------------------------------------
# Each program runs N calls compiled with check=True and N calls plainly, from the same start;
# what it leaves outside (class and function attributes, a cache's statistics, copy hooks that
# count, the random generators, prints, a global list, hook counts) must be the same.

N = 6


class Bumped:
    calls = 0


def bumped_helper(x):
    bumped_helper.calls += 1
    return x + 1


bumped_helper.calls = 0


@functools.cache
def cached_scale(k):
    return k * 3


class CopyCounted:
    """A user class whose copy hooks count every call: check mode must not run them."""

    deepcopies = 0
    getstates = 0
    setstates = 0

    def __init__(self):
        self.factor = 2.0

    def __deepcopy__(self, memo):
        CopyCounted.deepcopies += 1
        c = CopyCounted.__new__(CopyCounted)
        c.__dict__.update(self.__dict__)
        return c


class StateCounted:
    getstates = 0
    setstates = 0

    def __init__(self):
        self.seen = 0

    def __getstate__(self):
        StateCounted.getstates += 1
        return dict(self.__dict__)

    def __setstate__(self, state):
        StateCounted.setstates += 1
        self.__dict__.update(state)


COPY_COUNTED = CopyCounted()
STATE_COUNTED = StateCounted()
APPENDED: list = []


def everything(x):
    Bumped.calls += 1
    y = bumped_helper(x) * cached_scale(2) * COPY_COUNTED.factor
    STATE_COUNTED.seen = STATE_COUNTED.seen + 1
    APPENDED.append(Bumped.calls)
    print("step", Bumped.calls)
    return y + random.random() + torch.rand(1)


def _observed() -> tuple:
    return (Bumped.calls, bumped_helper.calls, cached_scale.cache_info(), CopyCounted.deepcopies,
            StateCounted.getstates, StateCounted.setstates, STATE_COUNTED.seen, list(APPENDED),
            random.getstate(), torch.get_rng_state())


def _reset_everything() -> None:
    Bumped.calls = 0
    bumped_helper.calls = 0
    cached_scale.cache_clear()
    CopyCounted.deepcopies = StateCounted.getstates = StateCounted.setstates = 0
    STATE_COUNTED.seen = 0
    APPENDED.clear()
    random.seed(0)
    torch.manual_seed(0)


def _run(fn, capsys) -> tuple:
    _reset_everything()
    x = torch.ones(2)
    outs = [fn(x) for _ in range(N)]
    printed = capsys.readouterr().out
    return outs, _observed(), printed


def test_checked_program_leaves_eager_state(capsys):
    ref_outs, ref_state, ref_printed = _run(everything, capsys)
    cf = magpy.compile(everything, backend="eager", check="raise")
    outs, state, printed = _run(cf, capsys)
    assert all(torch.equal(a, b) for a, b in zip(outs, ref_outs))
    (calls, fcalls, info, deepcopies, getstates, setstates, seen, appended, py_rng, torch_rng) = state
    assert (calls, fcalls, info, seen, appended) == ref_state[:3] + ref_state[6:8]
    assert (deepcopies, getstates, setstates) == (0, 0, 0)
    assert py_rng == ref_state[8] and torch.equal(torch_rng, ref_state[9])
    assert printed == ref_printed
    st = magpy.stats(cf)
    assert st.checks >= 2 and st.check_divergences == 0


def test_class_and_function_attribute_writes_are_compared(monkeypatch):
    """A record that would write a wrong class attribute (its guard on the value read is dropped)
    is found, though check mode never writes the class itself."""
    add = Reads.add_guard

    def add_guard(self, guard):
        if isinstance(guard, ValueGuard) and guard.source.describe().endswith(".calls"):
            return
        add(self, guard)

    monkeypatch.setattr(Reads, "add_guard", add_guard)

    class Ticks:
        calls = 0

    def tick(x):
        Ticks.calls = Ticks.calls + 1
        return x * 2

    cf = magpy.compile(tick, backend="eager", check=True)
    x = torch.ones(2)
    with pytest.warns(magpy.CheckError, match=r"outside state .*Ticks\.calls: eager has 2, the record would have 1"):
        for _ in range(3):
            cf(x)
    assert Ticks.calls == 3


def test_copy_hooks_of_state_the_record_writes_do_not_run():
    class Box:
        copies = 0

        def __init__(self):
            self.items = [0]

        def __deepcopy__(self, memo):
            Box.copies += 1
            return Box()

        def __getattr__(self, name):
            raise AttributeError(name)

    box = Box()

    def put(x):
        box.items[0] = box.items[0] + 1
        box.last = x * 2
        return x + 1

    cf = magpy.compile(put, backend="eager", check="raise")
    for _ in range(N):
        cf(torch.ones(2))
    assert Box.copies == 0 and box.items == [N] and torch.equal(box.last, torch.full((2,), 2.0))
    st = magpy.stats(cf)
    assert st.checks >= 2 and st.check_divergences == 0


def test_forward_hook_runs_once_per_call():
    runs = []

    def make():
        torch.manual_seed(0)
        m = torch.nn.Linear(3, 3)
        m.register_forward_hook(lambda mod, inp, out: runs.append(1))
        return m

    x = torch.randn(2, 3)
    m = make()
    for _ in range(N):
        m(x)
    eager_runs, runs[:] = len(runs), []
    cm = magpy.compile(make(), backend="eager", check=True)
    for _ in range(N):
        cm(x)
    assert len(runs) == eager_runs == N


def test_state_that_cannot_be_copied_without_the_programs_code_is_not_evaluated():
    """A record that writes a tensor subclass whose ``__torch_function__`` is the program's code is
    not evaluated on a copy (copying would run that code): only its guard is, and check_notes says why."""

    class Tagged(torch.Tensor):
        seen = 0

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    holder = types.SimpleNamespace(t=torch.ones(2).as_subclass(Tagged))

    def f(x):
        holder.t.add_(1)
        return x + 1

    cf = magpy.compile(f, backend="eager", check=True)
    for _ in range(3):
        cf(torch.ones(2))
    assert torch.equal(holder.t.as_subclass(torch.Tensor), torch.full((2,), 4.0))
    st = magpy.stats(cf)
    assert st.check_divergences == 0
    assert st.guard_hits == 2 and st.checks == 0
    assert any("Tagged tensor cannot be copied without running its __torch_function__" in n for n in st.check_notes)


# -- state whose copying or comparison would run the program's code --------------------------------------
# Each program keeps, on an outside object the record writes, objects whose hooks count every call;
# it runs plainly and compiled with check="raise" from the same start: what it observes (the hook
# counts too) must be the same, and no CheckError is raised.

def _eager_and_checked(build, calls: int = N):
    """``build()`` -> (f, observe, step): a fresh program. Runs it plainly, then compiled in check mode."""
    runs = []
    for checked in (False, True):
        f, observe, step = build()
        g = magpy.compile(f, backend="eager", check="raise") if checked else f
        seen = []
        for i in range(calls):
            step(i)
            seen.append((g(torch.ones(3)).tolist(), observe()))
        runs.append(seen)
    return runs[0], runs[1], magpy.stats(g)


class _Holder:
    pass


def _counting_key_class(counts: list):
    class Key:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            counts[0] += 1
            return hash(self.n)

        def __eq__(self, other):
            counts[0] += 100
            return type(other) is Key and other.n == self.n

    return Key


def _holder_program(fill, counts: list):
    """A record that reads ``h.scale`` and writes ``h.last``; ``fill(h)`` adds the state under test."""
    h = _Holder()
    h.scale = 2.0
    fill(h)

    def f(x):
        h.last = x.sum()
        return x * h.scale

    def step(i):
        if i == 3:
            h.scale = 3.0

    return f, lambda: list(counts), step


@pytest.mark.parametrize("kind", ["tuple key", "OrderedDict", "dict subclass", "set of tuples", "WeakKeyDictionary"])
def test_keys_holding_objects_with_the_programs_hash_are_not_hashed(kind):
    import collections
    import weakref

    class Table(dict):
        pass

    def build():
        counts = [0]
        key = _counting_key_class(counts)
        keep = [key(1)]

        def fill(h):
            h.keep = keep
            h.table = {"tuple key": lambda: {(keep[0], "a"): 2.0},
                       "OrderedDict": lambda: collections.OrderedDict({keep[0]: 2.0}),
                       "dict subclass": lambda: Table({keep[0]: 2.0}),
                       "set of tuples": lambda: {(keep[0], 1)},
                       "WeakKeyDictionary": lambda: weakref.WeakKeyDictionary({keep[0]: 2.0})}[kind]()
            counts[0] = 0
        return _holder_program(fill, counts)

    eager, checked, st = _eager_and_checked(build)
    assert checked == eager
    assert any("whose __hash__ is the program's code" in n for n in st.check_notes)
    assert st.check_divergences == 0


def test_slots_object_with_the_programs_setattr_is_copied_without_it():
    def build():
        counts = [0, 0]

        class Point:
            __slots__ = ("a", "b")

            def __init__(self):
                object.__setattr__(self, "a", 1.0)
                object.__setattr__(self, "b", 2.0)

            def __setattr__(self, name, value):
                counts[0] += 1
                object.__setattr__(self, name, value)

            def __delattr__(self, name):
                counts[1] += 1
                object.__delattr__(self, name)

        return _holder_program(lambda h: setattr(h, "p", Point()), counts)

    eager, checked, st = _eager_and_checked(build)
    assert checked == eager and st.checks >= 2 and st.check_divergences == 0


def test_container_subclasses_are_compared_through_the_builtins_methods():
    def build():
        counts = [0, 0, 0, 0]

        class Items(list):
            def __len__(self):
                counts[0] += 1
                return list.__len__(self)

            def __iter__(self):
                counts[1] += 1
                return list.__iter__(self)

            def __getitem__(self, i):
                counts[2] += 1
                return list.__getitem__(self, i)

        class Table(dict):
            def __iter__(self):
                counts[1] += 10
                return dict.__iter__(self)

            def __getitem__(self, k):
                counts[2] += 10
                return dict.__getitem__(self, k)

            def __contains__(self, k):
                counts[3] += 1
                return dict.__contains__(self, k)

            def items(self):
                counts[3] += 10
                return dict.items(self)

            def keys(self):
                counts[3] += 100
                return dict.keys(self)

        def fill(h):
            h.items = Items([1.0, 2.0])
            h.table = Table(a=1.0, b=[3.0])
        return _holder_program(fill, counts)

    eager, checked, st = _eager_and_checked(build)
    assert checked == eager and st.checks >= 2 and st.check_divergences == 0


def test_class_property_and_getattribute_of_the_program_do_not_run():
    """``isinstance`` reads ``__class__`` (a property may answer) and attribute reads run a
    ``__getattribute__``, on the object or on its class (a metaclass's): the checker reads types."""
    def build():
        counts = [0, 0, 0]

        class Masked:
            def __init__(self):
                self.v = 1.0

            @property
            def __class__(self):
                counts[0] += 1
                return Masked

        class Watched:
            def __init__(self):
                self.v = 1.0

            def __getattribute__(self, name):
                counts[1] += 1
                return object.__getattribute__(self, name)

        class Meta(type):
            def __getattribute__(cls, name):
                counts[2] += 1
                return type.__getattribute__(cls, name)

        class Configured(metaclass=Meta):
            def __init__(self):
                self.v = 1.0

        def fill(h):
            h.masked, h.watched, h.configured = Masked(), Watched(), Configured()
            counts[:] = [0, 0, 0]
        return _holder_program(fill, counts)

    eager, checked, st = _eager_and_checked(build)
    assert checked == eager and st.checks >= 2 and st.check_divergences == 0


def test_number_subclasses_in_outside_state_are_compared_as_objects():
    def build():
        counts = [0]

        class Fraction(float):
            def __eq__(self, other):
                counts[0] += 1
                return float.__eq__(self, other)

            def __ne__(self, other):
                counts[0] += 1
                return float.__ne__(self, other)

            __hash__ = float.__hash__

        class Count(int):
            pass

        class Name(str):
            pass

        def fill(h):
            h.fraction, h.count, h.name = Fraction(1.5), Count(3), Name("abc")
            h.count.tag = "kept"
        return _holder_program(fill, counts)

    eager, checked, st = _eager_and_checked(build)
    assert checked == eager and st.checks >= 2 and st.check_divergences == 0


def test_cached_call_with_an_argument_of_the_programs_hash_is_not_looked_up():
    """The cache's table would hash and compare the argument (the program's code): the record is not
    evaluated (a check note says why); check mode adds no hash beyond what MagPy's own run makes."""
    def build():
        counts = [0]
        key = _counting_key_class(counts)(2)

        @functools.lru_cache(maxsize=8)
        def table(k):
            return 2.0

        def f(x):
            return x * table(key)

        return f, lambda: [counts[0], table.cache_info()], lambda i: None

    _, checked, st = _eager_and_checked(build)
    f, observe, _ = build()
    plain = magpy.compile(f, backend="eager")
    assert [(plain(torch.ones(3)).tolist(), observe()) for _ in range(N)] == checked
    assert st.guard_hits == N - 1 and st.checks == 0
    assert any("the record calls the cached `" in n and "__hash__ is the program's code" in n for n in st.check_notes)


class Chooser(torch.nn.Module):
    reprs = 0
    eqs = 0

    class Choice:
        def __init__(self, v):
            self.v = v

        def __repr__(self):
            Chooser.reprs += 1
            return f"Choice({self.v})"

        def __eq__(self, other):
            Chooser.eqs += 1
            return self is other

        __hash__ = object.__hash__

    def __init__(self):
        super().__init__()
        self.scale = 0
        self.choices = [Chooser.Choice(1.0), Chooser.Choice(2.0)]

    def forward(self, x):
        return x + 1, self.choices[self.scale]


def test_report_runs_no_repr_or_eq_of_the_program(weak_scale_guard):
    m = Chooser()
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.ones(2)
    cm(x)
    cm(x)
    m.scale = 1
    with pytest.warns(magpy.CheckError, match=r"return value\[1\]: eager has <.*Choice object at 0x[0-9a-f]+>, "
                                              r"the record would have the outside object self\.choices\[0\]"):
        _, got = cm(x)
    assert got is m.choices[1]
    assert Chooser.reprs == 0 and Chooser.eqs == 0


class Tripler(torch.nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.scale = 1.0
        self.factor = factor
        self.last = None

    def forward(self, x):
        self.last = self.scale * self.factor
        return x + 1


@pytest.mark.parametrize("factor, scale, said", [(3.0, 1.000001, "eager has 3.00000299"),
                                                 (0.0, -1.0, "eager has -0.0, the record would have 0.0")])
def test_python_floats_are_compared_exactly(weak_scale_guard, factor, scale, said):
    """With the eager backend a Python float the record computes is eager's exactly (a zero's sign too)."""
    m = Tripler(factor)
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.ones(2)
    cm(x)
    cm(x)
    m.scale = scale
    with pytest.warns(magpy.CheckError, match=rf"outside state self\.last: {re.escape(said)}"):
        cm(x)
    assert m.last == scale * factor


def test_check_mode_compares_tensors_by_the_harness_rule(weak_scale_guard, monkeypatch):
    """One closeness rule on tensor values: check mode calls experiments.compare.tensor_gap, with
    check mode's own bar (magpy.check.tolerance for the backend)."""
    from experiments import compare
    from magpy.check_compare import _Compare, tolerance

    calls = []
    real = compare.tensor_gap

    def spy(e, a, rtol, atol):
        calls.append((rtol, atol))
        return real(e, a, rtol, atol)

    monkeypatch.setattr(compare, "tensor_gap", spy)
    torch.manual_seed(0)
    m = Scaled()
    cm = magpy.compile(m, backend="eager", check=True)
    x = torch.randn(3, 4)
    cm(x)
    cm(x)
    m.scale = 3.0
    with pytest.warns(magpy.CheckError) as caught:
        cm(x)
    assert "return value: tensor values differ (largest difference" in str(caught[0].message)
    assert calls and set(calls) == {tolerance(torch.float32, "eager")}

    cmp = object.__new__(_Compare)
    cmp.backend = "eager"
    nan = float("nan")
    assert cmp.tensor(torch.tensor([1.0, nan]), torch.tensor([1.0, nan]), "x") is None
    assert cmp.tensor(torch.tensor([1.0, nan]), torch.tensor([1.0, 2.0]), "x") == \
        "x: tensor values differ (a NaN facing a number)"
    assert cmp.tensor(torch.tensor([1.0]), torch.tensor([1.0 + 1e-7]), "x") is None
    assert cmp.tensor(torch.tensor([1, 2]), torch.tensor([1, 3]), "x") == "x: tensor values differ"
