"""Corpus (iter): zip over tensors: rows of a batch paired with rows of another tensor or a Python list."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PerSampleScale(nn.Module):
    """Multiplies each sample by its own learned factor, one row at a time."""

    def __init__(self, batch, dim):
        super().__init__()
        self.scales = nn.Parameter(torch.rand(batch, dim))

    def forward(self, x):
        rows = [row * s for row, s in zip(x, self.scales)]
        return torch.stack(rows)


class PairedDistance(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.embed = nn.Linear(dim, dim)

    def forward(self, a, b):
        ea, eb = self.embed(a), self.embed(b)
        dists = [torch.dist(u, v) for u, v in zip(ea, eb)]
        return torch.stack(dists)


class WeightedRows(nn.Module):

    def __init__(self, weights=(0.2, 0.3, 0.5)):
        super().__init__()
        self.weights = list(weights)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        total = torch.zeros_like(x[0])
        for w, row in zip(self.weights, x):
            total = total + w * row
        return self.norm(total)


TESTCASES = [
    (PerSampleScale, lambda: ([], {'batch': 3, 'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (PairedDistance, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), torch.rand([5, 4])], {}), False),
    (WeightedRows, lambda: ([], {}), lambda: ([torch.rand([3, 2, 4])], {}), False),
]

EXPECTED = {
    'PerSampleScale': {'dynamic': False, 'features': ['zip(tensor, parameter)', 'list comprehension over rows']},
    'PairedDistance': {'dynamic': False, 'features': ['zip(tensor, tensor)', 'torch.dist per row']},
    'WeightedRows': {'dynamic': False, 'features': ['zip(list, tensor)', 'loop accumulation']},
}
