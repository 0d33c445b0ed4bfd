"""Corpus (math): math module on sizes and hyper-parameters: log2 depths, gcd groups, ceil padding, cos schedules, isclose checks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SamePadConv(nn.Module):
    """TensorFlow-style 'same' padding computed with math.ceil from the input size."""

    def __init__(self, channels, kernel=3, stride=2):
        super().__init__()
        self.k, self.s = kernel, stride
        self.conv = nn.Conv2d(channels, channels, kernel, stride)

    def forward(self, x):
        ih, iw = x.shape[-2:]
        oh, ow = math.ceil(ih / self.s), math.ceil(iw / self.s)
        ph = max((oh - 1) * self.s + self.k - ih, 0)
        pw = max((ow - 1) * self.s + self.k - iw, 0)
        return self.conv(F.pad(x, [pw // 2, pw - pw // 2, ph // 2, ph - ph // 2]))


class GcdGroups(nn.Module):

    def __init__(self, cin=6, cout=4):
        super().__init__()
        groups = math.gcd(cin, cout)
        self.conv = nn.Conv2d(cin, cout, 1, groups=groups)
        self.depth = int(math.log2(cin * cout))

    def forward(self, x):
        return self.conv(x) * math.sqrt(self.depth), math.isclose(math.log2(8), 3.0)


class CosineRamp(nn.Module):

    def __init__(self, dim, step=3, total=10):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.factor = 0.5 * (1 + math.cos(math.pi * step / total))

    def forward(self, x):
        return self.fc(x) * self.factor + math.floor(2.7) * math.copysign(0.1, -1.0)


TESTCASES = [
    (SamePadConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 7, 6])], {}), False),
    (GcdGroups, lambda: ([], {}), lambda: ([torch.rand([1, 6, 3, 3])], {}), False),
    (CosineRamp, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'SamePadConv': {'dynamic': False, 'features': ['math.ceil of shape ratios', 'max of ints', 'F.pad list']},
    'GcdGroups': {'dynamic': False, 'features': ['math.gcd', 'math.log2', 'math.isclose output']},
    'CosineRamp': {'dynamic': False, 'features': ['math.cos schedule constant', 'math.floor/copysign']},
}
