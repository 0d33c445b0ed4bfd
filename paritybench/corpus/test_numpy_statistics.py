"""Corpus (statistics): statistics from static numpy arrays: class weights from counts, normalising constants, percentiles of fixed tables."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class WeightedCE(nn.Module):

    def __init__(self, dim, counts=(50, 30, 20)):
        super().__init__()
        counts = np.asarray(counts, dtype=np.float64)
        self.class_weights = counts.sum() / (len(counts) * counts)
        self.head = nn.Linear(dim, len(counts))

    def forward(self, x, y):
        w = torch.tensor(self.class_weights, dtype=torch.float32)
        return F.cross_entropy(self.head(x), y, weight=w)


class StandardizedInputs(nn.Module):

    def __init__(self, dim=3):
        super().__init__()
        table = np.linspace(0, 10, 12 * dim).reshape(12, dim)
        self.mean, self.std = table.mean(0), table.std(0)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        mean = torch.from_numpy(self.mean.astype(np.float32))
        std = torch.from_numpy(self.std.astype(np.float32))
        return self.fc((x - mean) / std)


class PercentileClip(nn.Module):

    def __init__(self):
        super().__init__()
        self.reference = np.arange(100, dtype=np.float32) / 100

    def forward(self, x):
        lo, hi = np.percentile(self.reference, [5, 95])
        return x.clamp(float(lo), float(hi)), float(np.median(self.reference))


TESTCASES = [
    (WeightedCE, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), torch.randint(0, 3, [5])], {}), False),
    (StandardizedInputs, lambda: ([], {}), lambda: ([torch.rand([2, 3])], {}), False),
    (PercentileClip, lambda: ([], {}), lambda: ([torch.rand([3, 3])], {}), False),
]

EXPECTED = {
    'WeightedCE': {'dynamic': False, 'features': ['numpy class weights to torch.tensor', 'cross_entropy weight=']},
    'StandardizedInputs': {'dynamic': False, 'features': ['ndarray.mean/std from __init__', 'astype + from_numpy in forward']},
    'PercentileClip': {'dynamic': False, 'features': ['np.percentile unpacking on a static array', 'np.median float output']},
}
