"""Corpus (float): torch.ao.nn.quantized.FloatFunctional: quantization-ready residual adds, concatenations and scalings."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.ao.nn.quantized import FloatFunctional
patch_functional()


class QuantReadyBottleneck(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.skip_add = FloatFunctional()

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(self.skip_add.add(y, x))


class QuantReadyConcat(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.branch_a = nn.Conv2d(channels, channels, 1)
        self.branch_b = nn.Conv2d(channels, channels, 3, padding=1)
        self.cat = FloatFunctional()

    def forward(self, x):
        return self.cat.cat([self.branch_a(x), self.branch_b(x)], dim=1)


class QuantReadySE(nn.Module):

    def __init__(self, channels, reduction=2):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)
        self.mul = FloatFunctional()
        self.add_scalar = FloatFunctional()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return self.add_scalar.add_scalar(self.mul.mul(x, s), 0.1), self.mul.mul_scalar(s, 2.0)


TESTCASES = [
    (QuantReadyBottleneck, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (QuantReadyConcat, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (QuantReadySE, lambda: ([], {'channels': 4}), lambda: ([torch.rand([2, 4, 3, 3])], {}), False),
]

EXPECTED = {
    'QuantReadyBottleneck': {'dynamic': False, 'features': ['FloatFunctional.add']},
    'QuantReadyConcat': {'dynamic': False, 'features': ['FloatFunctional.cat(list, dim)']},
    'QuantReadySE': {'dynamic': False, 'features': ['FloatFunctional.mul', 'add_scalar', 'mul_scalar']},
}
