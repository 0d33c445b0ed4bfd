"""Corpus (walrus): nested comprehensions and the walrus operator: flattened per-level lists, conditional comprehensions, := inside loops."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class NestedHeads(nn.Module):

    def __init__(self, dim, levels=2, heads=2):
        super().__init__()
        self.heads = nn.ModuleList(nn.ModuleList(nn.Linear(dim, 2) for _ in range(heads)) for _ in range(levels))

    def forward(self, feats):
        outs = [h(f) for level, f in zip(self.heads, feats) for h in level]
        grid = [[o.sum() for o in outs[i:i + 2]] for i in range(0, len(outs), 2)]
        return torch.stack([torch.stack(row) for row in grid])


class WalrusFilter(nn.Module):

    def __init__(self, dim, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        kept = [y for layer in self.layers if (y := torch.tanh(layer(x))) is not None]
        if (n := len(kept)) > 1:
            return sum(kept) / n
        return kept[0]


class SetAndDictComprehension(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.kernels = [1, 3, 3, 5]
        self.convs = nn.ModuleDict({str(k): nn.Conv2d(channels, channels, k, padding=k // 2) for k in {*self.kernels}})

    def forward(self, x):
        uniq = sorted({k for k in self.kernels if k > 1})
        return {f'k{k}': self.convs[str(k)](x) for k in uniq}


TESTCASES = [
    (NestedHeads, lambda: ([], {'dim': 4}), lambda: ([[torch.rand([2, 4]), torch.rand([2, 4])]], {}), False),
    (WalrusFilter, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SetAndDictComprehension, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
]

EXPECTED = {
    'NestedHeads': {'dynamic': False, 'features': ['double-for comprehension', 'nested list comprehension with range step']},
    'WalrusFilter': {'dynamic': False, 'features': ['walrus in a comprehension filter', 'walrus in an if']},
    'SetAndDictComprehension': {'dynamic': False, 'features': ['set comprehension', '{*list} set display', 'dict comprehension output']},
}
