"""Corpus (closures): closures: activation factories, nonlocal counters inside forward and functions built in __init__."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def make_activation(kind, slope=0.1):
    if kind == 'leaky':
        def act(x):
            return torch.where(x > 0, x, x * slope)
    elif kind == 'swish':
        def act(x):
            return x * torch.sigmoid(x)
    else:
        act = torch.relu
    return act


class ClosureActivation(nn.Module):

    def __init__(self, dim, kind='leaky'):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = make_activation(kind, slope=0.2)

    def forward(self, x):
        return self.act(self.fc(x))


class NonlocalAccumulator(nn.Module):

    def __init__(self, dim, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        total = torch.zeros_like(x)
        steps = 0

        def run(layer, h):
            nonlocal total, steps
            h = torch.relu(layer(h))
            total = total + h
            steps += 1
            return h

        for layer in self.layers:
            x = run(layer, x)
        return total / steps


class ScaledResidual(nn.Module):

    def __init__(self, dim, scale=0.5):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.residual = (lambda s: lambda x, y: x + s * y)(scale)

    def forward(self, x):
        return self.residual(x, self.body(x))


TESTCASES = [
    (ClosureActivation, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (ClosureActivation, lambda: ([], {'dim': 4, 'kind': 'swish'}), lambda: ([torch.randn([2, 4])], {}), False),
    (NonlocalAccumulator, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ScaledResidual, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ClosureActivation': {'dynamic': False, 'features': ['closure over a slope', 'function attribute on module']},
    'ClosureActivation#1': {'dynamic': False, 'features': ['closure returned by a factory']},
    'NonlocalAccumulator': {'dynamic': False, 'features': ['nested function with nonlocal tensor and int']},
    'ScaledResidual': {'dynamic': False, 'features': ['lambda returning lambda']},
}
