"""Corpus (effects): module-level globals read and written in forward: feature flags, global registries of activations, global scratch lists."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


USE_FAST_GELU = True
ACTIVATIONS = {'fast_gelu': lambda x: x * torch.sigmoid(1.702 * x), 'gelu': F.gelu}
DEBUG_SHAPES = []
EPS = 1e-5


class FlagSwitched(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        act = ACTIVATIONS['fast_gelu' if USE_FAST_GELU else 'gelu']
        return act(self.fc(x))


class GlobalScratch(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        DEBUG_SHAPES.clear()
        DEBUG_SHAPES.append(tuple(y.shape))
        return y


class GlobalEps(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        global EPS
        EPS = 1e-5
        return x / (x.norm(dim=-1, keepdim=True) + EPS) * self.weight


TESTCASES = [
    (FlagSwitched, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GlobalScratch, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (GlobalEps, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'FlagSwitched': {'dynamic': False, 'features': ['global flag', 'global dict of lambdas']},
    'GlobalScratch': {'dynamic': False, 'features': ['global list clear/append']},
    'GlobalEps': {'dynamic': False, 'features': ['global statement writes a constant']},
}
