"""Corpus (builtins): star-args forwarding, nested unpacking and dict merging between layers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Forwarder(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.inner = nn.Bilinear(dim, dim, dim)

    def forward(self, *inputs, **kwargs):
        scale = kwargs.pop('scale', 1.0)
        return self.inner(*inputs) * scale


class PairSwap(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.f = nn.Linear(dim, dim)
        self.g = nn.Linear(dim, dim)

    def forward(self, pair):
        (a, b), extra = pair, None
        for _ in range(2):
            a, b = b, a + self.f(b)
        (first, *rest), last = [a, b, self.g(a)], b
        return first + sum(rest) - last


class KwargsMerge(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.defaults = {'alpha': 0.5, 'beta': 2.0}
        self.lin = nn.Linear(dim, dim)

    def blend(self, x, y, alpha, beta, **unused):
        return alpha * x + beta * y

    def forward(self, x, **overrides):
        options = {**self.defaults, **overrides, 'gamma': 1}
        return self.blend(self.lin(x), x, **options)


TESTCASES = [
    (Forwarder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {'scale': 0.5}), False),
    (PairSwap, lambda: ([], {'dim': 4}), lambda: ([(torch.rand([2, 4]), torch.rand([2, 4]))], {}), False),
    (KwargsMerge, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {'beta': 0.25}), False),
]

EXPECTED = {
    'Forwarder': {'dynamic': False, 'features': ['*args/**kwargs', 'dict.pop default']},
    'PairSwap': {'dynamic': False, 'features': ['tuple-of-tensors input', 'nested unpacking', 'starred assignment', 'swap']},
    'KwargsMerge': {'dynamic': False, 'features': ['{**a, **b}', '**kwargs call', 'ignored **unused']},
}
