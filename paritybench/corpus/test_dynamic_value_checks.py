"""Corpus (value): value checks that read tensors: asserts on ranges, NaN guards with fallbacks, bool(tensor) on flags."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AssertRange(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, probs):
        assert (probs >= 0).all() and (probs <= 1).all(), 'probabilities out of range'
        return self.fc(probs)


class NanFallback(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = torch.sqrt(self.fc(x))
        if torch.isnan(y).any():
            y = torch.sqrt(self.fc(x).clamp(min=0))
        return y


class FlagTensor(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, dim)
        self.b = nn.Linear(dim, dim)

    def forward(self, x, use_a):
        return self.a(x) if bool(use_a) else self.b(x)


TESTCASES = [
    (AssertRange, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NanFallback, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (FlagTensor, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([]) > 0.5], {}), False),
]

EXPECTED = {
    'AssertRange': {'dynamic': True, 'features': ['assert on tensor comparisons']},
    'NanFallback': {'dynamic': True, 'features': ['torch.isnan(...).any() branch']},
    'FlagTensor': {'dynamic': True, 'features': ['bool(tensor) input flag']},
}
