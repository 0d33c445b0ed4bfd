"""Corpus (side effects): module-level globals written and read by forward (registries, feature taps, flags)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


FEATURE_TAPS = {}
USE_FAST_PATH = True
LAST_BATCH = None


class TappedEncoder(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc1(x).relu()
        FEATURE_TAPS['hidden'] = h
        out = self.fc2(h)
        FEATURE_TAPS['out'] = out
        return out + FEATURE_TAPS['hidden']


class GlobalFlag(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        global USE_FAST_PATH
        if USE_FAST_PATH:
            y = self.fc(x)
        else:
            y = self.fc(x.double().float())
        USE_FAST_PATH = True
        return y


class BatchKeeper(nn.Module):

    def forward(self, x):
        global LAST_BATCH
        LAST_BATCH = x.shape[0]
        return x * LAST_BATCH


TESTCASES = [
    (TappedEncoder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GlobalFlag, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (BatchKeeper, lambda: ([], {}), lambda: ([torch.rand([3, 2])], {}), False),
]

EXPECTED = {
    'TappedEncoder': {'dynamic': False, 'features': ['global dict written with tensors', 'read back from the global']},
    'GlobalFlag': {'dynamic': False, 'features': ['global statement', 'global bool in branch', 'global write']},
    'BatchKeeper': {'dynamic': False, 'features': ['global int write from shape', 'global read']},
}
