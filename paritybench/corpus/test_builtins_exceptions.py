"""Corpus (exceptions): try/except inside forward: optional keys with KeyError fallbacks, AttributeError probing, for/else and finally."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class OptionalInputsDict(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, batch):
        x = batch['x']
        try:
            mask = batch['mask']
        except KeyError:
            mask = torch.ones_like(x)
        return self.fc(x * mask)


class ProbeAttribute(nn.Module):

    def __init__(self, dim, with_norm=False):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        if with_norm:
            self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        y = self.fc(x)
        try:
            y = self.norm(y)
        except AttributeError:
            y = y / (y.norm(dim=-1, keepdim=True) + 1e-6)
        return y


class SearchForElse(nn.Module):

    def __init__(self, dim, names=('proj_a', 'proj_b')):
        super().__init__()
        self.proj_b = nn.Linear(dim, dim)
        self.names = names
        self.fallback = nn.Identity()

    def forward(self, x):
        for name in self.names:
            if hasattr(self, name):
                layer = getattr(self, name)
                break
        else:
            layer = self.fallback
        try:
            return layer(x)
        finally:
            self.last_layer = type(layer).__name__


TESTCASES = [
    (OptionalInputsDict, lambda: ([], {'dim': 4}), lambda: ([{'x': torch.rand([2, 4])}], {}), False),
    (ProbeAttribute, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ProbeAttribute, lambda: ([], {'dim': 4, 'with_norm': True}), lambda: ([torch.rand([2, 4])], {}), False),
    (SearchForElse, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'OptionalInputsDict': {'dynamic': False, 'features': ['try/except KeyError', 'dict input']},
    'ProbeAttribute': {'dynamic': False, 'features': ['try/except AttributeError on a missing submodule']},
    'ProbeAttribute#2': {'dynamic': False, 'features': ['try succeeds']},
    'SearchForElse': {'dynamic': False, 'features': ['for/else with break', 'try/finally attribute write', 'type().__name__']},
}
