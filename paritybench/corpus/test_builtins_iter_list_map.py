"""Corpus (iter): list(t), map over rows, sum(t), sorted-free reductions written as Python loops over a tensor."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RowNormalize(nn.Module):

    def forward(self, x):
        rows = list(x)
        normed = list(map(lambda r: r / (r.norm() + 1e-6), rows))
        return torch.stack(normed)


class SumOfRows(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(sum(x)), sum(self.fc(r) for r in x)


class MapOverSlices(nn.Module):
    """Applies a shared conv to each time slice of a video clip."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, clip):
        frames = clip.permute(2, 0, 1, 3, 4)
        return torch.stack(list(map(self.conv, frames)), dim=2)


TESTCASES = [
    (RowNormalize, lambda: ([], {}), lambda: ([torch.rand([4, 3])], {}), False),
    (SumOfRows, lambda: ([], {'dim': 3}), lambda: ([torch.rand([4, 3])], {}), False),
    (MapOverSlices, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'RowNormalize': {'dynamic': False, 'features': ['list(tensor)', 'list(map(lambda, rows))']},
    'SumOfRows': {'dynamic': False, 'features': ['sum(tensor)', 'sum(generator over rows)']},
    'MapOverSlices': {'dynamic': False, 'features': ['map(module, tensor)', 'permute then iterate']},
}
