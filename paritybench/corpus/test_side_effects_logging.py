"""Corpus (effects): bookkeeping in forward that does not feed the math: loss dicts on self, Python call counters, shape logs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LossLogger(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.logs = {}

    def forward(self, x, target):
        y = self.fc(x)
        mse = F.mse_loss(y, target)
        l1 = F.l1_loss(y, target)
        self.logs['mse'] = mse.detach()
        self.logs['l1'] = l1.detach()
        return mse + 0.1 * l1


class ShapeHistory(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, 2, 1) for _ in range(2))
        self.history = []

    def forward(self, x):
        self.history.clear()
        for conv in self.convs:
            x = conv(x)
            self.history.append(tuple(x.shape))
        return x


TESTCASES = [
    (LossLogger, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (ShapeHistory, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'LossLogger': {'dynamic': False, 'features': ['dict on self written with detached tensors']},
    'ShapeHistory': {'dynamic': False, 'features': ['list on self cleared and appended', 'tuple(shape)']},
}
