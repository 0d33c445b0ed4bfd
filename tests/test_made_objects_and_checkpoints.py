"""Objects made in the call as outputs (user classes with slots or a Python metaclass,
``torch.distributions`` objects, closures and lambdas made in the call), checkpointed functions
and a lazy parameter made in forward. Each compiled program is compared with eager on every
call, and the record answers the warm calls."""
from __future__ import annotations

import dataclasses

import torch
import torch.distributions as D
import torch.nn as nn
from conftest import same

import magpy


class Slotted:
    __slots__ = ("q", "best")

    def __init__(self, q, best):
        self.q = q
        self.best = best


@dataclasses.dataclass(slots=True)
class SlotData:
    mean: torch.Tensor
    count: int = 3


def _runs(f, args_of, n=4):
    cm = magpy.compile(f, backend="eager")
    outs = []
    for i in range(n):
        args = args_of(i)
        outs.append((f(*args), cm(*args)))
    st = magpy.stats(cm)
    assert st.records == 1 and st.guard_hits == n - 1 and not st.break_reasons, st.break_reasons
    return outs


def test_slotted_objects_are_rebuilt_fresh_each_call():
    lin = nn.Linear(4, 3)

    def f(x):
        q = lin(x)
        return Slotted(q, q.argmax(-1)), SlotData(q.mean(0))

    outs = _runs(f, lambda i: (torch.randn(2, 4) + i,))
    for eager, got in outs:
        for e, g in zip(eager, got):
            assert type(g) is type(e)
        assert same(got[0].q, eager[0].q) and same(got[0].best, eager[0].best)
        assert same(got[1].mean, eager[1].mean) and got[1].count == 3
    assert outs[-1][1][0] is not outs[-2][1][0]   # (a fresh object each call, as eager's)
    assert same(outs[0][1][0].q, outs[0][0][0].q)   # (an earlier call's object is left as it was)


def test_distributions_made_in_the_call_behave_as_eager():
    def f(mu):
        return D.Independent(D.Normal(mu, mu.exp()), 1), D.Categorical(logits=mu)

    outs = _runs(f, lambda i: (torch.randn(3, 2),))
    for (ind_e, cat_e), (ind_g, cat_g) in outs:
        assert type(ind_g) is D.Independent and type(ind_g.base_dist) is D.Normal
        a = torch.zeros(3, 2)
        assert same(ind_g.log_prob(a), ind_e.log_prob(a)) and same(ind_g.mean, ind_e.mean)
        assert same(cat_g.probs, cat_e.probs) and ind_g.event_shape == ind_e.event_shape


def test_closures_made_in_the_call_get_this_calls_cells():
    def f(x):
        total = x.sum()
        def add(y):
            nonlocal total
            total = total + y
            return total
        return add, lambda: total

    outs = _runs(f, lambda i: (torch.full((2,), float(i)),))
    for (add_e, get_e), (add_g, get_g) in outs:
        assert add_g is not add_e and add_g.__qualname__ == add_e.__qualname__
        assert same(add_g(1.0), add_e(1.0)) and same(get_g(), get_e())
        assert add_g.__closure__[0] is get_g.__closure__[0]   # (one cell, shared as in eager)
    assert outs[0][1][0].__closure__[0] is not outs[1][1][0].__closure__[0]


class _Registry(type):
    """A metaclass written in Python, as libraries use for registries: its own ``__call__``
    counts instances and may hand back the argument unchanged (a decorator-like stand-in)."""
    made = []

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not isinstance(args[0], torch.Tensor):
            return args[0]
        obj = super().__call__(*args, **kwargs)
        _Registry.made.append(cls.__name__)
        return obj


class Head(metaclass=_Registry):
    def __init__(self, logits, scale=2):
        self.logits = logits
        self.scale = scale

    def __call__(self, x):
        return type(self)(self.logits + x, self.scale + 1)


def test_objects_of_a_class_with_a_python_metaclass_are_rebuilt():
    lin = nn.Linear(4, 3)

    def f(x):
        return Head(lin(x))(x[:, :3])

    before = len(_Registry.made)
    outs = _runs(f, lambda i: (torch.randn(2, 4) + i,))
    for eager, got in outs:
        assert type(got) is Head and got is not eager
        assert same(got.logits, eager.logits) and got.scale == eager.scale == 3
    assert len(_Registry.made) - before == 2 * 2 * len(outs)   # (the metaclass's own writes replayed)


def test_an_object_with_its_own_new_is_an_honest_break():
    class Interned:
        def __new__(cls, t):
            obj = super().__new__(cls)
            obj.t = t
            return obj

    def f(x):
        return Interned(x * 2)

    cm = magpy.compile(f, backend="eager")
    for _ in range(2):
        x = torch.randn(2)
        assert same(cm(x).t, x * 2)
    reasons = magpy.stats(cm).break_reasons
    assert reasons and "cannot reproduce an output of type" in reasons[0] and "Interned" in reasons[0]


def test_checkpointed_function_is_one_graph_with_eager_gradients():
    from torch.utils.checkpoint import checkpoint

    for reentrant in (False, True):
        torch.manual_seed(0)
        lin = nn.Linear(4, 4)

        def f(x, lin=lin, reentrant=reentrant):
            return checkpoint(lambda t: lin(t).relu(), x, use_reentrant=reentrant).sum()

        cm = magpy.compile(f, backend="eager")
        for _ in range(3):
            x = torch.randn(2, 4, requires_grad=True)
            f(x).backward()
            want = (lin.weight.grad.clone(), x.grad.clone())
            lin.weight.grad, x.grad = None, None
            cm(x).backward()
            assert same(lin.weight.grad, want[0]) and same(x.grad, want[1])
            lin.weight.grad = None
        st = magpy.stats(cm)
        assert st.records == 1 and st.graph_count == 1 and st.guard_hits == 2, st.break_reasons


def test_a_lazy_parameter_made_in_forward_is_a_graph_node_not_a_split():
    class Lazy(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = None

        def init_weight(self, n):
            self.weight = nn.Parameter(torch.ones(n) * 2)

        def forward(self, x):
            if self.weight is None:
                self.init_weight(x.shape[-1])
            return x * self.weight

    m, ref = Lazy(), Lazy()
    cm = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(2, 3)
        assert same(cm(x), ref(x))
    assert type(m.weight) is nn.Parameter and [n for n, _ in m.named_parameters()] == ["weight"]
    st = magpy.stats(cm)
    assert st.splits == 0 and not st.break_reasons and st.records == 2, st.break_reasons


def test_checkpoint_of_a_function_changing_state_with_autograd_breaks():
    """Eager's backward recomputes a checkpointed function: a BatchNorm inside moves its running
    statistics twice per step. A record runs it once, so such a call is left to eager."""
    import copy

    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4)
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return checkpoint(lambda t: self.lin(self.bn(t)), x, use_reentrant=False)

    torch.manual_seed(0)
    m = M()
    e = copy.deepcopy(m)
    cf = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(8, 4, requires_grad=True)
        cf(x).sum().backward()
        e(x.detach().clone().requires_grad_()).sum().backward()
        assert torch.allclose(m.bn.running_mean, e.bn.running_mean)
        assert int(m.bn.num_batches_tracked) == int(e.bn.num_batches_tracked)
    assert any("recomputes it" in r for r in magpy.stats(cf).break_reasons)
