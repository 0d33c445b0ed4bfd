"""Corpus (match): structural pattern matching (match/case) on configuration strings, tuples and dicts in __init__ and forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MatchActivation(nn.Module):

    def __init__(self, dim, act='gelu'):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act

    def forward(self, x):
        y = self.fc(x)
        match self.act:
            case 'relu':
                return F.relu(y)
            case 'gelu' | 'gelu_new':
                return F.gelu(y)
            case _:
                return y


class MatchShape(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        match x.shape:
            case (n, c, length):
                return self.conv1(x).mean(-1)
            case (n, c, h, w):
                return self.conv2(x).mean((-2, -1))
            case _:
                raise ValueError(f'unsupported shape {tuple(x.shape)}')


class MatchSpec(nn.Module):

    def __init__(self, dim, spec=None):
        super().__init__()
        spec = spec or {'type': 'mlp', 'hidden': 8}
        match spec:
            case {'type': 'mlp', 'hidden': int(hidden)}:
                self.body = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
            case {'type': 'linear'}:
                self.body = nn.Linear(dim, dim)
        self.spec = spec

    def forward(self, x):
        match self.spec:
            case {'residual': True}:
                return x + self.body(x)
            case _:
                return self.body(x)


TESTCASES = [
    (MatchActivation, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (MatchShape, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5])], {}), False),
    (MatchShape, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (MatchSpec, lambda: ([], {'dim': 4, 'spec': {'type': 'linear', 'residual': True}}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'MatchActivation': {'dynamic': False, 'features': ['match on a string with | pattern']},
    'MatchShape': {'dynamic': False, 'features': ['match on torch.Size with capture patterns (3-d)']},
    'MatchShape#2': {'dynamic': False, 'features': ['match on torch.Size with capture patterns (4-d)']},
    'MatchSpec': {'dynamic': False, 'features': ['mapping patterns', 'class pattern int(hidden)']},
}
