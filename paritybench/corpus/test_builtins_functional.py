"""Corpus (builtins): any/all, map/filter, abs, len and slicing driving which layers run."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class GatedStack(nn.Module):

    def __init__(self, dim, gates=(1, 0, 1, 1)):
        super().__init__()
        self.gates = list(gates)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in gates)

    def forward(self, x):
        if all(self.gates):
            return self.layers[0](x)
        if any(g == 0 for g in self.gates):
            active = list(filter(lambda pair: pair[0], zip(self.gates, self.layers)))
            for _, layer in active:
                x = layer(x).relu()
        return x


class MappedInputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, xs):
        normed = list(map(lambda t: t / (t.norm(dim=-1, keepdim=True) + 1e-06), xs))
        projected = [*map(self.proj, normed)]
        return torch.stack(projected[::-1], 0)[: len(xs) - 1]


class SymmetricPad(nn.Module):

    def __init__(self, shift=-2):
        super().__init__()
        self.shift = shift

    def forward(self, x):
        p = abs(self.shift)
        x = F.pad(x, (p, p))
        return x[..., p:-p] + x[..., :x.shape[-1] - 2 * p] * (1 if self.shift > 0 else -1)


TESTCASES = [
    (GatedStack, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MappedInputs, lambda: ([], {'dim': 4}), lambda: ([[torch.rand([2, 4]), torch.rand([2, 4]), torch.rand([2, 4])]], {}), False),
    (SymmetricPad, lambda: ([], {}), lambda: ([torch.rand([2, 3, 6])], {}), False),
]

EXPECTED = {
    'GatedStack': {'dynamic': False, 'features': ['all', 'any(generator)', 'filter with lambda', 'list of pairs']},
    'MappedInputs': {'dynamic': False, 'features': ['map with lambda', 'map with bound module', 'list input', 'reversed slicing']},
    'SymmetricPad': {'dynamic': False, 'features': ['abs', 'Ellipsis slicing', 'negative slice bounds']},
}
