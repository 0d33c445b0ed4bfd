"""Corpus (itertools): itertools in model code: product of kernel offsets, chain of parameter groups, accumulate for offsets, pairwise stages."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ShiftConv(nn.Module):
    """Sums shifted copies for every (dy, dx) offset in a square neighbourhood."""

    def __init__(self, channels, radius=1):
        super().__init__()
        self.offsets = list(itertools.product(range(-radius, radius + 1), repeat=2))
        self.weights = nn.Parameter(torch.ones(len(self.offsets)) / len(self.offsets))
        self.mix = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        out = sum(w * torch.roll(x, shifts=(dy, dx), dims=(2, 3)) for w, (dy, dx) in zip(self.weights, self.offsets))
        return self.mix(out)


class CumulativeSplits(nn.Module):

    def __init__(self, sizes=(2, 3, 1)):
        super().__init__()
        self.sizes = sizes
        self.bounds = [0, *itertools.accumulate(sizes)]
        self.heads = nn.ModuleList(nn.Linear(s, 1) for s in sizes)

    def forward(self, x):
        parts = [x[:, a:b] for a, b in itertools.pairwise(self.bounds)]
        return torch.cat([h(p) for h, p in zip(self.heads, parts)], -1)


class ChainedStages(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.encoder = nn.ModuleList(nn.Linear(dim, dim) for _ in range(2))
        self.decoder = nn.ModuleList(nn.Linear(dim, dim) for _ in range(2))

    def forward(self, x):
        for layer in itertools.chain(self.encoder, reversed(self.decoder)):
            x = torch.tanh(layer(x))
        pairs = list(itertools.zip_longest([1, 2, 3], ['a'], fillvalue='-'))
        return x, len(pairs), list(itertools.islice(itertools.count(5, 2), 3))


TESTCASES = [
    (ShiftConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (CumulativeSplits, lambda: ([], {}), lambda: ([torch.rand([2, 6])], {}), False),
    (ChainedStages, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ShiftConv': {'dynamic': False, 'features': ['itertools.product(repeat=2)', 'torch.roll with tuple shifts', 'sum(generator)']},
    'CumulativeSplits': {'dynamic': False, 'features': ['itertools.accumulate', 'itertools.pairwise slicing']},
    'ChainedStages': {'dynamic': False, 'features': ['itertools.chain of ModuleLists', 'zip_longest', 'islice(count)']},
}
