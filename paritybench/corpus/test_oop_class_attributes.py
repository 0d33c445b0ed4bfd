"""Corpus (class): class attributes as configuration: defaults overridden by subclasses, class-level tables and counters read in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class BaseBlock(nn.Module):
    expansion = 1
    activation = staticmethod(F.relu)
    norm_layer = nn.BatchNorm2d

    def __init__(self, channels):
        super().__init__()
        out = channels * self.expansion
        self.conv = nn.Conv2d(channels, out, 3, padding=1)
        self.norm = self.norm_layer(out)

    def forward(self, x):
        return self.activation(self.norm(self.conv(x)))


class WideBlock(BaseBlock):
    expansion = 2
    activation = staticmethod(torch.tanh)
    norm_layer = functools.partial(nn.GroupNorm, 2)

    def __init__(self, channels):
        super().__init__(channels)


class ScaleTable(nn.Module):
    SCALES = {'small': 0.5, 'base': 1.0, 'large': 2.0}
    DEFAULT = 'base'

    def __init__(self, dim, size=None):
        super().__init__()
        self.size = size or type(self).DEFAULT
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x) * self.SCALES[self.size] + ScaleTable.SCALES['small']


TESTCASES = [
    (BaseBlock, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
    (WideBlock, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
    (ScaleTable, lambda: ([], {'dim': 4, 'size': 'large'}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'BaseBlock': {'dynamic': False, 'features': ['class attribute config', 'staticmethod class attribute']},
    'WideBlock': {'dynamic': False, 'features': ['subclass overriding class attributes', 'functools.partial norm class']},
    'ScaleTable': {'dynamic': False, 'features': ['class-level dict', 'type(self).DEFAULT']},
}
