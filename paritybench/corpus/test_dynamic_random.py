"""Corpus (dynamic): Python and NumPy random numbers choosing the structure of the computation."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RandomDepth(nn.Module):
    """Stochastic depth that stays on at inference: each call runs a random subset of blocks."""

    def __init__(self, dim, depth=4, keep=0.5):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.keep = keep

    def forward(self, x):
        for block in self.blocks:
            if random.random() < self.keep:
                x = x + block(x)
        return x


class RandomKernel(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleDict({str(k): nn.Conv2d(channels, channels, k, padding=k // 2) for k in (1, 3, 5)})

    def forward(self, x):
        k = random.choice(['1', '3', '5'])
        return self.convs[k](x)


class NumpyCrop(nn.Module):

    def __init__(self, size=4):
        super().__init__()
        self.size = size

    def forward(self, x):
        h, w = x.shape[-2:]
        top = int(np.random.randint(0, h - self.size + 1))
        left = int(np.random.randint(0, w - self.size + 1))
        return x[..., top:top + self.size, left:left + self.size]


TESTCASES = [
    (RandomDepth, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (RandomKernel, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (NumpyCrop, lambda: ([], {}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'RandomDepth': {'dynamic': True, 'features': ['random.random() in a branch']},
    'RandomKernel': {'dynamic': True, 'features': ['random.choice picks a submodule']},
    'NumpyCrop': {'dynamic': True, 'features': ['np.random.randint slice offsets']},
}
