"""Corpus (staticmethods): staticmethod and classmethod helpers: alternative constructors, static shape helpers, classmethod defaults read in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ConvBNAct(nn.Module):
    default_act = nn.ReLU

    def __init__(self, cin, cout, k=3, act=None):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=self.same_padding(k))
        self.bn = nn.BatchNorm2d(cout)
        self.act = (act or self.default_act)()

    @staticmethod
    def same_padding(k, dilation=1):
        return (k - 1) * dilation // 2

    @classmethod
    def pointwise(cls, cin, cout):
        return cls(cin, cout, k=1)

    @classmethod
    def depth(cls):
        return len(cls.__mro__)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Stem(nn.Module):

    def __init__(self, channels=3, width=4):
        super().__init__()
        self.a = ConvBNAct(channels, width)
        self.b = ConvBNAct.pointwise(width, width)

    @staticmethod
    def _merge(a, b):
        return torch.cat([a, b], 1)

    def forward(self, x):
        a = self.a(x)
        return self._merge(a, self.b(a)), ConvBNAct.depth() > 0, self.a.same_padding(5)


class FromConfig(nn.Module):

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg['dim'], cfg.get('hidden', cfg['dim'] * 2))

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class BuiltFromConfig(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.block = FromConfig.from_config({'dim': dim})

    def forward(self, x):
        return self.block(x) + x


TESTCASES = [
    (Stem, lambda: ([], {}), lambda: ([torch.rand([1, 3, 5, 5])], {}), False),
    (BuiltFromConfig, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'Stem': {'dynamic': False, 'features': ['classmethod alternative constructor', 'staticmethod via self', 'cls.__mro__']},
    'BuiltFromConfig': {'dynamic': False, 'features': ['classmethod from_config with dict.get default']},
}
