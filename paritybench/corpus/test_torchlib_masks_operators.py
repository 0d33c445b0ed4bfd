"""Corpus (masks): boolean masks whose results only flow into operators: x[mask].mean(), out[out < 0] = 0, masked_select(...).sum()."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MaskedMeanLoss(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, x, target, valid):
        pred = self.fc(x).squeeze(-1)
        return F.smooth_l1_loss(pred[valid], target[valid]) + (pred[valid] - target[valid]).abs().mean()


class ClampNegatives(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        out = self.conv(x)
        out[out < 0] = 0
        out[out > 1] = 1.0
        return out


class MaskedSelectEnergy(nn.Module):

    def __init__(self, threshold=0.5):
        super().__init__()
        self.threshold = threshold

    def forward(self, x):
        high = torch.masked_select(x, x > self.threshold)
        low = x[x <= self.threshold]
        return high.sum() - low.pow(2).sum(), high.mean()


class IgnoreIndexAccuracy(nn.Module):

    def __init__(self, dim, classes=4, ignore_index=-1):
        super().__init__()
        self.head = nn.Linear(dim, classes)
        self.ignore_index = ignore_index

    def forward(self, x, labels):
        pred = self.head(x).argmax(-1)
        keep = labels != self.ignore_index
        return (pred[keep] == labels[keep]).float().mean(), F.cross_entropy(self.head(x), labels, ignore_index=self.ignore_index)


TESTCASES = [
    (MaskedMeanLoss, lambda: ([], {'dim': 4}), lambda: ([torch.rand([6, 4]), torch.rand([6]), torch.tensor([True, False, True, True, False, True])], {}), False),
    (ClampNegatives, lambda: ([], {'channels': 2}), lambda: ([torch.randn([1, 2, 4, 4])], {}), False),
    (MaskedSelectEnergy, lambda: ([], {}), lambda: ([torch.rand([3, 5])], {}), False),
    (IgnoreIndexAccuracy, lambda: ([], {'dim': 4}), lambda: ([torch.rand([6, 4]), torch.tensor([0, 2, -1, 3, 1, -1])], {}), False),
]

EXPECTED = {
    'MaskedMeanLoss': {'dynamic': False, 'features': ['x[mask] into a loss', 'x[mask].mean()']},
    'ClampNegatives': {'dynamic': False, 'features': ['out[out < 0] = 0', 'masked assignment of a float']},
    'MaskedSelectEnergy': {'dynamic': False, 'features': ['masked_select(...).sum()', 'x[x <= t]']},
    'IgnoreIndexAccuracy': {'dynamic': False, 'features': ['labels != ignore_index mask', 'masked comparison mean']},
}
