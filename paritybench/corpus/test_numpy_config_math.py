"""Corpus (config): numpy used for configuration arithmetic in forward: np.cumsum offsets, np.linspace drop rates, np.round sizes, np.where on static arrays."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CumsumSplit(nn.Module):

    def __init__(self, sizes=(2, 3, 3)):
        super().__init__()
        self.sizes = np.array(sizes)
        self.heads = nn.ModuleList(nn.Linear(int(s), 1) for s in sizes)

    def forward(self, x):
        ends = np.cumsum(self.sizes)
        starts = ends - self.sizes
        return torch.cat([h(x[:, int(a):int(b)]) for h, a, b in zip(self.heads, starts, ends)], -1)


class LinspaceDropRates(nn.Module):

    def __init__(self, dim, depth=4, max_rate=0.3):
        super().__init__()
        self.rates = np.linspace(0, max_rate, depth)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        for rate, layer in zip(self.rates, self.layers):
            x = x + layer(x) * float(1 - rate)
        return x


class StaticWhere(nn.Module):

    def __init__(self, channels=4):
        super().__init__()
        self.widths = np.array([3, 0, 2, 5])[:channels]
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        active = np.where(self.widths > 0)[0]
        scale = np.round(self.widths[active] / self.widths.max(), 2)
        y = self.conv(x)[:, active]
        return y * torch.tensor(scale, dtype=torch.float32).view(1, -1, 1, 1)


TESTCASES = [
    (CumsumSplit, lambda: ([], {}), lambda: ([torch.rand([2, 8])], {}), False),
    (LinspaceDropRates, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (StaticWhere, lambda: ([], {}), lambda: ([torch.rand([1, 4, 3, 3])], {}), False),
]

EXPECTED = {
    'CumsumSplit': {'dynamic': False, 'features': ['np.cumsum offsets', 'int(numpy scalar) slicing']},
    'LinspaceDropRates': {'dynamic': False, 'features': ['iterating a numpy array', 'float(numpy scalar)']},
    'StaticWhere': {'dynamic': False, 'features': ['np.where on a module array', 'np.round', 'index by numpy result']},
}
