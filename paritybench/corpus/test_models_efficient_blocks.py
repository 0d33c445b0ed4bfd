"""Corpus (efficient): EfficientNet/ConvNeXt blocks: MBConv with stochastic depth off in eval, ConvNeXt blocks with layer scale, stage builders from width multipliers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def round_filters(filters, width_mult=1.0, divisor=2):
    filters *= width_mult
    new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    return int(new + divisor) if new < 0.9 * filters else int(new)


def drop_path(x, p, training):
    if p == 0.0 or not training:
        return x
    keep = x.new_empty(x.shape[0], *([1] * (x.dim() - 1))).bernoulli_(1 - p)
    return x * keep / (1 - p)


class ConvNeXtBlock(nn.Module):

    def __init__(self, dim, layer_scale=1e-2, drop=0.1):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale * torch.ones(dim))
        self.drop = drop

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.pw2(F.gelu(self.pw1(self.norm(y)))) * self.gamma
        return x + drop_path(y.permute(0, 3, 1, 2), self.drop, self.training)


class MBConvStage(nn.Module):

    def __init__(self, cin=3, width_mult=1.5, repeats=2):
        super().__init__()
        cout = round_filters(4, width_mult)
        blocks = []
        for i in range(repeats):
            c = cin if i == 0 else cout
            blocks.append(nn.Sequential(nn.Conv2d(c, c * 2, 1), nn.SiLU(), nn.Conv2d(c * 2, c * 2, 3, padding=1, groups=c * 2), nn.SiLU(), nn.Conv2d(c * 2, cout, 1)))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x):
        for block in self.blocks:
            y = block(x)
            x = x + drop_path(y, 0.2, self.training) if y.shape == x.shape else y
        return x


TESTCASES = [
    (ConvNeXtBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([1, 4, 7, 7])], {}), False),
    (MBConvStage, lambda: ([], {}), lambda: ([torch.rand([2, 3, 5, 5])], {}), False),
]

EXPECTED = {
    'ConvNeXtBlock': {'dynamic': False, 'features': ['drop_path helper short-circuit in eval', 'channels-last permute']},
    'MBConvStage': {'dynamic': False, 'features': ['round_filters helper', 'shape equality decides residual']},
}
