"""Corpus (divmod): integer arithmetic on sizes: divmod for grid layouts, padding to multiples with -(-a // b), round/int/abs on scales."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PadToMultiple(nn.Module):

    def __init__(self, channels, multiple=4):
        super().__init__()
        self.multiple = multiple
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        h, w = x.shape[-2:]
        ph = -(-h // self.multiple) * self.multiple - h
        pw = -(-w // self.multiple) * self.multiple - w
        y = self.conv(F.pad(x, (0, pw, 0, ph)))
        return y[..., :h, :w]


class GridLayout(nn.Module):
    """Arranges n feature maps in a grid with divmod, like a visualisation helper used in forward."""

    def __init__(self, cols=2):
        super().__init__()
        self.cols = cols

    def forward(self, maps):
        n, h, w = maps.shape
        rows, rem = divmod(n, self.cols)
        rows += int(rem > 0)
        canvas = maps.new_zeros(rows * h, self.cols * w)
        for i in range(n):
            r, c = divmod(i, self.cols)
            canvas[r * h:(r + 1) * h, c * w:(c + 1) * w] = maps[i]
        return canvas


class RoundedScale(nn.Module):

    def __init__(self, channels, scale=1.5):
        super().__init__()
        self.scale = scale
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        size = (round(x.shape[-2] * self.scale), int(abs(-x.shape[-1] * self.scale)))
        return self.conv(F.interpolate(x, size=size, mode='nearest')), size


TESTCASES = [
    (PadToMultiple, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 7])], {}), False),
    (GridLayout, lambda: ([], {}), lambda: ([torch.rand([3, 2, 2])], {}), False),
    (RoundedScale, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 5])], {}), False),
]

EXPECTED = {
    'PadToMultiple': {'dynamic': False, 'features': ['ceil division -(-a // b)', 'crop back with slices']},
    'GridLayout': {'dynamic': False, 'features': ['divmod', 'int(bool) increment', 'slice assignment in a loop']},
    'RoundedScale': {'dynamic': False, 'features': ['round/int/abs on sizes', 'tuple size output']},
}
