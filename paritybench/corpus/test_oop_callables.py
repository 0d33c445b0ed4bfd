"""Corpus (oop): callable non-Module objects, closures and nested functions used as layers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Normalizer:
    """A plain object with __call__, kept on the module like a layer."""

    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, x):
        return (x - self.mean) / self.std


class Preprocessed(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.norm = Normalizer(0.5, 0.25)
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        return self.lin(self.norm(x))


def make_gate(kind):
    if kind == 'sigmoid':
        def gate(x, y):
            return x * torch.sigmoid(y)
    else:
        def gate(x, y):
            return x * torch.tanh(y)
    return gate


class GatedUnit(nn.Module):

    def __init__(self, dim, kind='sigmoid'):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.gate = make_gate(kind)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return self.gate(a, b)


class ClosureScale(nn.Module):

    def __init__(self, dim, factor=3.0):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.factor = factor

    def forward(self, x):
        offset = x.mean()

        def scaled(t):
            return t * self.factor - offset

        apply_twice = lambda f, t: f(f(t))
        return apply_twice(scaled, self.lin(x))


class Policy:

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, module, x):
        return module(x) * self.scale


class PolicyRunner(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)])
        self.policies = [Policy(0.5), Policy(2.0)]

    def forward(self, x):
        for layer, policy in zip(self.layers, self.policies):
            x = policy(layer, x)
        return x


TESTCASES = [
    (Preprocessed, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GatedUnit, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (GatedUnit, lambda: ([], {'dim': 4, 'kind': 'tanh'}), lambda: ([torch.rand([3, 4])], {}), False),
    (ClosureScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (PolicyRunner, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'Preprocessed': {'dynamic': False, 'features': ['__call__ on a plain object']},
    'GatedUnit': {'dynamic': False, 'features': ['function factory', 'closure stored as attribute']},
    'GatedUnit#2': {'dynamic': False, 'features': ['function factory (other branch)']},
    'ClosureScale': {'dynamic': False, 'features': ['nested def capturing a tensor', 'lambda', 'higher-order call']},
    'PolicyRunner': {'dynamic': False, 'features': ['list of callable objects', 'zip']},
}
