"""Corpus (format): string formatting of shapes: f-strings, str.format and % with sizes as dict keys and outputs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ShapeKeyedCache(nn.Module):
    """Projection layers looked up by a formatted shape key."""

    def __init__(self, dims=(4, 6)):
        super().__init__()
        self.proj = nn.ModuleDict({f'in{d}': nn.Linear(d, 3) for d in dims})

    def forward(self, x):
        key = f'in{x.shape[-1]}'
        return self.proj[key](x)


class DescribeOutput(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * 2, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        info = 'out: {}x{}x{}'.format(*y.shape[1:])
        return y, info, '%d channels' % y.size(1)


class NamedLevels(nn.Module):

    def __init__(self, channels, levels=3):
        super().__init__()
        for i in range(levels):
            setattr(self, 'level_%d' % i, nn.Conv2d(channels, channels, 1))
        self.levels = levels

    def forward(self, x):
        out = {}
        for i in range(self.levels):
            x = getattr(self, 'level_%d' % i)(x)
            out['p{}_{}x{}'.format(i, *x.shape[-2:])] = x
            x = F.max_pool2d(x, 2)
        return out


TESTCASES = [
    (ShapeKeyedCache, lambda: ([], {}), lambda: ([torch.rand([2, 6])], {}), False),
    (DescribeOutput, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 5])], {}), False),
    (NamedLevels, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'ShapeKeyedCache': {'dynamic': False, 'features': ['f-string of shape as ModuleDict key']},
    'DescribeOutput': {'dynamic': False, 'features': ['str.format(*shape)', '% formatting', 'string outputs']},
    'NamedLevels': {'dynamic': False, 'features': ['setattr/getattr with % names', 'dict output with formatted keys']},
}
