"""Corpus (star): f(*map(...)) and f(*filter(...)): sizes and arguments computed lazily and star-unpacked."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ScaleShape(nn.Module):
    """Upsamples to a size computed by map over the input's spatial dims."""

    def __init__(self, channels, factor=2):
        super().__init__()
        self.factor = factor
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        size = (*map(lambda s: s * self.factor, x.shape[2:]),)
        return self.conv(F.interpolate(x, size=size, mode='nearest'))


class NonUnitView(nn.Module):
    """Squeezes size-1 axes by rebuilding the shape from filter()."""

    def forward(self, x):
        kept = x.view(*filter(lambda d: d != 1, x.shape))
        return kept.softmax(-1)


class MaxOverHeads(nn.Module):

    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(dim, dim) for _ in range(heads))

    def forward(self, x):
        outs = map(lambda h: h(x), self.heads)
        return torch.max(torch.stack([*outs]), 0).values + torch.maximum(*map(torch.relu, (x, -x)))


TESTCASES = [
    (ScaleShape, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 5])], {}), False),
    (NonUnitView, lambda: ([], {}), lambda: ([torch.rand([2, 1, 5, 1])], {}), False),
    (MaxOverHeads, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'ScaleShape': {'dynamic': False, 'features': ['(*map(lambda),)', 'size tuple from shape']},
    'NonUnitView': {'dynamic': False, 'features': ['view(*filter(lambda, shape))']},
    'MaxOverHeads': {'dynamic': False, 'features': ['[*map(lambda)] of modules', 'torch.maximum(*map)']},
}
