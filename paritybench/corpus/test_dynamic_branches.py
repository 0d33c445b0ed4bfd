"""Corpus (dynamic): Python control flow that depends on tensor values; the graph changes with the data."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SignBranch(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.pos = nn.Linear(dim, dim)
        self.neg = nn.Linear(dim, dim)

    def forward(self, x):
        if x.sum() > 0:
            return self.pos(x)
        return self.neg(x).relu()


class NormLoop(nn.Module):
    """Halves the input until its norm drops below a threshold: the loop count is data-dependent."""

    def __init__(self, threshold=1.0):
        super().__init__()
        self.threshold = threshold

    def forward(self, x):
        steps = 0
        while x.norm() > self.threshold:
            x = x / 2
            steps += 1
        return x, steps


class EarlyExit(nn.Module):

    def __init__(self, dim, depth=3, confidence=0.6):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.confidence = confidence

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x).tanh()
            if torch.all(x.softmax(-1).amax(-1) > self.confidence):
                break
        return x


TESTCASES = [
    (SignBranch, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (NormLoop, lambda: ([], {}), lambda: ([torch.randn([4, 4]) * 3], {}), False),
    (EarlyExit, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4]) * 4], {}), False),
]

EXPECTED = {
    'SignBranch': {'dynamic': True, 'features': ['if on a tensor value']},
    'NormLoop': {'dynamic': True, 'features': ['while on a tensor value', 'loop count output']},
    'EarlyExit': {'dynamic': True, 'features': ['break on torch.all(...)']},
}
