"""Corpus (mobile): mobile building blocks: inverted residuals, squeeze-excitation, hard-swish, channel shuffle, ghost modules."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def make_divisible(v, divisor=4, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class SqueezeExcite(nn.Module):

    def __init__(self, channels, ratio=0.25):
        super().__init__()
        hidden = make_divisible(channels * ratio)
        self.reduce = nn.Conv2d(channels, hidden, 1)
        self.expand = nn.Conv2d(hidden, channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * F.hardsigmoid(self.expand(F.relu(self.reduce(s))))


class InvertedResidual(nn.Module):

    def __init__(self, cin, cout, stride=1, expand=4, use_se=True):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.Hardswish()] if expand != 1 else []
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.Hardswish()]
        if use_se:
            layers.append(SqueezeExcite(hidden))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class ShuffleUnit(nn.Module):

    def __init__(self, channels, groups=2):
        super().__init__()
        self.groups = groups
        half = channels // 2
        self.branch = nn.Sequential(nn.Conv2d(half, half, 1), nn.ReLU(), nn.Conv2d(half, half, 3, padding=1, groups=half), nn.Conv2d(half, half, 1))

    def forward(self, x):
        a, b = x.chunk(2, 1)
        out = torch.cat([a, self.branch(b)], 1)
        n, c, h, w = out.shape
        return out.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class GhostModule(nn.Module):

    def __init__(self, cin, cout, ratio=2):
        super().__init__()
        init = math.ceil(cout / ratio)
        self.cout = cout
        self.primary = nn.Conv2d(cin, init, 1)
        self.cheap = nn.Conv2d(init, init * (ratio - 1), 3, padding=1, groups=init)

    def forward(self, x):
        y = self.primary(x)
        return torch.cat([y, self.cheap(y)], 1)[:, :self.cout]


TESTCASES = [
    (InvertedResidual, lambda: ([4, 4], {}), lambda: ([torch.rand([2, 4, 6, 6])], {}), False),
    (InvertedResidual, lambda: ([4, 6], {'stride': 2, 'expand': 1, 'use_se': False}), lambda: ([torch.rand([2, 4, 6, 6])], {}), False),
    (ShuffleUnit, lambda: ([], {'channels': 4}), lambda: ([torch.rand([1, 4, 5, 5])], {}), False),
    (GhostModule, lambda: ([3, 5], {}), lambda: ([torch.rand([1, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'InvertedResidual': {'dynamic': False, 'features': ['list-built Sequential', 'conditional residual', 'make_divisible helper']},
    'InvertedResidual#1': {'dynamic': False, 'features': ['conditional layer list', 'no residual']},
    'ShuffleUnit': {'dynamic': False, 'features': ['channel shuffle by view/transpose', 'chunk unpacking']},
    'GhostModule': {'dynamic': False, 'features': ['math.ceil sizes', 'channel slicing']},
}
