"""Corpus (lazy): lazy modules: nn.LazyLinear / LazyConv2d / LazyBatchNorm infer their sizes on the first call."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LazyMLP(nn.Module):

    def __init__(self, hidden=8, out=3):
        super().__init__()
        self.fc1 = nn.LazyLinear(hidden)
        self.fc2 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class LazyConvHead(nn.Module):

    def __init__(self, out_channels=4):
        super().__init__()
        self.conv = nn.LazyConv2d(out_channels, 3, padding=1)
        self.head = nn.LazyLinear(2)

    def forward(self, x):
        y = F.relu(self.conv(x))
        return self.head(y.flatten(1))


class LazyNormStack(nn.Module):

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.LazyConv1d(4, 3, padding=1), nn.LazyBatchNorm1d(), nn.ReLU())

    def forward(self, x):
        return self.body(x)


TESTCASES = [
    (LazyMLP, lambda: ([], {}), lambda: ([torch.rand([2, 5])], {}), False),
    (LazyConvHead, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (LazyNormStack, lambda: ([], {}), lambda: ([torch.rand([2, 3, 6])], {}), False),
]

EXPECTED = {
    'LazyMLP': {'dynamic': False, 'features': ['nn.LazyLinear']},
    'LazyConvHead': {'dynamic': False, 'features': ['nn.LazyConv2d', 'LazyLinear after flatten']},
    'LazyNormStack': {'dynamic': False, 'features': ['LazyConv1d + LazyBatchNorm1d in Sequential']},
}
