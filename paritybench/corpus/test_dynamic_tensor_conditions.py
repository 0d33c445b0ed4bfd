"""Corpus (tensor): Python control flow on tensor truth values: if tensor.any(), while on a tensor norm, min/max of tensors in Python."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SkipIfEmpty(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, mask):
        if mask.any():
            x = x + self.fc(x) * mask.unsqueeze(-1)
        return x


class ShrinkUntilSmall(nn.Module):

    def __init__(self, limit=1.0):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        halvings = 0
        while x.norm() > self.limit:
            x = x / 2
            halvings += 1
        return x, halvings


class PythonMaxOfTensors(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, 1)
        self.b = nn.Linear(dim, 1)

    def forward(self, x):
        sa, sb = self.a(x).mean(), self.b(x).mean()
        best = max(sa, sb)
        return best * x, bool(best is sa)


TESTCASES = [
    (SkipIfEmpty, lambda: ([], {'dim': 3}), lambda: ([torch.rand([4, 3]), torch.rand([4]) > 0.7], {}), False),
    (ShrinkUntilSmall, lambda: ([], {}), lambda: ([torch.randn([3, 3]) * 4], {}), False),
    (PythonMaxOfTensors, lambda: ([], {'dim': 3}), lambda: ([torch.randn([2, 3])], {}), False),
]

EXPECTED = {
    'SkipIfEmpty': {'dynamic': True, 'features': ['if mask.any()']},
    'ShrinkUntilSmall': {'dynamic': True, 'features': ['while tensor.norm() > limit', 'int counter output']},
    'PythonMaxOfTensors': {'dynamic': True, 'features': ['builtin max() compares 0-d tensors', 'identity test output']},
}
