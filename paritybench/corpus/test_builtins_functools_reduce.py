"""Corpus (functools): functools.reduce and functools.partial: composing layers, products of sizes, partially applied ops."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import operator
patch_functional()


class FlattenByProduct(nn.Module):

    def __init__(self, shape=(2, 3, 3), out=4):
        super().__init__()
        self.fc = nn.Linear(functools.reduce(operator.mul, shape, 1), out)

    def forward(self, x):
        n = functools.reduce(operator.mul, x.shape[1:])
        return self.fc(x.view(-1, n))


class PartialOps(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = functools.partial(F.leaky_relu, negative_slope=0.2)
        self.pool = functools.partial(F.avg_pool2d, kernel_size=2)

    def forward(self, x):
        y = self.pool(self.act(self.conv(x)))
        up = functools.partial(F.interpolate, scale_factor=2, mode='nearest')
        return up(y) + x


class ReduceMaximum(nn.Module):

    def forward(self, a, b, c):
        return functools.reduce(torch.maximum, [a, b, c]), functools.reduce(operator.add, (a, b, c))


TESTCASES = [
    (FlattenByProduct, lambda: ([], {}), lambda: ([torch.rand([2, 2, 3, 3])], {}), False),
    (PartialOps, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (ReduceMaximum, lambda: ([], {}), lambda: ([torch.rand([3, 4]), torch.rand([3, 4]), torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'FlattenByProduct': {'dynamic': False, 'features': ['functools.reduce(operator.mul, shape)']},
    'PartialOps': {'dynamic': False, 'features': ['functools.partial of F functions', 'partial created in forward']},
    'ReduceMaximum': {'dynamic': False, 'features': ['functools.reduce(torch.maximum)', 'operator.add']},
}
