"""Corpus (decorators): decorators on forward and helpers: functools.wraps wrappers, argument-checking decorators, parametrized decorators."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def residual(fn):
    @functools.wraps(fn)
    def wrapper(self, x, *args, **kwargs):
        return x + fn(self, x, *args, **kwargs)
    return wrapper


def clamp_output(lo, hi):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs).clamp(lo, hi)
        return wrapper
    return decorate


def ensure_4d(fn):
    def wrapper(self, x):
        squeeze = x.dim() == 3
        if squeeze:
            x = x.unsqueeze(0)
        y = fn(self, x)
        return y.squeeze(0) if squeeze else y
    return wrapper


class ResidualMLP(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)

    @residual
    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class ClampedHead(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 2)

    @clamp_output(-1.0, 1.0)
    def forward(self, x):
        return self.fc(x) * 3


class FlexibleConv(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    @ensure_4d
    def forward(self, x):
        return torch.relu(self.conv(x))


TESTCASES = [
    (ResidualMLP, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ClampedHead, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (FlexibleConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 5, 5])], {}), False),
    (FlexibleConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 5, 5])], {}), False),
]

EXPECTED = {
    'ResidualMLP': {'dynamic': False, 'features': ['functools.wraps decorator on forward', '*args/**kwargs forwarding']},
    'ClampedHead': {'dynamic': False, 'features': ['parametrized decorator', 'closure over bounds']},
    'FlexibleConv': {'dynamic': False, 'features': ['decorator branching on x.dim()']},
    'FlexibleConv#3': {'dynamic': False, 'features': ['decorator branching on x.dim()', '4-d input']},
}
