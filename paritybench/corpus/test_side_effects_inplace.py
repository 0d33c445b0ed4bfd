"""Corpus (side effects): in-place tensor updates of buffers and inputs (EMA statistics, inplace activations)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class EMAStats(nn.Module):

    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer('running_mean', torch.zeros(dim))

    def forward(self, x):
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(x.mean(0), alpha=self.momentum)
        return x - self.running_mean


class InplaceInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        x += 1
        x.mul_(0.5)
        return self.fc(x)


class InplaceActs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)
        self.drop = nn.Dropout(0.1, inplace=True)

    def forward(self, x):
        y = self.fc(x)
        y = self.act(y)
        y = self.drop(y)
        y[:, 0] = 0
        return y


TESTCASES = [
    (EMAStats, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (InplaceInput, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (InplaceActs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'EMAStats': {'dynamic': False, 'features': ['in-place buffer update', 'torch.no_grad block', 'method chaining']},
    'InplaceInput': {'dynamic': False, 'features': ['augmented assignment on input tensor', 'in-place method on input']},
    'InplaceActs': {'dynamic': False, 'features': ['ReLU(inplace=True)', 'Dropout(inplace=True) in eval', 'item assignment']},
}
