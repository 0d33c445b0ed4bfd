"""Corpus (builtins): enumerate with a start index and skip connections keyed by name (paper Fig. 3a #2)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ConvBlock(nn.Module):

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class UNetResEncoder(nn.Module):
    DEPTH = 3

    def __init__(self, in_channels=3, width=4):
        super().__init__()
        self.input_block = ConvBlock(in_channels, width)
        chans = [width * 2 ** i for i in range(self.DEPTH + 1)]
        self.down_blocks = nn.ModuleList([ConvBlock(a, b) for a, b in zip(chans[:-1], chans[1:])])
        self.up_blocks = nn.ModuleList([ConvBlock(b + a, a) for a, b in zip(chans[:-1], chans[1:])][::-1])

    def forward(self, x):
        pre_pools = dict()
        pre_pools['layer_1'] = x = self.input_block(x)
        for i, block in enumerate(self.down_blocks, 2):
            x = block(F.max_pool2d(x, 2))
            if i == self.DEPTH + 1:
                continue
            pre_pools[f'layer_{i}'] = x
        for i, block in enumerate(self.up_blocks, 1):
            key = f'layer_{self.DEPTH + 1 - i}'
            x = F.interpolate(x, scale_factor=2, mode='nearest')
            x = block(torch.cat([x, pre_pools[key]], 1))
        return x


class PyramidPool(nn.Module):

    def __init__(self, channels, bins=(1, 2, 4)):
        super().__init__()
        self.bins = bins
        self.reduce = nn.ModuleList(nn.Conv2d(channels, channels // len(bins), 1) for _ in bins)

    def forward(self, x):
        h, w = x.shape[-2:]
        outs = [x]
        for idx, (size, conv) in enumerate(zip(self.bins, self.reduce)):
            y = conv(F.adaptive_avg_pool2d(x, size))
            outs.append(F.interpolate(y, size=(h, w), mode='bilinear', align_corners=idx % 2 == 0))
        return torch.cat(outs, dim=1)


class StageScaler(nn.Module):
    """Scales each stage's output by its 1-based position."""

    def __init__(self, dim, stages=3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(stages)])

    def forward(self, x):
        total = 0
        for depth, layer in enumerate(self.layers, start=1):
            x = torch.tanh(layer(x))
            total = total + x * (1.0 / depth)
        return total


TESTCASES = [
    (UNetResEncoder, lambda: ([], {'in_channels': 3, 'width': 4}), lambda: ([torch.rand([1, 3, 16, 16])], {}), False),
    (PyramidPool, lambda: ([], {'channels': 6}), lambda: ([torch.rand([2, 6, 8, 8])], {}), False),
    (StageScaler, lambda: ([], {'dim': 8}), lambda: ([torch.rand([4, 8])], {}), True),
]

EXPECTED = {
    'UNetResEncoder': {'dynamic': False, 'features': ['enumerate(start)', 'f-string keys', 'dict', 'zip', 'slicing reversal']},
    'PyramidPool': {'dynamic': False, 'features': ['enumerate', 'zip', 'tuple unpacking', 'generator into ModuleList']},
    'StageScaler': {'dynamic': False, 'features': ['enumerate(start=)', 'int accumulator becomes tensor']},
}
