"""The program figures of the MagPy paper, compiled and compared with eager.

Each test: a user program, calls with external state changed between them, the
expected eager result, and the expected number of graphs.
"""
from __future__ import annotations

import torch
import torch.nn as nn
from conftest import same

import magpy

# -- Figure 2: external reads (dims list, attributes) decide the graph ----------------------------------


class Fig2(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.dim = 1

    def forward(self, x, dims):
        perm = list(dims)
        x = x.permute(*perm)
        return torch.softmax(x * self.scale, self.dim)


def test_figure2_external_reads():
    m = Fig2()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(2, 3, 4)
    for _ in range(3):
        assert same(cm(x, [0, 2, 1]), m(x, [0, 2, 1]))
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.guard_hits, st.graph_count) == (1, 2, 1)
    m.scale = 3.0                      # changed from outside: a new record, not a stale graph
    assert same(cm(x, [0, 2, 1]), m(x, [0, 2, 1]))
    assert same(cm(x, [2, 1, 0]), m(x, [2, 1, 0]))
    assert magpy.stats(cm).monitor_runs == 3


# -- Figure 3a: builtins ------------------------------------------------------------------------------


def fig3a_permute(x):
    perm = [2, 1]
    perm.extend(i for i in range(x.dim()) if i not in perm)
    return x.permute(*perm)


class Fig3aEnumerate(nn.Module):
    def __init__(self):
        super().__init__()
        self.down_blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        outs = {}
        for i, block in enumerate(self.down_blocks, 2):
            x = block(x)
            outs[f"layer_{i}"] = x
        return outs


def fig3a_numel(x):
    return x * torch.Size(x.shape).numel()


def test_figure3a_builtins():
    x = torch.randn(2, 3, 4)
    for fn in (fig3a_permute, fig3a_numel):
        cm = magpy.compile(fn, backend="eager")
        for _ in range(2):
            assert same(cm(x), fn(x))
        assert magpy.stats(cm).graph_count == 1 and magpy.stats(cm).monitor_runs == 1
    m = Fig3aEnumerate()
    cm = magpy.compile(m, backend="eager")
    y = torch.randn(3, 4)
    for _ in range(2):
        assert same(cm(y), m(y))
    assert list(cm(y)) == ["layer_2", "layer_3", "layer_4"]
    assert magpy.stats(cm).graph_count == 1


# -- Figure 3b: super().forward in a subclass of nn.LeakyReLU ----------------------------------------


class EqualLeakyReLU(nn.LeakyReLU):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


def test_figure3b_super_forward():
    m = EqualLeakyReLU(0.5)
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(5)
    for _ in range(2):
        assert same(cm(x), m(x))
    m.scale = 4.0
    assert same(cm(x), m(x))
    m.negative_slope = 0.3
    assert same(cm(x), m(x))
    assert magpy.stats(cm).monitor_runs == 3


# -- Figure 3c: attribute written, then read inside forward --------------------------------------------


class Fig3c(nn.Module):
    def forward(self, inp, mask, dim):
        self.dim = dim
        output = inp.masked_fill(mask, -1e4)
        output = torch.softmax(output, self.dim)
        return output


def test_figure3c_side_effect_attribute():
    m, m_ref = Fig3c(), Fig3c()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(3, 4)
    mask = x > 0
    for dim in (1, 1, 0):
        assert same(cm(x, mask, dim), m_ref(x, mask, dim))
        assert m.dim == m_ref.dim == dim
    assert magpy.stats(cm).monitor_runs == 2


# -- Figure 4: branch on a static flag, global side effect ---------------------------------------------

z = None


def fig4_model(x, run_act):
    global z
    y = x * 2
    if run_act:
        y = torch.relu(y)
    z = y + 1
    return y


def test_figure4_static_branch_and_global():
    global z
    x = torch.randn(2, 2)
    cm = magpy.compile(fig4_model, backend="eager")
    for flag in (True, True, False, True):
        out = cm(x, flag)
        z_c = z
        ref = fig4_model(x, flag)
        assert same(out, ref) and same(z_c, z)
    assert magpy.stats(cm).monitor_runs == 2 and magpy.stats(cm).records == 2


# -- Figures 9/11: x[0] += y; x.append(x[0] * y); a = tuple(x) ----------------------------------------


def fig9(x, y, z):
    x[0] += y
    x.append(x[0] * y)
    a = tuple(x)
    return a


def test_figure9_list_inplace_append_tuple():
    cm = magpy.compile(fig9, backend="eager")
    for _ in range(3):
        t = torch.rand(3, 3)
        x_c, x_e = [t.clone()], [t.clone()]
        a_c, a_e = cm(x_c, 2.0, 3.0), fig9(x_e, 2.0, 3.0)
        assert same(a_c, a_e)
        assert same(x_c, x_e) and len(x_c) == 2     # the caller's list mutated as eager does
        assert a_c[0] is x_c[0] and a_c[1] is x_c[1]  # aliasing reproduced
    assert magpy.stats(cm).monitor_runs == 1
    cm([torch.rand(3, 3)], 5.0, 3.0)                # y changed: new record
    assert magpy.stats(cm).monitor_runs == 2


# -- Figure 13: attribute read and write --------------------------------------------------------------


class V:
    def __init__(self):
        self.x = 1.0
        self.y = torch.ones(2)


def fig13(v, t):
    v.x = 2.0
    a = v.x
    b = v.y
    return t * a + b


def test_figure13_attribute_read_write():
    cm = magpy.compile(fig13, backend="eager")
    t = torch.randn(2)
    for i in range(3):
        v1, v2 = V(), V()
        v1.y = v2.y = torch.full((2,), float(i))
        assert same(cm(v1, t), fig13(v2, t))
        assert v1.x == v2.x == 2.0
    assert magpy.stats(cm).monitor_runs == 1   # tensor values may change without a recompile


# -- Terra Figure 1c: an attribute changed from outside after some calls --------------------------------


class Terra1c(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.use_residual = True

    def forward(self, x):
        y = self.fc(x)
        if self.use_residual:
            y = y + x
        return y


def test_terra_figure1c_attribute_changed_outside():
    m = Terra1c()
    cm = magpy.compile(m, backend="eager")
    x = torch.randn(2, 4)
    for _ in range(3):
        assert same(cm(x), m(x))
    m.use_residual = False
    assert same(cm(x), m(x))
    with torch.no_grad():
        m.fc.weight.mul_(2)             # parameter values change: same graph, new values
    assert same(cm(x), m(x))
    m.fc = nn.Linear(4, 4)              # a new submodule: identity guard fails
    assert same(cm(x), m(x))
    assert magpy.stats(cm).monitor_runs == 3
