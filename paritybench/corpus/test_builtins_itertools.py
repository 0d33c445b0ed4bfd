"""Corpus (builtins): itertools and functools in layer construction and forward passes."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()

from functools import partial, reduce
from itertools import accumulate, chain, product, pairwise


class ChainedExperts(nn.Module):

    def __init__(self, dim, shared=1, routed=2):
        super().__init__()
        self.shared = nn.ModuleList(nn.Linear(dim, dim) for _ in range(shared))
        self.routed = nn.ModuleList(nn.Linear(dim, dim) for _ in range(routed))

    def forward(self, x):
        outs = [expert(x) for expert in chain(self.shared, self.routed)]
        return reduce(lambda a, b: a + b, outs) / len(outs)


class OffsetConvGrid(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.offsets = list(product((-1, 0, 1), repeat=2))
        self.mix = nn.Conv2d(channels * len(self.offsets), channels, 1)

    def forward(self, x):
        shifted = [torch.roll(x, shifts=(dy, dx), dims=(2, 3)) for dy, dx in self.offsets]
        return self.mix(torch.cat(shifted, 1))


class ProgressiveWidths(nn.Module):

    def __init__(self, base=4, increments=(2, 2, 4)):
        super().__init__()
        widths = list(accumulate((base,) + tuple(increments)))
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(widths))
        self.act = partial(F.leaky_relu, negative_slope=0.2)

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return x


TESTCASES = [
    (ChainedExperts, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (OffsetConvGrid, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (ProgressiveWidths, lambda: ([], {}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ChainedExperts': {'dynamic': False, 'features': ['itertools.chain over ModuleLists', 'functools.reduce with lambda']},
    'OffsetConvGrid': {'dynamic': False, 'features': ['itertools.product', 'tuple unpacking in comprehension', 'torch.roll']},
    'ProgressiveWidths': {'dynamic': False, 'features': ['itertools.accumulate', 'itertools.pairwise', 'functools.partial']},
}
