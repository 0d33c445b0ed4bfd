"""Corpus (side effects): caches on self filled on the first call (positional tables, masks, lazy buffers)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CachedRelativePosition(nn.Module):

    def __init__(self, heads=2, max_dist=4):
        super().__init__()
        self.table = nn.Parameter(torch.linspace(-1, 1, heads * (2 * max_dist + 1)).view(2 * max_dist + 1, heads))
        self.max_dist = max_dist
        self._cache = {}

    def index(self, n):
        if n not in self._cache:
            pos = torch.arange(n)
            rel = (pos[None, :] - pos[:, None]).clamp(-self.max_dist, self.max_dist) + self.max_dist
            self._cache[n] = rel
        return self._cache[n]

    def forward(self, scores):
        n = scores.shape[-1]
        bias = self.table[self.index(n)].permute(2, 0, 1)
        return scores + bias


class CausalMaskCache(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)
        self.mask = None

    def forward(self, x):
        n = x.shape[1]
        if self.mask is None or self.mask.shape[-1] != n:
            self.mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        q, k = self.qk(x).chunk(2, -1)
        att = (q @ k.transpose(-1, -2)).masked_fill(self.mask, float('-inf'))
        return att.softmax(-1)


class LazyScale(nn.Module):

    def __init__(self):
        super().__init__()
        self.initialized = False
        self.register_buffer('scale', torch.ones(1))

    def forward(self, x):
        if not self.initialized:
            self.scale = torch.full((x.shape[-1],), 0.5)
            self.initialized = True
        return x * self.scale


TESTCASES = [
    (CachedRelativePosition, lambda: ([], {}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (CausalMaskCache, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (LazyScale, lambda: ([], {}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'CachedRelativePosition': {'dynamic': False, 'features': ['dict cache on self keyed by int', 'advanced indexing']},
    'CausalMaskCache': {'dynamic': False, 'features': ['tensor cache on self', 'None check', 'float("-inf")']},
    'LazyScale': {'dynamic': False, 'features': ['lazy init on first call', 'buffer reassigned', 'bool flag attribute']},
}
