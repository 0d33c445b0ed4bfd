"""Corpus (dynamic typing): duck typing with hasattr, try/except and getattr defaults."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DuckInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        if hasattr(x, 'tensors'):
            x = x.tensors
        try:
            n = len(x)
        except TypeError:
            n = 1
        return self.fc(x) * n


class Batch:

    def __init__(self, tensors, scale):
        self.tensors = tensors
        self.scale = scale


class BatchConsumer(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, batch):
        scale = getattr(batch, 'scale', 1.0)
        weight = getattr(batch, 'weight', None)
        y = self.fc(batch.tensors) * scale
        return y if weight is None else y * weight


class SafeLookup(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleDict({'a': nn.Linear(dim, dim)})

    def forward(self, x, names=('a', 'missing')):
        out = x
        for name in names:
            try:
                out = self.layers[name](out)
            except KeyError:
                out = out * 2
        return out


TESTCASES = [
    (DuckInput, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (BatchConsumer, lambda: ([], {'dim': 4}), lambda: ([Batch(torch.rand([2, 4]), 0.5)], {}), False),
    (SafeLookup, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'DuckInput': {'dynamic': False, 'features': ['hasattr on input', 'try/except around len']},
    'BatchConsumer': {'dynamic': False, 'features': ['user object input', 'getattr default']},
    'SafeLookup': {'dynamic': False, 'features': ['KeyError caught in forward', 'tuple default argument']},
}
