"""Corpus (builtins): list, dict and set comprehensions building layers and outputs (DenseNet-like)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DenseLayer(nn.Sequential):

    def __init__(self, cin, growth):
        super().__init__(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, growth, 3, padding=1, bias=False))


class DenseBlock(nn.Module):

    def __init__(self, num_layers=3, cin=4, growth=2):
        super().__init__()
        self.layers = nn.ModuleList([DenseLayer(cin + i * growth, growth) for i in range(num_layers)])

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(torch.cat(features, 1)))
        return torch.cat(features, 1)


class MultiHeadReadout(nn.Module):

    def __init__(self, dim, tasks=('depth', 'normals', 'seg')):
        super().__init__()
        self.heads = nn.ModuleDict({t: nn.Linear(dim, 1 if t == 'depth' else 3) for t in tasks})

    def forward(self, x):
        outs = {name: head(x) for name, head in self.heads.items()}
        sizes = {name: o.shape[-1] for name, o in outs.items()}
        wide = {name for name, s in sizes.items() if s > 1}
        outs['wide_sum'] = sum(outs[n] for n in sorted(wide))
        return outs


class NestedGrid(nn.Module):

    def __init__(self, rows=2, cols=3):
        super().__init__()
        self.rows, self.cols = rows, cols
        self.scale = nn.Parameter(torch.arange(rows * cols, dtype=torch.float32).view(rows, cols) / 10)

    def forward(self, x):
        grid = [[x * self.scale[r, c] for c in range(self.cols)] for r in range(self.rows)]
        flat = [cell for row in grid for cell in row if cell is not None]
        evens = [t for i, t in enumerate(flat) if i % 2 == 0]
        return torch.stack(flat).mean(0) - torch.stack(evens).mean(0)


TESTCASES = [
    (DenseBlock, lambda: ([], {}), lambda: ([torch.rand([2, 4, 6, 6])], {}), True),
    (MultiHeadReadout, lambda: ([], {'dim': 5}), lambda: ([torch.rand([3, 5])], {}), False),
    (NestedGrid, lambda: ([], {}), lambda: ([torch.rand([4, 4])], {}), False),
]

EXPECTED = {
    'DenseBlock': {'dynamic': False, 'features': ['list comprehension in __init__', 'growing list of tensors', 'Sequential subclass']},
    'MultiHeadReadout': {'dynamic': False, 'features': ['dict comprehension', 'set comprehension', 'sum(generator)', 'dict output']},
    'NestedGrid': {'dynamic': False, 'features': ['nested list comprehension', 'flattening comprehension', 'filtered comprehension']},
}
