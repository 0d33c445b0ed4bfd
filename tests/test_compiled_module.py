"""The compiled module is a module; calls behave exactly like ``module(x)`` (hooks, ``__call__``,
exceptions); misses are safe across threads; stats counters mean one thing each."""
from __future__ import annotations

import copy
import logging
import pickle
import threading

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return self.head(self.block(x))


# -- the compiled module is a module ---------------------------------------------------------------------
def test_compiled_module_is_a_module_standing_in_for_the_original():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cm = magpy.compile(m, backend="eager")
    assert isinstance(cm, nn.Module) and isinstance(cm, magpy.CompiledModule)
    assert "magpy.compile(" in repr(cm) and "Linear" in repr(cm)
    assert cm.eval() is cm and not m.training and cm.training is False
    assert cm.train() is cm and m.training
    assert cm.train(False) is cm and not m.training
    assert list(cm.state_dict()) == list(m.state_dict()) == ["0.weight", "0.bias"]
    assert [id(p) for p in cm.parameters()] == [id(p) for p in m.parameters()]
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in m.named_parameters()]
    mods = list(cm.named_modules())
    assert mods[0] == ("", cm) and [n for n, _ in mods] == [n for n, _ in m.named_modules()]
    assert cm[0] is m[0] and len(cm) == 2 and list(cm) == list(m)
    # attribute reads and writes reach the original
    assert cm.training is m.training and cm._orig_mod is m
    cm.tag = "hello"
    assert m.tag == "hello" and cm.tag == "hello"
    cm.extra = nn.Linear(2, 2)
    assert "extra" in m._modules and "extra.weight" in cm.state_dict()
    del cm.extra
    assert "extra" not in m._modules
    assert "tag" in dir(cm)
    x = torch.randn(3, 4)
    for _ in range(3):
        assert same(cm(x), m(x))
    # state_dict round trip, with the original's keys
    sd = {k: torch.randn_like(v) for k, v in m.state_dict().items()}
    cm.load_state_dict(sd)
    assert all(torch.equal(m.state_dict()[k], v) for k, v in sd.items())
    for _ in range(2):
        assert same(cm(x), m(x))


def test_assigned_as_child_the_parent_calls_through_magpy():
    p = Net()
    keys = list(p.state_dict())
    names = [n for n, _ in p.named_parameters()]
    ref = copy.deepcopy(p)
    p.block = magpy.compile(p.block, backend="eager")
    assert isinstance(p.block, magpy.CompiledModule) and "block" in p._modules
    assert list(p.state_dict()) == keys and [n for n, _ in p.named_parameters()] == names
    p.load_state_dict(ref.state_dict())
    for _ in range(4):
        x = torch.randn(3, 4)
        assert same(p(x), ref(x))
    st = magpy.stats(p.block)
    assert st.monitor_runs == 1 and st.guard_hits == 3
    # module-wide methods reach the child and return what nn.Module returns
    assert p.to(torch.float64) is p and p.block._orig_mod[0].weight.dtype == torch.float64
    ref.to(torch.float64)
    x = torch.randn(3, 4, dtype=torch.float64)
    for _ in range(2):
        assert same(p(x), ref(x))
    assert p.block.half() is p.block and p.block[0].weight.dtype == torch.float16
    p.float()
    p.eval()
    assert not p.block._orig_mod.training and not p.block.training
    seen = []
    p.apply(lambda mod: seen.append(type(mod).__name__))
    assert "Linear" in seen and "Sequential" in seen     # apply reaches the original and its children


def test_copies_compile_their_own_copy():
    p = Net()
    p.block = magpy.compile(p.block, backend="eager")
    x = torch.randn(3, 4)
    p(x)
    p(x)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert isinstance(q.block, magpy.CompiledModule) and q.block._orig_mod is not p.block._orig_mod
        with torch.no_grad():
            q.block[0].weight.add_(1.0)   # the copy's own parameters are used, not the original's
        ref = copy.deepcopy(q)
        ref.block = ref.block._orig_mod
        for _ in range(3):
            assert same(q(x), ref(x))
        assert not same(q(x), p(x))


def test_compiled_child_inside_compiled_parent():
    p = Net()
    ref = copy.deepcopy(p)
    p.block = magpy.compile(p.block, backend="eager")
    cp = magpy.compile(p, backend="eager")
    for _ in range(4):
        x = torch.randn(2, 4)
        assert same(cp(x), ref(x))
    assert torch.equal(p.calls, ref.calls)
    assert magpy.stats(cp).guard_hits == 3
    magpy.reset()
    assert magpy.stats(cp).calls == 0
    ex = magpy.explain(cp)(torch.randn(2, 4))
    assert ex.graph_count == 1 and ex.break_reasons == []


# -- calls behave like module(x): __call__ overrides ----------------------------------------------------
class ActNorm(nn.Module):
    """Data-aware initialisation on the first call, in an overridden ``__call__``."""

    def __init__(self, d=4):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(d))
        self.initialized = False

    def __call__(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.scale.copy_(1.0 / (x.std(0) + 1e-6))
            self.initialized = True
        return super().__call__(x)

    def forward(self, x):
        return x * self.scale


def test_overridden_call_runs():
    m, ref = ActNorm(), ActNorm()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        x = torch.randn(5, 4) * (i + 1)
        assert same(cm(x), ref(x))
        assert m.initialized and same(m.scale.detach(), ref.scale.detach())
    assert magpy.stats(cm).guard_hits >= 1


# -- hooks -----------------------------------------------------------------------------------------------
def _pair():
    torch.manual_seed(1)
    m = Net()
    ref = copy.deepcopy(m)
    return m, ref


def test_hooks_registered_before_compiling_are_compiled_with_the_module():
    m, ref = _pair()
    seen = []

    def hook(mod, inputs, out):
        seen.append(type(mod).__name__)
        return out * 2

    h1 = m.register_forward_hook(hook)
    h2 = ref.register_forward_hook(hook)
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    for _ in range(3):
        assert same(cm(x), ref(x))
    assert seen == ["Net"] * 6   # the hook's side effect on every call, matched ones too
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 2 and st.fallbacks == 0 and st.break_reasons == []
    h1.remove()
    h2.remove()
    for _ in range(3):
        assert same(cm(x), ref(x))
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.guard_hits == 4 and len(seen) == 6   # the hooked record no longer matches
    assert torch.equal(m.calls, ref.calls)


def test_hooks_registered_after_records_exist_get_records_of_their_own():
    m, ref = _pair()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    for _ in range(2):
        assert same(cm(x), ref(x))
    assert magpy.stats(cm).records == 1

    def pre(mod, args):
        return (args[0] + 1,)

    def post(mod, args, out):
        return out - 3

    handles = [cm.register_forward_pre_hook(pre), m.register_forward_hook(post)]   # on either: same tables
    handles_ref = [ref.register_forward_pre_hook(pre), ref.register_forward_hook(post)]
    for _ in range(3):
        assert same(cm(x), ref(x))
    st = magpy.stats(cm)
    assert st.guard_hits == 3 and st.fallbacks == 0 and st.monitor_runs == 2
    for h in handles + handles_ref:
        h.remove()
    for _ in range(2):
        assert same(cm(x), ref(x))
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.guard_hits == 5     # the old record matches again
    assert torch.equal(m.calls, ref.calls)


@pytest.mark.parametrize("kind", ["forward", "forward_pre"])
def test_global_module_hooks_run(kind):
    import torch.nn.modules.module as mm

    m, ref = _pair()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    cm(x)
    ref(x)
    seen = []
    if kind == "forward":
        def hook(mod, inputs, out):
            seen.append(type(mod).__name__)
            return out + 1 if isinstance(out, torch.Tensor) else out
        handle = mm.register_module_forward_hook(hook)
    else:
        def hook(mod, args):
            seen.append(type(mod).__name__)
        handle = mm.register_module_forward_pre_hook(hook)
    try:
        for _ in range(2):
            n = len(seen)
            out = cm(x)
            compiled_seen = seen[n:]
            assert same(out, ref(x))
            assert compiled_seen == seen[n + len(compiled_seen):] and len(compiled_seen) == 5   # as eager ran them
    finally:
        handle.remove()
    for _ in range(2):
        assert same(cm(x), ref(x))
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 2 and st.fallbacks == 2
    assert torch.equal(m.calls, ref.calls)


# -- forwards the top frame must bind correctly ----------------------------------------------------------
class NoGradNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @torch.no_grad()
    def forward(self, x):
        return self.lin(x).relu()


class VarArgsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, *args, **kwargs):
        out = self.lin(args[0])
        for a in args[1:]:
            out = out + a
        return out * kwargs.get("scale", 1.0)


@pytest.mark.parametrize("cls", [NoGradNet, VarArgsNet])
def test_decorated_and_varargs_forward(cls):
    torch.manual_seed(0)
    m = cls()
    cm = magpy.compile(m, backend="eager")
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    for _ in range(3):
        if cls is VarArgsNet:
            assert same(cm(x, y, scale=2.0), m(x, y, scale=2.0))
            assert same(cm(x), m(x))
        else:
            out = cm(x)
            assert same(out, m(x)) and not out.requires_grad
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.guard_hits >= 2


# -- exceptions ------------------------------------------------------------------------------------------
def test_an_exception_in_the_mock_propagates_without_rerunning():
    def f(x, idx):
        x.add_(1)
        return x.index_select(0, idx) * 2

    cf = magpy.compile(f, backend="eager")
    x, xr = torch.zeros(3), torch.zeros(3)
    for _ in range(2):
        assert same(cf(x, torch.tensor([0, 1])), f(xr, torch.tensor([0, 1])))
    bad = torch.tensor([0, 5])      # same guards: the compiled graph raises, as eager does
    with pytest.raises(IndexError):
        f(xr, bad)
    with pytest.raises(IndexError):
        cf(x, bad)
    assert torch.equal(x, xr)        # the in-place update happened once, as in eager
    st = magpy.stats(cf)
    assert st.mock_errors == 1 and st.guard_hits == 2 and st.records == 1
    assert same(cf(x, torch.tensor([2, 0])), f(xr, torch.tensor([2, 0])))   # the record stays
    assert magpy.stats(cf).guard_hits == 3


def test_a_guard_that_raises_is_a_magpy_bug_the_call_goes_on(caplog):
    cm = magpy.compile(Net(), backend="eager")
    x = torch.randn(3, 4)
    ref = copy.deepcopy(cm._orig_mod)
    assert same(cm(x), ref(x))
    rec = cm._cache.records[0]

    def broken():
        raise RuntimeError("broken guard")   # (ValueError is a value that no longer compares: a miss)

    # The generated matched path of a real record, with a check inside it that raises.
    for fn in (rec.run, rec.guard):
        fn.__globals__["_gs_cpp"] = broken
    with caplog.at_level(logging.WARNING, logger="magpy"):
        for _ in range(3):
            assert same(cm(x), ref(x))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "RuntimeError" in warnings[0] and "MagPy bug" in warnings[0]
    st = magpy.stats(cm)
    assert st.guard_errors == 1 and st.records == 1 and st.monitor_runs == 2 and st.guard_hits == 2
    assert cm._cache.records[0] is not rec


# -- threads ---------------------------------------------------------------------------------------------
def test_threads_with_different_shapes_get_eager_results():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))
    cm = magpy.compile(m, backend="eager")
    barrier = threading.Barrier(4)
    errors: list = []

    def work(i):
        try:
            xs = [torch.randn(i + 1, 4) for _ in range(6)] + [torch.randn(2 * i + 5, 4) for _ in range(6)]
            barrier.wait()
            for x in xs:
                out = cm(x)
                if not same(out, m(x)):
                    errors.append((i, tuple(x.shape)))
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    st = magpy.stats(cm)
    # the first shape's record, then one with the batch dimension lifted (automatic dynamic shapes);
    # thread 0's batch of 1 (never lifted) has a record of its own unless it came first
    assert st.break_reasons == [] and st.records == st.monitor_runs and st.monitor_runs in (2, 3)


# -- stats -----------------------------------------------------------------------------------------------
def test_stats_identities():
    def f(x, k):
        return x * len(k)   # (a string: numbers that change would be lifted into the graph)

    cf = magpy.compile(f, backend="eager", recompile_limit=3)
    x = torch.randn(2)
    calls = 0
    for k in ("a", "a", "bb", "bb", "ccc", "a", "dddd", "dddd", "a", "bb"):   # "dddd" reaches the limit: it
        # runs eagerly, the records stay
        assert same(cf(x, k), f(x, k))
        calls += 1
    st = magpy.stats(cf)
    assert st.calls == calls == st.guard_hits + st.guard_misses + st.fallbacks
    assert st.monitor_runs == st.guard_misses == 3 and st.fallbacks == 2 and st.guard_hits == 5
    assert len(st.break_reasons) == 1 and "recompile limit" in st.break_reasons[0]
    assert "guards that differ between the records: k == " in st.break_reasons[0]   # what kept changing
    assert st.matched_calls is None and st.guard_time_s is None and st.mock_time_s is None

    m, ref = _pair()
    cm = magpy.compile(m, backend="eager", profile=True)
    calls = 0
    h = None
    for i in range(8):
        if i == 3:
            h = m.register_full_backward_hook(lambda mod, gin, gout: None)   # runs eagerly
        if i == 5:
            h.remove()
        xi = torch.randn(2 + i % 2, 4)
        assert same(cm(xi), ref(xi))
        calls += 1
    st = magpy.stats(cm)
    assert st.calls == calls == st.guard_hits + st.guard_misses + st.fallbacks
    assert st.monitor_runs <= st.guard_misses and st.fallbacks == 2
    assert st.matched_calls == st.guard_hits > 0 and st.guard_time_s > 0 and st.mock_time_s > 0


def test_backward_hooks_and_explain_with_hooks():
    m, ref = _pair()
    cm = magpy.compile(m, backend="eager")
    seen = []
    h = cm.register_full_backward_hook(lambda mod, gin, gout: seen.append(len(gout)))
    hr = ref.register_full_backward_hook(lambda mod, gin, gout: seen.append(len(gout)))
    ex = magpy.explain(cm)(torch.randn(3, 4))
    assert ex.graph_count == 0 and "hooks" in ex.break_reasons[0]
    x = torch.randn(3, 4, requires_grad=True)
    cm(x).sum().backward()
    ref(x).sum().backward()
    assert seen == [1, 1]
    assert all(same(a.grad, b.grad) for a, b in zip(m.parameters(), ref.parameters()))
    h.remove()
    hr.remove()
    for _ in range(3):
        assert same(cm(x), ref(x))
    assert magpy.stats(cm).guard_hits == 2 and seen == [1, 1]


def test_compiling_a_compiled_module_compiles_the_original():
    m, ref = _pair()
    cm = magpy.compile(magpy.compile(m, backend="eager"), backend="eager")
    assert cm._orig_mod is m
    x = torch.randn(3, 4)
    for _ in range(3):
        assert same(cm(x), ref(x))
    assert magpy.stats(cm).guard_hits == 2


def test_a_record_hands_out_its_bare_graph_inputs():
    """Benchmarks time the bare compiled graph with the inputs the matched path would pass."""
    m, ref = _pair()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    out = cm(x)
    rec = cm._cache.records[0]
    inputs = rec.graph_inputs((x,), {})
    assert inputs is not None and any(t is x for t in inputs)
    assert same(rec.compiled_graph(*inputs)[0], out)
    assert rec.graph_inputs((torch.randn(5, 7),), {}) is None   # the guard fails


def test_a_library_base_class_call_is_what_gets_compiled():
    """`module(x)` runs the first `__call__` in the MRO, here torch.distributions.Transform's."""
    class Scale(torch.distributions.Transform, nn.Module):
        bijective = True

        def __init__(self):
            super().__init__()
            nn.Module.__init__(self)
            self.w = nn.Parameter(torch.full((4,), 2.0))

        def _call(self, x):
            return x * self.w

        def __hash__(self):
            return super(nn.Module, self).__hash__()

    m = Scale()
    cm = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(4)
        assert same(cm(x=x), m(x=x))
    assert magpy.stats(cm).guard_hits == 2 and magpy.stats(cm).break_reasons == []
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        cm(y=torch.randn(4))   # the real call's own error, as eager raises it


def test_a_torchscript_module_is_one_operator_node_that_reads_its_parameters_when_it_runs():
    m = torch.jit.script(nn.Linear(4, 4))
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(2, 4)
    for i in range(3):
        if i == 2:
            with torch.no_grad():
                m.weight.mul_(2)   # (read by the scripted code itself when it runs)
        assert same(cm(x), m(x))
    st = magpy.stats(cm)
    assert (st.records, st.monitor_runs, st.guard_hits, st.break_reasons) == (1, 1, 2, [])


def test_a_script_module_subclass_inside_a_model_and_its_other_script_methods():
    class Enc(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        @torch.jit.script_method
        def encode(self, x):
            return self.fc(x) * 2

        @torch.jit.script_method
        def forward(self, x):
            return self.encode(x).tanh()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = Enc()

        def forward(self, x):
            return self.enc(x) + self.enc.encode(x)

    m = M()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        if i == 2:
            m.enc = Enc()   # another scripted module: a miss (identity-guarded)
        x = torch.randn(2, 3)
        assert same(cm(x), m(x))
    st = magpy.stats(cm)
    assert (st.records, st.monitor_runs, st.graph_count) == (2, 2, 2) and st.break_reasons == []


class _LazyTower(nn.Module):
    """Lazy modules at the top, nested in a Sequential, and a lazy convolution beside them."""

    def __init__(self):
        super().__init__()
        self.a = nn.LazyLinear(8)
        self.b = nn.Sequential(nn.ReLU(), nn.LazyLinear(3))
        self.c = nn.LazyConv2d(4, 3)

    def forward(self, x, img):
        return self.b(self.a(x)), self.c(img).sum((2, 3))


@pytest.mark.parametrize("top", [False, True])
def test_a_lazy_module_builds_its_parameters_in_the_first_run_as_eager_does(top):
    def build():
        torch.manual_seed(0)
        return nn.LazyLinear(5) if top else _LazyTower()

    ref, m = build(), build()
    cm = magpy.compile(m, backend="eager")
    g = torch.Generator().manual_seed(1)
    for i in range(4):
        args = (torch.randn(2, 6, generator=g),) if top else (torch.randn(2, 6, generator=g),
                                                              torch.randn(1, 2, 5, 5, generator=g))
        torch.manual_seed(10 + i)
        want = ref(*args)
        after_eager = torch.random.get_rng_state()
        torch.manual_seed(10 + i)
        got = cm(*args)
        assert torch.equal(torch.random.get_rng_state(), after_eager)   # (the weights' draws, as eager's)
        assert all(same(a, b) for a, b in zip(got, want)) if not top else same(got, want)
    assert type(m) is nn.Linear if top else (type(m.a), type(m.b[1]), type(m.c)) == (nn.Linear, nn.Linear, nn.Conv2d)
    assert all(same(p, q) for p, q in zip(m.parameters(), ref.parameters()))
    st = magpy.stats(cm)   # (the first call's run builds them, unmonitored, and its record serves the rest)
    assert (st.monitor_runs, st.guard_hits, st.fallbacks, st.break_reasons) == (1, 3, 0, [])


def test_a_lazy_module_swapped_in_later_is_built_by_a_new_run():
    m = nn.Sequential(nn.Linear(4, 4), nn.LazyLinear(3))
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(2, 4)
    assert same(cm(x), m(x))
    m[1] = nn.LazyLinear(2)
    out = cm(x)
    assert out.shape == (2, 2) and type(m[1]) is nn.Linear and same(out, m(x))
    assert magpy.stats(cm).monitor_runs == 2


def test_records_are_public_with_the_bare_graph_and_its_inputs():
    m, _ = _pair()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    cm(x)
    (rec,) = magpy.records(cm)
    assert isinstance(rec, magpy.Record)
    inputs = rec.graph_inputs((x,), {})
    assert inputs is not None and rec.compiled_graph(*inputs) is not None
    assert rec.graph_inputs((torch.randn(5, 4),), {}) is None   # another shape: the guard fails
    with pytest.raises(TypeError, match="magpy.records"):
        magpy.records(m)


def test_backward_hooks_on_a_submodule_compile_with_gradients_off():
    seen = []

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.gate = nn.Identity()
            self.gate.register_full_backward_hook(lambda m, gi, go: seen.append("bw"))

        def forward(self, x):
            return self.gate(self.a(x)).relu()

    m = M()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():   # Module.__call__ leaves tensors as they are: one record
        for _ in range(3):
            x = torch.randn(2, 3)
            assert same(cm(x), m(x))
    st = magpy.stats(cm)
    assert (st.records, st.guard_hits, st.break_reasons) == (1, 2, [])
    x = torch.randn(2, 3, requires_grad=True)   # with gradients the hook must see the backward: eager
    cm(x).sum().backward()
    assert seen == ["bw"] and "backward hooks" in magpy.stats(cm).break_reasons[0]
