"""Corpus (oop): ModuleList, ModuleDict, ParameterList/Dict and Sequential subclasses."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MultiBranch(nn.Module):

    def __init__(self, dim, names=('left', 'right', 'center')):
        super().__init__()
        self.branches = nn.ModuleDict({n: nn.Linear(dim, dim) for n in names})

    def forward(self, x):
        outs = []
        for key, branch in self.branches.items():
            outs.append(branch(x) * (2.0 if key == 'center' else 1.0))
        return torch.stack(outs, -1).amax(-1) + self.branches['left'](x)


class IndexedLayers(nn.Module):

    def __init__(self, dim, depth=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.layers.append(nn.LayerNorm(dim))

    def forward(self, x):
        for i in range(len(self.layers) - 1):
            x = x + self.layers[i](x).relu()
        x = self.layers[-1](x)
        for layer in self.layers[1:3]:
            x = layer(x)
        return x


class LearnedMix(nn.Module):

    def __init__(self, dim, n=3):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(torch.full((dim,), float(i + 1))) for i in range(n)])
        self.biases = nn.ParameterDict({'pre': nn.Parameter(torch.zeros(dim)), 'post': nn.Parameter(torch.ones(dim))})

    def forward(self, x):
        x = x + self.biases['pre']
        mixed = sum(w * x for w in self.weights)
        return mixed / len(self.weights) + self.biases['post']


class SkipSequential(nn.Sequential):
    """Applies its layers in order and returns every intermediate."""

    def forward(self, x):
        intermediates = []
        for idx, module in enumerate(self):
            x = module(x)
            if idx % 2 == 1:
                intermediates.append(x)
        return x, intermediates


TESTCASES = [
    (MultiBranch, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (IndexedLayers, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), True),
    (LearnedMix, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SkipSequential, lambda: ([nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.Sigmoid()], {}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'MultiBranch': {'dynamic': False, 'features': ['ModuleDict.items', 'ModuleDict indexing']},
    'IndexedLayers': {'dynamic': False, 'features': ['ModuleList index/negative index/slice', 'len(ModuleList)', 'append']},
    'LearnedMix': {'dynamic': False, 'features': ['ParameterList', 'ParameterDict', 'sum(generator of tensors)']},
    'SkipSequential': {'dynamic': False, 'features': ['iterate a Sequential', 'enumerate', 'list output']},
}
