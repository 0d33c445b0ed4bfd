"""Corpus (effects): caches held on modules and shared across instances: class-level dict caches, positional tables grown on demand, memoised kernels."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SharedGridCache(nn.Module):
    _grids = {}

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels + 2, channels, 1)

    def grid(self, h, w):
        key = (h, w)
        if key not in SharedGridCache._grids:
            ys = torch.linspace(-1, 1, h).view(h, 1).expand(h, w)
            xs = torch.linspace(-1, 1, w).view(1, w).expand(h, w)
            SharedGridCache._grids[key] = torch.stack([xs, ys])
        return SharedGridCache._grids[key]

    def forward(self, x):
        g = self.grid(*x.shape[-2:]).unsqueeze(0).expand(x.shape[0], -1, -1, -1)
        return self.conv(torch.cat([x, g], 1))


class GrowingPositionTable(nn.Module):
    """Extends its sinusoid table only when a longer input arrives (the usual fairseq idiom)."""

    def __init__(self, dim, init_len=2):
        super().__init__()
        self.dim = dim
        self.table = self._make(init_len)

    def _make(self, n):
        pos = torch.arange(n).float()[:, None]
        div = torch.exp(torch.arange(0, self.dim, 2).float() * -(math.log(10000.0) / self.dim))
        return torch.cat([torch.sin(pos * div), torch.cos(pos * div)], 1)

    def forward(self, x):
        n = x.shape[1]
        if self.table.shape[0] < n:
            self.table = self._make(n)
        return x + self.table[:n]


TESTCASES = [
    (SharedGridCache, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 3, 4])], {}), False),
    (GrowingPositionTable, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
]

EXPECTED = {
    'SharedGridCache': {'dynamic': False, 'features': ['class-level dict cache keyed by shape', 'expand of a cached tensor']},
    'GrowingPositionTable': {'dynamic': False, 'features': ['attribute tensor replaced when too short (first call only)']},
}
