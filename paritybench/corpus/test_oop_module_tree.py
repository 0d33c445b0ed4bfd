"""Corpus (module): recursion over module trees: modules(), named_modules(), children() walks and recursive helper functions in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def count_convs(module):
    return int(isinstance(module, nn.Conv2d)) + sum(count_convs(c) for c in module.children())


class RecursiveTree(nn.Module):
    """A binary tree of linear layers evaluated by recursion."""

    def __init__(self, dim, depth=2):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.left = RecursiveTree(dim, depth - 1) if depth > 0 else None
        self.right = RecursiveTree(dim, depth - 1) if depth > 0 else None

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        if self.left is None:
            return h
        return (self.left(h) + self.right(h)) / 2


class NormStatistics(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Sequential(nn.Conv2d(channels, channels, 1), nn.BatchNorm2d(channels)),
        )

    def forward(self, x):
        y = self.body(x)
        norms = [m for m in self.modules() if isinstance(m, nn.BatchNorm2d)]
        gamma = sum(m.weight.abs().sum() for m in norms)
        names = [n for n, m in self.named_modules() if isinstance(m, nn.Conv2d)]
        return y * gamma, len(names), count_convs(self)


class ApplyToLeaves(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.stages = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.GELU()), nn.Linear(dim, dim)])

    def _leaves(self, module):
        kids = list(module.children())
        if not kids:
            yield module
        for k in kids:
            yield from self._leaves(k)

    def forward(self, x):
        for leaf in self._leaves(self):
            x = leaf(x)
        return x


TESTCASES = [
    (RecursiveTree, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NormStatistics, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (ApplyToLeaves, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'RecursiveTree': {'dynamic': False, 'features': ['recursive module structure', 'None children']},
    'NormStatistics': {'dynamic': False, 'features': ['self.modules() with isinstance filter', 'named_modules', 'recursive count over children()']},
    'ApplyToLeaves': {'dynamic': False, 'features': ['recursive generator with yield from over children()']},
}
