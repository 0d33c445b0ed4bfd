"""Python features on the way to tensor operations: each compiled, compared with eager over
several calls with changed external state, and expected to give exactly one graph."""
from __future__ import annotations

import collections
import itertools

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy
from magpy.bytecode.resume import supported as splits_supported

SCALE = 2.0
CONFIG = {"act": "relu", "eps": 1e-3}


def run(fn, *calls, monitor_runs=1):
    cm = magpy.compile(fn, backend="eager")
    for args in calls:
        assert same(cm(*args), fn(*args))
    st = magpy.stats(cm)
    assert st.break_reasons == [], st.break_reasons
    assert st.graph_count == 1
    assert st.monitor_runs == monitor_runs
    return cm


def test_globals_are_guarded():
    global SCALE

    def f(x):
        return x * SCALE + CONFIG["eps"]

    x = torch.randn(3)
    cm = run(f, (x,), (x,))
    SCALE = 5.0
    try:
        assert same(cm(x), f(x))
        CONFIG["eps"] = 0.5
        assert same(cm(x), f(x))
        assert magpy.stats(cm).monitor_runs == 3
    finally:
        SCALE = 2.0
        CONFIG["eps"] = 1e-3


def test_closure_cells_are_guarded():
    k = [3]

    def f(x):
        return x * k[0]

    x = torch.randn(3)
    cm = run(f, (x,), (x,))
    k[0] = 7
    assert same(cm(x), f(x))


def test_default_and_keyword_arguments():
    def f(x, alpha=0.5, *, beta=1.0):
        return x * alpha + beta

    x = torch.randn(3)
    cm = run(f, (x,), (x,))
    assert same(cm(x, 2.0), f(x, 2.0))
    assert same(cm(x, beta=3.0), f(x, beta=3.0))
    assert same(cm(x, alpha=1.5, beta=3.0), f(x, alpha=1.5, beta=3.0))


def test_star_args_and_kwargs():
    def f(*xs, **opts):
        y = xs[0]
        for x in xs[1:]:
            y = y + x * opts.get("w", 1.0)
        return y

    a, b = torch.randn(3), torch.randn(3)
    cm = magpy.compile(f, backend="eager")
    for w in (2.0, 2.0, 3.0):
        assert same(cm(a, b, w=w), f(a, b, w=w))
    assert same(cm(a, b, b), f(a, b, b))
    assert magpy.stats(cm).break_reasons == []


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + torch.relu(self.fc(x)))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(8, 8), nn.GELU(), Block(8))
        self.blocks = nn.ModuleList([Block(8) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 3)})

    def forward(self, x):
        x = self.seq(x)
        for blk in self.blocks:
            x = blk(x)
        return {name: head(x) for name, head in self.heads.items()}


def test_nested_modules_sequential_modulelist_moduledict():
    m = Nested().eval()
    x = torch.randn(4, 8)
    cm = run(m, (x,), (x,), (torch.randn(4, 8),))
    with torch.no_grad():
        m.blocks[1].fc.bias.add_(1.0)
    assert same(cm(x), m(x))
    m.blocks.append(Block(8))          # structure changed: a new record
    assert same(cm(x), m(x))
    assert magpy.stats(cm).monitor_runs == 2


def test_comprehensions_fstrings_and_string_ops():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            for i in range(3):
                setattr(self, f"layer_{i}", nn.Linear(4, 4))
            self.mode = "Sum"

        def forward(self, x):
            outs = [getattr(self, f"layer_{i}")(x) for i in range(3)]
            key = self.mode.lower().strip()
            if key == "sum":
                return torch.stack(outs).sum(0)
            return torch.cat(outs, dim=-1)

    m = Net()
    x = torch.randn(2, 4)
    cm = run(m, (x,), (x,))
    m.mode = "cat"
    assert same(cm(x), m(x))


def helper(x, w):
    return {"sum": x + w, "prod": x * w, "meta": {"shape": tuple(x.shape)}}


def test_helper_returning_dict_of_tensors():
    def f(x, w):
        d = helper(x, w)
        d["both"] = d["sum"] - d["prod"]
        return d

    x, w = torch.randn(3), torch.randn(3)
    out = run(f, (x, w), (torch.randn(3), w))(x, w)
    assert list(out) == ["sum", "prod", "meta", "both"] and out["meta"] == {"shape": (3,)}


def test_namedtuple_and_tensor_metadata():
    Pair = collections.namedtuple("Pair", "a b")

    def f(x):
        n, c = x.shape[0], x.size(1)
        y = x.reshape(n, c // 2, 2).transpose(1, 2).contiguous()
        return Pair(y, y.dim())

    x = torch.randn(4, 6)
    out = run(f, (x,), (torch.randn(4, 6),))(x)
    assert isinstance(out, Pair) and out.b == 3
    cm = magpy.compile(f, backend="eager")
    assert same(cm(x), f(x))
    z = torch.randn(2, 8)             # a new shape: a new record with the new baked shapes
    assert same(cm(z), f(z)) and cm(z).a.shape == (2, 2, 4)
    assert magpy.stats(cm).monitor_runs == 2


def test_inplace_tensor_update_of_buffer():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.zeros(3))

        def forward(self, x):
            self.total += x
            return self.total * 2

    m, ref = Counter(), Counter()
    cm = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(3)
        assert same(cm(x), ref(x))
        assert same(m.total, ref.total)


def test_guard_hit_path_does_not_rerun_monitor():
    calls = []

    class Spy(nn.Module):
        def forward(self, x):
            calls.append(1)      # a side effect on an outside list: reproduced by the mock
            return x + 1

    m = Spy()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(2)
    for _ in range(5):
        cm(x)
    st = magpy.stats(cm)
    assert st.monitor_runs == 1 and st.guard_hits == 4
    assert len(calls) == 5


def test_absent_attribute_and_key_are_guarded():
    class Maybe(nn.Module):
        def forward(self, x):
            try:
                s = self.scale
            except AttributeError:
                s = 1.0
            return x * s

    m = Maybe()
    x = torch.randn(2)
    cm = run(m, (x,), (x,))
    m.scale = 3.0                         # now present: the old record must not match
    assert same(cm(x), m(x))

    def f(x, d):
        try:
            return x * d["k"]
        except KeyError:
            return x * 2

    d = {}
    cf = run(f, (x, d), (x, d))
    d["k"] = 5.0
    assert same(cf(x, d), f(x, d))


def test_sum_over_generator_and_parameter_list():
    class Mix(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.ParameterList([nn.Parameter(torch.full((4,), float(i + 1))) for i in range(3)])

        def forward(self, x):
            return sum(w * x for w in self.weights) / len(self.weights) + sum([x, x], torch.zeros(4))

    m = Mix()
    run(m, (torch.randn(4),), (torch.randn(4),))


def test_outside_containers_changed_without_reading_them():
    def f(x, sink, cache):
        y = x.relu()
        sink.append(y)
        sink.insert(0, "start")
        cache["last"] = y.sum()
        return y

    x = torch.randn(3)
    cm = magpy.compile(f, backend="eager")
    for n in range(3):                     # growing containers: no guard on their contents
        s1, c1 = ["old"] * n, {"k": n}
        s2, c2 = ["old"] * n, {"k": n}
        assert same(cm(x, s1, c1), f(x, s2, c2))
        assert same(s1, s2) and same(c1, c2)
    assert magpy.stats(cm).monitor_runs == 1


def test_compiled_submodule_inside_a_compiled_model():
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner_impl = Block(8)
            self.inner = magpy.compile(self.inner_impl, backend="eager")   # compiled on its own too
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.inner(x))

    m = Outer()
    x = torch.randn(3, 8)
    assert same(m.inner(x), m.inner_impl(x))
    cm = run(m, (x,), (torch.randn(3, 8),))
    assert magpy.stats(cm).graph_count == 1


def test_training_mode_batchnorm_dropout_and_backward():
    import copy

    m = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2)).train()
    ref = copy.deepcopy(m)
    cm = magpy.compile(m, backend="eager")
    for step in range(3):
        x = torch.randn(4, 8)
        torch.manual_seed(step)
        out = cm(x)
        out.sum().backward()
        torch.manual_seed(step)
        expect = ref(x)
        expect.sum().backward()
        assert same(out, expect)
        assert same(m[0].weight.grad, ref[0].weight.grad)              # autograd through the graph
        assert same(m[1].running_mean, ref[1].running_mean)           # buffers updated in place
        assert int(m[1].num_batches_tracked) == int(ref[1].num_batches_tracked) == step + 1
    assert magpy.stats(cm).monitor_runs == 1


def test_legacy_variable_wrapper_is_a_detach():
    """`Variable(t)` (old code in real models) shares t's data without grad: a detach in the graph."""
    from torch.autograd import Variable

    lin = nn.Linear(3, 3)

    def f(x):
        h = Variable(torch.zeros(2, 3))
        return lin(x) + Variable(x * 2) + h

    cm = run(f, *[(torch.randn(2, 3),)] * 3)
    x1, x2 = torch.randn(2, 3, requires_grad=True), None
    x2 = x1.detach().clone().requires_grad_(True)
    cm(x1).sum().backward()
    f(x2).sum().backward()
    assert torch.allclose(x1.grad, x2.grad)


def test_legacy_typed_constructors_become_factories():
    """`torch.FloatTensor(data)`, `torch.LongTensor(idx)`, `torch.Tensor(2, 3)` in forward (old
    code in real models): `torch.tensor`/`torch.empty` in the graph, data guarded like any read."""
    weights = [1.0, 2.0, 3.0]

    def f(x):
        w = torch.FloatTensor(weights)
        idx = torch.LongTensor([0, 2])
        z = torch.Tensor(2, 3).zero_()
        return x * w + x[idx].sum() + z.sum()

    x = torch.randn(3)
    cm = run(f, (x,), (x,))
    weights[1] = 7.0
    assert same(cm(x), f(x))
    assert magpy.stats(cm).monitor_runs == 2


def test_a_typed_tensor_class_passed_to_an_operator():
    """`t.type(torch.LongTensor)` (old indexing code): the class goes into the graph by name."""
    table = torch.randn(2, 5, 5)

    def f(x, coords):
        pe = table[:, coords[:, 0].type(torch.LongTensor), coords[:, 1].type(torch.LongTensor)]
        return x + pe.permute(1, 0)

    x, c = torch.randn(4, 2), torch.tensor([[0.0, 1.0], [4.0, 2.0], [3.0, 3.0], [1.0, 0.0]])
    cm = run(f, (x, c), (x, c.flip(0)))
    assert magpy.stats(cm).break_reasons == [] and magpy.stats(cm).guard_hits >= 1


def test_a_module_created_in_forward_after_dynamo_patched_module_init():
    """Once TorchDynamo is used, Module.__init__ also tags the new module in Dynamo's weak
    registry: bookkeeping MagPy does not monitor (not the program's state)."""
    from torch._dynamo.mutation_guard import install_generation_tagging_init

    install_generation_tagging_init()

    class Mish(torch.nn.Module):
        def forward(self, x):
            return x * torch.tanh(torch.nn.functional.softplus(x))

    lin = torch.nn.Linear(4, 4)

    def f(x):
        return Mish()(lin(x))

    run(f, (torch.randn(2, 4),), (torch.randn(2, 4),))


def test_a_monitor_run_does_not_import_dynamo_and_skips_its_frames_once_loaded():
    """The first monitor run in a process does not import TorchDynamo (a second of start-up);
    once something imports it, a later run skips the frames Dynamo patches into Module.__init__."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys, torch, magpy
        lin = torch.nn.Linear(4, 4)
        class Mish(torch.nn.Module):
            def forward(self, x):
                return x * torch.tanh(torch.nn.functional.softplus(x))
        def f(x):
            return Mish()(lin(x))
        x = torch.randn(2, 4)
        c = magpy.compile(f, backend="eager")
        assert torch.equal(c(x), f(x))
        assert "torch._dynamo" not in sys.modules, "a monitor run imported Dynamo"
        from torch._dynamo.mutation_guard import install_generation_tagging_init
        install_generation_tagging_init()
        c2 = magpy.compile(f, backend="eager")
        assert torch.equal(c2(x), f(x)) and torch.equal(c2(x), f(x))
        st = magpy.stats(c2)
        assert st.break_reasons == [] and st.guard_hits == 1, st
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]


def test_functools_reduce_with_a_native_operator_folds_into_the_graph():
    """`functools.reduce(operator.add, tensors)` folds in C: recorded like `sum`, as graph nodes."""
    import functools
    import operator

    ws = [torch.randn(4) for _ in range(3)]

    def f(x):
        a = functools.reduce(operator.add, [x * w for w in ws])
        b = functools.reduce(torch.mul, (x + w for w in ws), torch.ones(4))
        c = functools.reduce(operator.matmul, [torch.eye(4) * 2, torch.eye(4)], x.diag())
        return a + b + c.sum(0)

    cm = run(f, (torch.randn(4),), (torch.randn(4),))
    ws[1] = torch.zeros(4)          # an outside list changed between calls: guarded
    x = torch.randn(4)
    assert same(cm(x), f(x))


def test_sorted_min_max_with_a_python_key_over_tensors():
    """With `key=`, the builtins compare the keys the (monitored) key function returns and only
    move the tensors; tensor keys would be compared in C, which reads values: dynamic."""
    order = {"a": 2, "b": 0, "c": 1}

    def f(x):
        feats = [("a", x * 2), ("b", x + 1), ("c", x - 3)]
        ranked = sorted(feats, key=lambda kv: order[kv[0]])
        first = min(feats, key=lambda kv: order[kv[0]])[1]
        feats.sort(key=lambda kv: -order[kv[0]])
        return torch.stack([t for _, t in ranked]) + first + feats[0][1]

    cm = run(f, (torch.randn(3),), (torch.randn(3),))
    order["a"] = -1                 # the keys are guarded values: a new order is a new record
    x = torch.randn(3)
    assert same(cm(x), f(x)) and magpy.stats(cm).monitor_runs == 2

    def g(x):
        return max([x, x * 2, -x], key=lambda t: t.sum())   # tensor keys: compared in C

    cg = magpy.compile(g, backend="eager")
    for _ in range(2):
        x = torch.randn(3)
        assert same(cg(x), g(x))
    assert "compares tensor keys" in magpy.stats(cg).break_reasons[0]


def test_os_environ_get_compiles_and_is_guarded(monkeypatch):
    """`os.environ.get` raises and catches a KeyError inside Mapping.get: the builtin exception is
    a plain new object, the absent key a guarded fact."""
    import os

    monkeypatch.delenv("MAGPY_TEST_FLAG", raising=False)

    def f(x):
        return x * (2.0 if os.environ.get("MAGPY_TEST_FLAG") else 1.0)

    cm = run(f, (torch.ones(2),), (torch.ones(2),))
    monkeypatch.setenv("MAGPY_TEST_FLAG", "1")
    assert same(cm(torch.ones(2)), f(torch.ones(2))) and magpy.stats(cm).monitor_runs == 2


@pytest.mark.parametrize("norm", ["weight_norm", "spectral_norm"])
@pytest.mark.parametrize("train", [False, True])
def test_weight_and_spectral_norm_hooks_compile(norm, train):
    """weight_norm/spectral_norm keep their settings on a hook object (WeightNorm, SpectralNorm)
    that Module.__call__ runs: the hook has a source, its frame is monitored, and its
    `setattr(module, name, weight)` is replayed like `module.name = weight`; spectral_norm's power
    iteration in training updates its buffers in place."""
    import warnings

    import torch.nn.utils as U

    def build():
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = getattr(U, norm)
            return torch.nn.Sequential(f(torch.nn.Linear(4, 6)), torch.nn.ReLU(), f(torch.nn.Linear(6, 3))).train(train)

    m, ref = build(), build()
    cm = magpy.compile(m, backend="eager")
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(2, 4)
            assert same(cm(x), ref(x))
            if i == 1:
                for mod in (m, ref):
                    getattr(mod[0], "weight_g" if norm == "weight_norm" else "weight_orig").mul_(2)
        assert all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), ref.state_dict().values()))
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.guard_hits >= 2


def test_legacy_tensor_new_with_a_size_is_new_empty():
    """`t.new(t.size())` is a size, `t.new((4, 10))` data: the graph spells the first `new_empty`."""
    def f(x):
        std = x.div(2).exp()
        eps = std.data.new(std.size()).normal_()
        return x + std * eps * 0 + x.new(3, 4).zero_().sum() + x.new([1.0, 2.0]).sum()

    run(f, (torch.randn(4, 10),), (torch.randn(4, 10),))


def test_star_arguments_from_one_shot_iterators_are_read_without_consuming_them():
    def reverse_dims(x):
        x = x.permute(*reversed(range(x.dim())))            # a range iterator
        return x.reshape(*reversed([2, 3, 4])) + 1           # a list reverse iterator

    def spans(x, width):
        def given(w):
            return torch.arange(x.shape[1] - w + 1), torch.arange(w - 1, x.shape[1])
        starts, ends = zip(*(given(w + 1) for w in range(width)))   # a generator
        return torch.index_select(x, 1, torch.cat(starts)) + torch.index_select(x, 1, torch.cat(ends))

    x = torch.randn(4, 3, 2)
    run(reverse_dims, (x,), (x.clone(),))
    y = torch.randn(2, 6)
    cm = run(spans, (y, 3), (y * 2, 3))
    assert same(cm(y, 2), spans(y, 2))                       # a new width: a new record


def test_star_arguments_from_a_generator_are_decided_when_it_ends():
    """``f(*gen)``: the call is decided with every item once the generator returns, not at its
    first yield (on 3.13 a suspended frame's ``f_lasti`` is the RESUME after the yield)."""
    def f(x):
        return x.reshape(*(d for d in (x.shape[0] // 2, 2 * x.shape[1]))) + 1

    cm = magpy.compile(f, backend="eager")
    for n in (4, 4, 6, 6, 4):
        x = torch.randn(n, 3)
        assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert not st.break_reasons and st.fallbacks == 0 and st.monitor_runs == 2, st


def test_star_arguments_from_a_map_are_drawn_by_a_monitored_generator():
    """``f(*map(g, xs))`` unpacks the map in C: a generator put in its place draws it monitored
    (callbacks.drain), so the call is one graph, and a new size is a new record."""
    def f(x):
        return x.view(*map(int, [x.numel() // 2, 2])) * 2

    cm = magpy.compile(f, backend="eager")
    for n in (6, 6, 8, 8, 6):
        x = torch.randn(n)
        assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert not st.break_reasons and st.fallbacks == 0 and st.monitor_runs == 2, st


def test_star_arguments_from_an_iterator_that_cannot_be_copied_run_eagerly():
    def f(x):
        return x.view(*itertools.chain([x.numel() // 2], [2])) * 2

    x = torch.randn(6)
    cm = magpy.compile(f, backend="eager")
    for _ in range(2):
        assert same(cm(x), f(x))
    assert any("`chain` into call arguments" in r for r in magpy.stats(cm).break_reasons)


def test_methods_of_torch_module_classes_are_monitored_not_taken_for_operators():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ff = torch.ao.nn.quantized.FloatFunctional()   # Python methods that call torch ops
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.ff.cat([self.lin(x), x], 1)
            return self.ff.add(y, y), self.ff.mul_scalar(y, 0.5)

    net = Net()
    run(net, (torch.randn(2, 4),), (torch.randn(2, 4),))


def test_a_metaclass_call_that_defers_to_type_call_is_monitored():
    class Registry(type):
        made = []

        def __call__(cls, *args, **kwargs):
            obj = super().__call__(*args, **kwargs)   # type.__call__ bound to cls: runs __init__
            Registry.made.append(cls.__name__)
            return obj

    class Scale(metaclass=Registry):
        def __init__(self, factor):
            self.factor = factor

        def apply(self, x):
            return x * self.factor

    def f(x, k):
        return Scale(k).apply(x) + type.__call__(Scale, 2.0).apply(x)

    x = torch.randn(3)
    cm = magpy.compile(f, backend="eager")
    for k in (3.0, 3.0, 4.0):
        before = len(Registry.made)
        assert same(cm(x, k), f(x, k))
        assert len(Registry.made) == before + 2   # once per call (type.__call__ bypasses the metaclass)
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.graph_count >= 1 and st.guard_hits >= 1


def test_iterating_a_tensor_takes_its_rows_in_every_form():
    def zipped(x, y):
        return sum([a * b for a, b in zip(x, y)])

    def starred(x):
        first, *rest = x
        return first + torch.stack([*rest, x[0]]).sum(0)

    def enumerated(x):
        out = [r * i for i, r in enumerate(x)]
        return torch.cat(list(map(lambda r: r + 1, x)) + out)

    def unpacked(x):
        a, b, c = x.transpose(0, 1)[:3]
        return dict(w=a, s=2)["w"] + tuple(x.t())[1] + c + sum(iter(x.t()))

    for fn in (zipped, starred, enumerated, unpacked):
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        args = (x, y) if fn is zipped else (x,)
        cm = run(fn, args, args)
        x.mul_(2)
        assert same(cm(*args), fn(*args))
        assert magpy.stats(cm).monitor_runs == 1


def test_custom_autograd_function_without_gradients_is_captured():
    class PassFirst(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a.detach())
            return a, b * 2

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, gb * 2

    def f(x, y):
        a, b = PassFirst.apply(x, y)
        a.add_(1)        # `a` is a view of x (apply returns inputs as views): x changes too
        return a + b

    with torch.no_grad():
        x, y = torch.randn(3), torch.randn(3)
        x2 = x.clone()
        cm = magpy.compile(f, backend="eager")
        for _ in range(3):
            assert same(cm(x, y), f(x2, y))
            assert same(x, x2)
        st = magpy.stats(cm)
        assert st.break_reasons == [] and st.graph_count == 1 and st.guard_hits == 2


def test_boolean_masks_stay_in_the_graph_until_their_shape_is_read():
    def masked_loss(pred, target):
        valid = (target > 0).detach()
        d = torch.log(target[valid]) - torch.log(pred[valid])
        return torch.sqrt(torch.pow(d, 2).mean() - 0.5 * torch.pow(d.mean(), 2))

    def masked_assign(x):
        out = 1.0 - x
        out[out.le(0.0)] = 0.0
        y = x.clone()
        m = x <= -0.6
        y[m] = (x * 2)[m]
        return out.mean() + y.sum() + x[torch.nonzero(x > 0)[:, 0]].sum()

    gen = torch.Generator().manual_seed(0)
    calls = [(torch.rand(8, generator=gen) + 0.1, torch.randn(8, generator=gen) + 0.5) for _ in range(3)]
    run(masked_loss, *calls)                         # each call has another number of valid entries
    run(masked_assign, *[(torch.randn(6, generator=gen),) for _ in range(3)])

    def reads_shape(x):
        y = x[x > 0]
        return y.view(y.shape[0], 1) * 2

    def reads_size(x):
        y, attr = x[x > 0], "shape"
        return getattr(y, attr)[0] + y.sum() + len(y)   # the builtin getattr reads it too

    for fn in (reads_shape, reads_size):
        # sizes of value-shaped tensors are graph nodes (with a backend that serves changing sizes)
        cm = magpy.compile(fn, backend="eager")
        for _ in range(3):
            x = torch.randn(6, generator=gen)
            assert same(cm(x), fn(x))
        st = magpy.stats(cm)
        assert st.graph_count == 1 and st.monitor_runs == 1 and st.guard_hits == 2
        # a backend compiled for fixed sizes cannot serve them: the call runs eagerly, saying why
        cm = magpy.compile(fn, backend=lambda gm, example: gm.forward)
        for _ in range(2):
            x = torch.randn(6, generator=gen)
            assert same(cm(x), fn(x))
        st = magpy.stats(cm)
        assert "shape depends on tensor values" in st.break_reasons[0]
        if fn is reads_size and splits_supported():
            # `getattr(y, "shape")` is a call: the call splits there (magpy.splits), and the code
            # before and after it runs compiled
            assert st.splits == 1 and st.fallbacks == 0 and st.graph_count == 2
        else:
            assert st.graph_count == 0 and st.splits == 0


def test_sizes_of_value_shaped_tensors_are_followed_in_the_graph():
    """A size read from a tensor whose shape depends on values (a boolean mask's result, unique,
    nonzero) is the graph's: arithmetic on it and tensors shaped by it stay in the graph, it is
    returned or stored as the call's plain int, a branch or loop count on it is an assumption."""
    class Box:
        pass

    box = Box()

    def count_and_scale(x):
        n = x[x > 0].shape[0]
        box.n = n
        z = torch.zeros(n + 1)       # shaped by the count: its own sizes are followed too
        return x * n, n, z.shape[0] * 2, z.size()

    def mean_if_enough(x):
        p = x[x > 0]
        if len(p) > 2:               # an assumption, checked after the graph
            return p.sum() / len(p)
        return x.sum()

    def distinct(x):
        u = torch.unique((x * 2).round())
        k = u.numel()
        return u * k, k, min(x.nonzero().shape[0], 3)

    gen = torch.Generator().manual_seed(3)
    xs = [torch.randn(8, generator=gen) for _ in range(6)]
    assert len({int((x > 0).sum()) for x in xs}) > 2   # the counts change between calls
    for fn, max_runs in ((count_and_scale, 1), (distinct, 1), (mean_if_enough, 2)):
        cm = magpy.compile(fn, backend="eager")
        for x in xs:
            got, want = cm(x), fn(x)
            assert same(got, want) and repr(got) == repr(want)
        if fn is count_and_scale:
            assert type(box.n) is int and type(cm(xs[0])[1]) is int
        st = magpy.stats(cm)
        # (one graph per run; mean_if_enough's second run, whose side differed, is followed by an
        # other-side run, magpy.dynamic.other_side, which records a graph where its flipped side
        # merged: on 3.11, not where both sides' returns are copied into each side, 3.12+)
        assert st.fallbacks == 0 and st.monitor_runs <= max_runs, (fn.__name__, st)
        assert st.monitor_runs <= st.graph_count <= st.monitor_runs + st.other_side_runs, (fn.__name__, st)


def test_distributions_and_python_descriptors_are_monitored():
    import functools

    def gaussian(mean, std):
        dist = torch.distributions.Normal(mean, nn.functional.softplus(std), validate_args=False)
        return dist.log_prob(mean + 0.5).sum(-1), dist.entropy().sum(-1)

    def categorical(logits):
        dist = torch.distributions.Categorical(logits=logits, validate_args=False)   # probs: a lazy_property
        return dist.probs * 2, dist.entropy()

    run(gaussian, (torch.randn(3, 2), torch.randn(2)), (torch.randn(3, 2), torch.randn(2)))
    run(categorical, (torch.randn(3, 4),), (torch.randn(3, 4),))

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.k = 2.0

        @functools.cached_property
        def scale(self):
            return self.k * 3

        def forward(self, x):
            return x * self.scale

    m, ref = Scaled(), Scaled()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3)
    for i in range(4):
        if i == 2:
            m.k = ref.k = 10.0            # the cached value stays, in eager too
        assert same(cm(x), ref(x))
        assert m.__dict__.get("scale") == ref.__dict__.get("scale")


def test_a_warning_is_shown_once_as_under_the_default_filters():
    import warnings

    def f(x):
        if x.shape[0] > 2:
            warnings.warn("large input", UserWarning, stacklevel=1)
        return x * 2

    x = torch.randn(4)
    for fn in (f, magpy.compile(f, backend="eager")):
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("default")
            for _ in range(3):
                assert same(fn(x), x * 2)
        assert [str(w.message) for w in shown] == ["large input"]
        f.__globals__.get("__warningregistry__", {}).clear()
    st = magpy.stats(fn)
    assert st.break_reasons == [] and st.graph_count == 1 and st.guard_hits == 2


def test_legacy_constructors_and_variable_are_graph_operations():
    import numpy as np
    from torch.autograd import Variable

    def gather(x, y):
        idx = torch.LongTensor(range(y.size(0)))
        return x[idx, y]

    def weights(x):
        pids = torch.FloatTensor(np.arange(len(x)))
        w = torch.Tensor([1.0, 2.0, 3.0])                  # the default dtype
        e = torch.FloatTensor(2, 3).fill_(1.0)             # a size: uninitialised, then filled
        return x * w + pids[:, None] + e.sum()

    def variable(x):
        v = Variable(x * 2, requires_grad=True)
        return v * 3, v.requires_grad, v.is_leaf

    run(gather, (torch.randn(4, 5), torch.tensor([0, 2, 4, 1])), (torch.randn(4, 5), torch.tensor([1, 1, 0, 3])))
    run(weights, (torch.randn(3, 3),), (torch.randn(3, 3),))
    run(variable, (torch.randn(3),), (torch.randn(3),))
    old = torch.get_default_dtype()
    try:
        cm = magpy.compile(weights, backend="eager")
        x = torch.randn(3, 3, dtype=torch.float64)
        assert same(cm(x), weights(x))
        torch.set_default_dtype(torch.float64)              # torch.Tensor(...) now makes float64
        assert same(cm(x), weights(x)) and cm(x).dtype == torch.float64
    finally:
        torch.set_default_dtype(old)


def test_lru_cached_helpers_and_typing_subscripts():
    import functools
    import typing

    @functools.cache
    def grid(h, w):
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        return torch.stack([xs, ys], 0).float()

    @functools.lru_cache
    def factor(n):
        return n * 2.5

    def f(x):
        g = grid(x.shape[-2], x.shape[-1])             # a tensor the cache keeps
        optional = typing.Optional                     # a typing subscript at run time (lru_cache'd)
        assert optional[torch.Tensor] is not None
        return x + g.sum(0) * factor(x.shape[0])

    cm = magpy.compile(f, backend="eager")
    for shape in ((2, 3, 4), (2, 3, 4), (3, 3, 4), (2, 3, 4)):
        x = torch.randn(*shape)
        assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.monitor_runs == 2 and st.guard_hits == 2

    def bump(x):
        g = grid(2, 2)
        g.add_(1)                                      # changes the cached tensor, as eager does
        return x + g

    g0 = grid(2, 2).clone()
    cm = magpy.compile(bump, backend="eager")
    x = torch.randn(2, 2, 2)
    for k in range(1, 4):
        assert same(cm(x), x + g0 + k) and same(grid(2, 2), g0 + k)


def test_what_an_lru_cache_holds_is_checked_on_every_call():
    import functools

    table = {"a": 2.0}

    @functools.cache
    def factor(name):
        return table[name]

    def f(x):
        return x * factor("a")

    cm = magpy.compile(f, backend="eager")
    x = torch.ones(3)
    assert same(cm(x), f(x)) and same(cm(x), x * 2)
    table["a"] = 7.0
    assert same(cm(x), x * 2)        # eager keeps the cached 2.0
    factor.cache_clear()
    assert same(cm(x), x * 7)        # now the function runs again and reads 7.0
    st = magpy.stats(cm)
    # (the guard sees the cleared cache: a miss, whose run calls the function as eager does)
    assert st.records == 2 and st.guard_hits == 2 and st.unheld == 0 and st.break_reasons == []


def test_profiler_labels_do_not_break_the_graph():
    def f(x):
        with torch.autograd.profiler.record_function("block"):
            y = x * 2
        return y + 1

    run(f, (torch.randn(3),), (torch.randn(3),))


def test_builtins_that_are_tensor_operators():
    def f(x, y):
        return abs(x) + pow(x, 2) + pow(2, y) + sum(x) + sum(y, 1.0)   # sum(t) adds t's rows

    run(f, (torch.randn(3, 4), torch.randn(3, 4)), (torch.randn(3, 4), torch.randn(3, 4)))


def test_a_dict_keyed_by_functions_reads_one_item():
    def relu(x):
        return x.clamp(min=0)

    def gelu(x):
        return nn.functional.gelu(x)

    registry = {relu: 2.0, gelu: 3.0, nn.Linear: 4.0}

    def f(x):
        return registry[relu] * relu(x) + registry[nn.Linear]

    cm = magpy.compile(f, backend="eager")
    x = torch.randn(4)
    for i in range(4):
        if i == 2:
            registry[relu] = -1.0            # the item read changes: a new record
        if i == 3:
            registry[gelu] = 5.0             # another item: the record still holds
        assert same(cm(x), f(x))
    st = magpy.stats(cm)
    assert st.break_reasons == [] and st.monitor_runs == 2 and st.guard_hits == 2


def test_folds_sums_and_memos_over_parameters():
    import functools

    def step(h, layer):
        return torch.tanh(layer(h))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            h = functools.reduce(step, self.layers, x)                       # a Python fold: x only passed
            h = functools.reduce(lambda a, layer: layer(a), self.layers, h)
            w = collections.OrderedDict(a=self.layers[0].weight, b=self.layers[1].weight)   # stored, not read
            reg = sum(p.pow(2).sum() for p in self.parameters())            # `in` a memo set: identity
            out = {"h": h}
            out.update(p=torch.relu(h))
            return out["p"] @ (sum(w.values()) / 2) + reg + torch.eye(4, dtype=bool).float().sum()

    net = Net()
    with torch.no_grad():
        cm = run(net, (torch.randn(2, 4),), (torch.randn(2, 4),), (torch.randn(2, 4),))
    assert magpy.stats(cm).monitor_runs == 1


def test_star_unpacked_map_of_a_python_function():
    """mmdet's ``multi_apply``: ``zip(*map(f, xs))`` calls ``f`` per item from C while building
    the arguments; the call is decided with what those monitored calls returned."""
    import functools

    def multi_apply(func, *args, **kwargs):
        pfunc = functools.partial(func, **kwargs) if kwargs else func
        return tuple(map(list, zip(*map(pfunc, *args))))

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)
            self.scale = 2.0

        def single(self, x, s, bias=0.0):
            y = self.conv(x) * s + bias
            return y, y.sum()

        def forward(self, feats):
            return multi_apply(self.single, feats, [1.0, self.scale], bias=0.5)

    m = Head()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        feats = [torch.randn(1, 3, 4, 4), torch.randn(1, 3, 2, 2)]
        assert same(cm(feats), m(feats))
        m.scale = 3.0 if i == 1 else 2.0
    st = magpy.stats(cm)
    assert st.fallbacks == 0 and st.monitor_runs == 2 and st.guard_hits == 2
    assert magpy.explain(m)(feats).graph_count == 1


def test_native_of_constants_runs_as_a_pure_function():
    """A native with no annotation whose inputs are guarded constants (a version string parsed
    by a regular expression) is a function of guarded values; the pattern is guarded by identity,
    natives of effectful modules (the process) are not run this way."""
    import os
    import re

    ns = {"PAT": re.compile(r"(\d+)\.(\d+)")}

    def f(x):
        m = ns["PAT"].search(torch.__version__)
        if torch.__version__ >= "1.6":
            x = x + 1
        return x * int(m.group(1))

    cm = magpy.compile(f, backend="eager")
    for i in range(4):
        if i == 2:
            ns["PAT"] = re.compile(r"(\d)")
        assert same(cm(torch.ones(2)), f(torch.ones(2)))
    st = magpy.stats(cm)
    assert st.fallbacks == 0 and st.monitor_runs == 2

    def pid(x):
        return x * os.getpid()

    ex = magpy.explain(pid)(torch.ones(2))
    # never run as pure: the call runs eagerly, or (3.11+) splits at it (magpy.splits)
    # (a split's continuation, `x * pid`, is a graph: explain counts it as stats does)
    split = any(s.startswith("split at `getpid`") for s in ex.splits)
    assert (ex.graph_count == 0 and ex.break_reasons) or (split and ex.graph_count == 1)


def test_operator_dunders_sharing_one_code_object():
    """Comparison dunders made by one lambda in a loop (``setattr(C, name, lambda a, b, m=name:
    ...)``, as torch's TorchVersion does) share a code object and differ in their defaults: the
    frame the operator enters must be matched with the right function (3.10's frames do not name
    it), and a changed default must not be answered from the record."""
    class Level:
        def __init__(self, v):
            self.v = v

    for name, scale in (("__ge__", 1), ("__le__", -1)):
        setattr(Level, name, lambda a, b, m=name, s=scale: s * a.v >= s * b.v)

    lo, hi = Level(1), Level(2)

    def f(x):
        if hi >= lo:
            x = x + 1
        if lo <= hi:   # the other lambda of the same code
            x = x * 2
        if hi <= hi:
            x = x - 3
        return x

    cm = magpy.compile(f, backend="eager")
    for i in range(4):
        if i == 2:
            Level.__ge__.__defaults__ = ("__ge__", -1)   # hi >= lo is now False
        assert same(cm(torch.ones(2)), f(torch.ones(2))), i


def test_class_attribute_counter_is_left_a_plain_int():
    """``type(self).calls += 1`` in forward: once the counter is a graph input (it changes every
    call), the value the run leaves on the class is a plain int, as eager leaves it."""
    class Counted(torch.nn.Module):
        calls = 0

        def forward(self, x):
            type(self).calls += 1
            return x * type(self).calls

    m = Counted()
    cm = magpy.compile(m, backend="eager")
    for i in range(5):
        assert same(cm(torch.ones(2)), torch.ones(2) * (i + 1))
        assert type(Counted.__dict__["calls"]) is int and Counted.calls == i + 1


def test_star_unpacked_map_of_a_recursive_function():
    # the arguments are what map's own calls return, not the recursive calls inside them
    def rec(x, n):
        if n == 0:
            return x, x.sum()
        y, s = rec(x * 2, n - 1)
        return y + 1, s

    def f(xs):
        return tuple(zip(*map(rec, xs, [2, 1])))

    cm = magpy.compile(f, backend="eager")
    xs = [torch.ones(2), torch.ones(3)]
    for _ in range(3):
        assert same(cm(xs), f(xs))
    assert magpy.stats(cm).monitor_runs == 1 and magpy.stats(cm).fallbacks == 0


def test_requires_grad_set_on_a_leaf_made_in_the_call():
    """``out = torch.zeros_like(x); out.requires_grad = True`` is ``requires_grad_`` in the graph:
    the returned leaf requires grad as eager's does; on a tensor from outside it still breaks."""
    def zero(x):
        out = torch.zeros_like(x)
        out.requires_grad = True
        return out, out * 2

    cm = magpy.compile(zero, backend="eager")
    for _ in range(3):
        x = torch.randn(3)
        (a, b), (c, d) = cm(x), zero(x)
        assert a.requires_grad and a.is_leaf and same(a, c) and same(b, d) and b.grad_fn is not None
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.graph_count, st.fallbacks) == (1, 1, 0), st

    def outside(x):
        x.requires_grad = True
        return x * 2

    ex = magpy.explain(outside)(torch.randn(2))
    assert ex.graph_count == 0 and "requires_grad" in ex.break_reasons[0]


def test_call_arguments_stored_by_reference_on_self():
    """``self.input_kwargs = kwargs`` and ``self.extra = extra`` store objects of the call: the
    mock stores the call's own ``**kwargs`` dict (a fresh one each call, as eager's) and the
    caller's very list; the record is reused, not given up ("cannot be replayed")."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x, extra, **kwargs):
            self.input_kwargs = kwargs
            self.extra = extra
            return self.fc(x) * kwargs["scale"]

    m = M()
    cm = magpy.compile(m, backend="eager")
    seen = []
    for i in range(4):
        x, extra = torch.randn(2, 4), [i]
        y = cm(x, extra, scale=2.0)
        assert same(y, m(x, extra, scale=2.0))
        cm(x, extra, scale=2.0)
        assert m.extra is extra and m.input_kwargs == {"scale": 2.0}
        seen.append(m.input_kwargs)
    assert len({id(d) for d in seen}) == len(seen)   # a new dict per call
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.records, st.fallbacks) == (1, 1, 0), st
    assert st.guard_hits == 7


def test_a_broadcast_error_caught_by_the_program_follows_the_guarded_shapes():
    """``try: x = x + self.pos_embed`` / ``except RuntimeError:`` resize: an out-of-place
    pointwise operator on floating tensors can only raise on shapes, dtypes or devices, which
    the guards fix, so the except path is recorded (one record per length, no eager calls).
    On a lifted length it is not: lifting is given up, not the function. An integer floor
    division that raises on a zero element stays dynamic."""
    import torch.nn.functional as F

    class Pos(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_embed = torch.nn.Parameter(torch.randn(1, 16, 8))

        def forward(self, x, side):
            try:
                x = x + self.pos_embed
            except RuntimeError:
                p = self.pos_embed.reshape(1, 4, 4, 8).permute(0, 3, 1, 2)
                x = x + F.interpolate(p, size=(side, side), mode="bilinear").flatten(2).transpose(1, 2)
            return x * 2

    m = Pos()
    cm = magpy.compile(m, backend="eager")
    for side in (4, 3, 4, 3, 5, 5):
        x = torch.randn(2, side * side, 8)
        assert same(cm(x, side), m(x, side))
    st = magpy.stats(cm)
    # (4: record; 3: lifted run, lifting given up; 4: hit; 3, 5: records; 5: hit)
    assert (st.monitor_runs, st.records, st.fallbacks, st.guard_hits) == (4, 3, 0, 2), st
    assert not any("raised" in r for r in st.break_reasons), st.break_reasons

    def floordiv(a, b):
        try:
            return a // b
        except RuntimeError:
            return a * 0

    ex = magpy.explain(floordiv)(torch.tensor([4, 5]), torch.tensor([0, 1]))
    assert ex.graph_count == 0 and "raised RuntimeError" in ex.break_reasons[0]


def test_attribute_set_on_a_parameter_is_read_by_a_plain_load():
    """``self.weight.fast`` (an attribute set on the parameter object) read with ``LOAD_ATTR``:
    guarded like ``getattr(t, name)`` on it (present: its value; absent: stays absent)."""
    import torch.nn.functional as F

    class MetaLinear(torch.nn.Linear):
        def __init__(self):
            super().__init__(4, 3)
            self.weight.fast = None

        def forward(self, x):
            if self.weight.fast is not None:
                return F.linear(x, self.weight.fast, self.bias)
            return super().forward(x)

    m = MetaLinear()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        if i == 2:
            m.weight.fast = torch.randn(3, 4)
        x = torch.randn(2, 4)
        assert same(cm(x), m(x))
    st = magpy.stats(cm)
    assert (st.records, st.fallbacks, st.guard_hits) == (2, 0, 2) and not st.break_reasons, st


def test_a_dispatch_subclass_that_raises_on_a_flag_inside_try_is_a_break():
    """A wrapper subclass with its own ``__torch_dispatch__`` raising (a class flag) inside ``try``:
    the graph would run that Python code again unmonitored (a record made while it did not raise
    raised where eager caught). The operation is a break: every call answers as eager does."""
    class LogT(torch.Tensor):
        strict = False

        @staticmethod
        def __new__(cls, elem):
            return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            if cls.strict and "mul" in func.__name__:
                raise TypeError("strict")
            def un(t):
                return t.elem if isinstance(t, LogT) else t
            out = func(*[un(a) for a in args], **{k: un(v) for k, v in (kwargs or {}).items()})
            return LogT(out) if isinstance(out, torch.Tensor) else out

    def f(x, y):
        try:
            return x * y
        except TypeError:
            return x + y

    cm = magpy.compile(f, backend="eager")
    for i in range(4):
        LogT.strict = i >= 2
        try:
            want = f(LogT(torch.ones(2)), torch.full((2,), 3.0)).elem
            got = cm(LogT(torch.ones(2)), torch.full((2,), 3.0)).elem
        finally:
            LogT.strict = False
        assert same(got, want), (i, got, want)
    assert any("__torch_dispatch__" in r for r in magpy.stats(cm).break_reasons)
