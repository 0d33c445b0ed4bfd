"""Corpus (star): f(*generator): shapes, concatenations and stacks fed by star-unpacked generator expressions."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class TileToShape(nn.Module):

    def __init__(self, repeats=(1, 2, 2)):
        super().__init__()
        self.repeats = repeats

    def forward(self, x):
        tiled = x.repeat(*(r for r in self.repeats))
        return tiled.reshape(*(s for s in tiled.shape[:-2]), -1)


class ConcatHeads(nn.Module):

    def __init__(self, dim, heads=3):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(dim, dim) for _ in range(heads))

    def forward(self, x):
        return torch.cat([*(torch.tanh(h(x)) for h in self.heads)], dim=-1)


class MaxOfScales(nn.Module):
    """max(*generator) over spatial sizes picks the pooled resolution."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, a, b, c):
        size = max(*(t.shape[-1] for t in (a, b, c)))
        ups = (F.interpolate(t, size=(size, size), mode='nearest') for t in (a, b, c))
        return self.conv(torch.stack((*ups,), dim=0).sum(0))


class ExpandLike(nn.Module):

    def forward(self, x, ref):
        x = x.view(x.shape[0], *(1 for _ in ref.shape[1:-1]), x.shape[-1])
        return x.expand(*(d for d in ref.shape)) * ref


TESTCASES = [
    (TileToShape, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (ConcatHeads, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MaxOfScales, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 8, 8]), torch.rand([1, 2, 2, 2])], {}), False),
    (ExpandLike, lambda: ([], {}), lambda: ([torch.rand([2, 5]), torch.rand([2, 3, 4, 5])], {}), False),
]

EXPECTED = {
    'TileToShape': {'dynamic': False, 'features': ['repeat(*generator)', 'reshape(*generator, -1)']},
    'ConcatHeads': {'dynamic': False, 'features': ['[*generator] of module calls']},
    'MaxOfScales': {'dynamic': False, 'features': ['max(*generator)', '(*generator,) into torch.stack']},
    'ExpandLike': {'dynamic': False, 'features': ['view(n, *generator, m)', 'expand(*generator)']},
}
