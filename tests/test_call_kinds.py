"""Figure 12 as a table (magpy.monitor.calls): the checks of ``CallRules._callee_kinds`` name exactly the
kinds of ``FIGURE_12``, in the table's order, and every kind has a handler on the monitor run."""
from __future__ import annotations

import ast
import inspect
import textwrap

import torch

from magpy.monitor import Monitor, calls


def _yielded_kinds() -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(calls.CallRules._callee_kinds)))
    yields = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Yield)), key=lambda n: (n.lineno, n.col_offset))
    return [n.value.value for n in yields]


def test_checks_name_the_table_kinds_in_order():
    kinds = _yielded_kinds()
    assert len(kinds) == len(set(kinds)), "a kind is named by two checks"
    assert kinds == list(calls.FIGURE_12)
    assert kinds[-1] == "unannotated native"   # (its handler always decides: a break)


def test_every_kind_has_a_handler():
    for kind, handler in calls.FIGURE_12.items():
        method = Monitor.rule(handler)
        assert callable(method), f"{kind}: no handler {handler}"
        assert list(inspect.signature(method).parameters) == ["self", "fs", "c"], handler
        assert method.__doc__, f"{handler} says why in a docstring"


def test_a_module_callee_is_probed_as_getattr_would_answer():
    """The call checks probe ``__self__``, ``__name__``, ``__code__``... of every callee; on a
    module they skip its ``__getattr__`` but answer what ``getattr`` answers, tables included."""
    from magpy.realtype import callable_attr

    class Named(torch.nn.Module):
        __qualname__ = "Named"   # (a class attribute: the normal lookup)

    m = torch.nn.Linear(2, 2)
    m.register_buffer("__name__", torch.ones(1))
    m.__dict__["__code__"] = "in the instance dict"
    cases = [(m, "__self__"), (m, "__name__"), (m, "__code__"), (m, "__objclass__"), (m, "weight"),
             (Named(), "__qualname__"), (len, "__self__"), (torch.relu, "__name__"),
             ([].append, "__self__"), (torch.Tensor.view, "__objclass__")]
    for obj, name in cases:
        got, expected = callable_attr(obj, name, "absent"), getattr(obj, name, "absent")
        assert got is expected or (type(got) is str and got == expected), (type(obj).__name__, name, got)


def test_a_callee_class_lookup_hook_is_not_run_by_the_probes():
    """A class's own Python ``__getattr__``/``__getattribute__`` is program code eager runs only
    where the program reads an attribute: the probes answer what the normal lookup finds (the
    instance and class dicts) and never call the hook."""
    from magpy.realtype import callable_attr

    calls = []

    class Hooked(torch.nn.Module):
        def __getattr__(self, name):
            calls.append(name)
            return "hooked" if name == "__self__" else super().__getattr__(name)

    class Counting:
        def __init__(self):
            self.__name__ = "counting"

        def __getattribute__(self, name):
            calls.append(name)
            return object.__getattribute__(self, name)

        def __call__(self, x):
            return x

    h, c = Hooked(), Counting()
    calls.clear()
    assert callable_attr(h, "__self__", "absent") == "absent"
    assert callable_attr(c, "__name__", "absent") == "counting"
    assert callable_attr(c, "__self__", "absent") == "absent"
    assert calls == []



def test_a_callable_object_whose_metaclass_has_a_lookup_hook_matches_eager_and_torch_compile():
    """A callable object whose class's metaclass has a Python ``__getattribute__`` (a registry or
    a lazy class), its state changed from outside between calls: every compiled call returns
    what eager and ``torch.compile`` return. Recorded as one graph, then answered from records."""
    import magpy

    class Meta(type):
        def __getattribute__(cls, name):
            return type.__getattribute__(cls, name)

    class Scale(metaclass=Meta):
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x * self.k

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.scale = Scale(2.0)

        def forward(self, x):
            return self.scale(self.lin(x)) + 1

    torch.manual_seed(0)
    net = Net()
    compiled, dynamo = magpy.compile(net, backend="eager"), torch.compile(net, backend="eager")
    x = torch.randn(2, 3)
    for k in (2.0, 2.0, 3.0, 3.0, 0.5):
        net.scale.k = k   # outside state changed between calls
        want = net(x)
        assert torch.equal(compiled(x), want), k
        assert torch.allclose(dynamo(x), want), k
    st = magpy.stats(compiled)
    assert st.graph_count >= 1 and st.guard_hits >= 2, st
