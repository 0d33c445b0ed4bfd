"""Corpus (sets): sets and ranges on configuration: frozenset membership of layer indices, range steps for strided stages, set differences of names."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SelectedLayers(nn.Module):

    def __init__(self, dim, depth=5, taps=frozenset({1, 3})):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.taps = taps

    def forward(self, x):
        taps = []
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            if i in self.taps:
                taps.append(x)
        return x, taps


class StridedStages(nn.Module):

    def __init__(self, channels, size=16, min_size=4):
        super().__init__()
        self.sizes = list(range(size, min_size - 1, -4))
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1) for _ in self.sizes)

    def forward(self, x):
        outs = []
        for s, conv in zip(self.sizes, self.convs):
            outs.append(conv(F.adaptive_avg_pool2d(x, s)).mean((2, 3)))
        return torch.stack(outs, 1), range(0, 10, 3)[-1], len(range(*self.sizes[:2], -1))


class FrozenNames(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.ModuleDict({n: nn.Linear(dim, dim) for n in ('a', 'b', 'c', 'd')})
        self.frozen = {'b', 'd'}

    def forward(self, x):
        active = sorted(set(self.blocks.keys()) - self.frozen)
        shared = self.frozen & {'a', 'b'}
        return sum(self.blocks[n](x) for n in active), sorted(shared | {'z'})


TESTCASES = [
    (SelectedLayers, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (StridedStages, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 16, 16])], {}), False),
    (FrozenNames, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'SelectedLayers': {'dynamic': False, 'features': ['frozenset membership of enumerate index', 'list of taps output']},
    'StridedStages': {'dynamic': False, 'features': ['range with negative step', 'range indexing/len outputs']},
    'FrozenNames': {'dynamic': False, 'features': ['set difference/intersection/union', 'sorted(set)']},
}
