"""Corpus (star): f(*reversed(range(...))): permutations and shape tuples built by star-unpacking reversed ranges."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ReverseAxes(nn.Module):
    """Transposes every axis, the way some data-layout converters do."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = x.permute(*reversed(range(x.dim())))
        return self.proj(y.contiguous().permute(*reversed(range(y.dim()))))


class ChannelsLastToFirst(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        # NHWC -> NCHW: keep the batch axis, reverse the rest except channels
        first = x.permute(0, *reversed(range(1, x.dim())))
        first = first.transpose(2, 3)
        out = self.conv(first)
        return out.permute(0, *range(2, out.dim()), 1)


class BroadcastBias(nn.Module):
    """Builds a view shape (1, C, 1, 1, ...) by star-unpacking generated ones."""

    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x):
        shape = (1, -1, *(1 for _ in reversed(range(2, x.dim()))))
        return x + self.bias.view(*shape)


class FlipSpatial(nn.Module):

    def forward(self, x):
        dims = [*reversed(range(2, x.dim()))]
        return torch.flip(x, dims=dims) + x.flip(*reversed(range(x.dim() - 1, x.dim())))


TESTCASES = [
    (ReverseAxes, lambda: ([], {'dim': 5}), lambda: ([torch.rand([5, 3, 5])], {}), False),
    (ChannelsLastToFirst, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 6, 6, 3])], {}), False),
    (BroadcastBias, lambda: ([], {'channels': 4}), lambda: ([torch.rand([2, 4, 3, 3, 2])], {}), False),
    (FlipSpatial, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 5])], {}), False),
]

EXPECTED = {
    'ReverseAxes': {'dynamic': False, 'features': ['permute(*reversed(range))']},
    'ChannelsLastToFirst': {'dynamic': False, 'features': ['permute(0, *reversed(range(1, n)))', 'permute(0, *range, 1)']},
    'BroadcastBias': {'dynamic': False, 'features': ['tuple with *generator', 'view(*shape)']},
    'FlipSpatial': {'dynamic': False, 'features': ['[*reversed(range)]', 'flip(*reversed(range))']},
}
