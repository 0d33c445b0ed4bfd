"""Corpus (equalized): forward pre-hooks registered on the module itself in __init__: EqualLR-style weight scaling (StyleGAN/ProGAN)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class EqualLR:
    """Stores the raw weight as weight_orig and rescales it before every forward."""

    def __init__(self, name):
        self.name = name

    def compute_weight(self, module):
        weight = getattr(module, self.name + '_orig')
        fan_in = weight.data.size(1) * weight.data[0][0].numel()
        return weight * math.sqrt(2 / fan_in)

    @staticmethod
    def apply(module, name):
        fn = EqualLR(name)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + '_orig', nn.Parameter(weight.data))
        module.register_forward_pre_hook(fn)
        return fn

    def __call__(self, module, input):
        setattr(module, self.name, self.compute_weight(module))


def equal_lr(module, name='weight'):
    EqualLR.apply(module, name)
    return module


class EqualConv2d(nn.Module):

    def __init__(self, *args, **kwargs):
        super().__init__()
        conv = nn.Conv2d(*args, **kwargs)
        conv.weight.data.normal_()
        conv.bias.data.zero_()
        self.conv = equal_lr(conv)

    def forward(self, x):
        return self.conv(x)


class EqualLinear(nn.Module):

    def __init__(self, in_dim, out_dim):
        super().__init__()
        linear = nn.Linear(in_dim, out_dim)
        linear.weight.data.normal_()
        linear.bias.data.zero_()
        self.linear = equal_lr(linear)

    def forward(self, x):
        return self.linear(x)


class SelfScaledLinear(nn.Linear):
    """Registers its own pre-hook on itself: the compiled module is the hooked one."""

    def __init__(self, in_dim, out_dim):
        super().__init__(in_dim, out_dim)
        self.scale = 1 / math.sqrt(in_dim)
        self.register_forward_pre_hook(lambda mod, inputs: (inputs[0] * mod.scale,))

    def forward(self, x):
        return super().forward(x)


class StyleMLP(nn.Module):

    def __init__(self, dim, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(EqualLinear(dim, dim) for _ in range(depth))

    def forward(self, z):
        z = z * torch.rsqrt(z.pow(2).mean(1, keepdim=True) + 1e-8)
        for layer in self.layers:
            z = F.leaky_relu(layer(z), 0.2)
        return z


TESTCASES = [
    (EqualConv2d, lambda: ([2, 4, 3], {'padding': 1}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (SelfScaledLinear, lambda: ([], {'in_dim': 4, 'out_dim': 3}), lambda: ([torch.rand([2, 4])], {}), False),
    (StyleMLP, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
]

EXPECTED = {
    'EqualConv2d': {'dynamic': False, 'features': ['forward pre-hook object setting a weight attribute', '*args/**kwargs to Conv2d']},
    'SelfScaledLinear': {'dynamic': False, 'features': ['pre-hook registered on self returning new inputs', 'super().forward']},
    'StyleMLP': {'dynamic': False, 'features': ['EqualLR hooks on every submodule', 'pixel norm']},
}
