"""Corpus (effects): attributes set on tensors: getattr(t, '_flag', False) markers on parameters and outputs, hasattr checks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class NoDecayMarked(nn.Module):
    """Marks some parameters with _no_weight_decay and reads the marker in forward."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gain = nn.Parameter(torch.ones(dim))
        self.gain._no_weight_decay = True

    def forward(self, x):
        params = [self.fc.weight, self.fc.bias, self.gain]
        penalty = sum(p.pow(2).sum() for p in params if not getattr(p, '_no_weight_decay', False))
        return self.fc(x) * self.gain, penalty


class SequenceParallelFlag(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.norm.weight.sequence_parallel = True
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.norm(x)
        if getattr(self.norm.weight, 'sequence_parallel', False):
            y = y * 0.5
        if hasattr(self.fc.weight, 'sequence_parallel'):
            y = y * 2.0
        return self.fc(y)


class TaggedOutputs(nn.Module):
    """Tags intermediate tensors with a _level attribute and dispatches on it."""

    def __init__(self, channels):
        super().__init__()
        self.down = nn.Conv2d(channels, channels, 3, 2, 1)

    def forward(self, x):
        feats = []
        for level in range(3):
            x = self.down(x)
            x._level = level
            feats.append(x)
        return [f * (1 + getattr(f, '_level', 0)) for f in feats]


TESTCASES = [
    (NoDecayMarked, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SequenceParallelFlag, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (TaggedOutputs, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'NoDecayMarked': {'dynamic': False, 'features': ["getattr(param, '_no_weight_decay', False)", 'sum over a parameter list with a filter']},
    'SequenceParallelFlag': {'dynamic': False, 'features': ['attribute on a parameter read with getattr/hasattr']},
    'TaggedOutputs': {'dynamic': False, 'features': ['attribute written on an intermediate tensor', 'getattr with default']},
}
