"""Corpus (dunder): helper objects with dunder methods: __getitem__ configs, __len__/__iter__ containers, __add__ on feature bundles."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Features:
    """A bundle of tensors that adds element-wise, as some detection code bases define."""

    def __init__(self, *tensors):
        self.tensors = list(tensors)

    def __add__(self, other):
        return Features(*(a + b for a, b in zip(self.tensors, other.tensors)))

    def __mul__(self, scale):
        return Features(*(t * scale for t in self.tensors))

    def __len__(self):
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)

    def __getitem__(self, i):
        return self.tensors[i]


class StageTable:
    def __init__(self, widths):
        self.widths = widths

    def __getitem__(self, key):
        stage, which = key
        return self.widths[stage][which]

    def __contains__(self, stage):
        return 0 <= stage < len(self.widths)


class BundleFusion(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.a = nn.Conv2d(channels, channels, 1)
        self.b = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, y):
        fa = Features(self.a(x), self.a(y))
        fb = Features(self.b(x), self.b(y))
        fused = (fa + fb) * 0.5
        return torch.cat(list(fused), 1), len(fused), fused[0].mean()


class TableBuilt(nn.Module):

    def __init__(self):
        super().__init__()
        self.table = StageTable([(2, 4), (4, 6)])
        self.layers = nn.ModuleList(nn.Conv2d(self.table[i, 0], self.table[i, 1], 1) for i in range(2) if i in self.table)

    def forward(self, x):
        x = self.layers[0](x)
        if 1 in self.table:
            x = self.layers[1](F.pad(x, (0, 0, 0, 0, 0, self.table[1, 0] - self.table[0, 1])))
        return x


TESTCASES = [
    (BundleFusion, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 4, 4])], {}), False),
    (TableBuilt, lambda: ([], {}), lambda: ([torch.rand([1, 2, 3, 3])], {}), False),
]

EXPECTED = {
    'BundleFusion': {'dynamic': False, 'features': ['__add__/__mul__ on a helper class', '__iter__', '__len__', '__getitem__']},
    'TableBuilt': {'dynamic': False, 'features': ['__getitem__ with tuple keys', '__contains__', 'F.pad']},
}
