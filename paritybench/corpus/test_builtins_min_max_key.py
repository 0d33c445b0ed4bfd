"""Corpus (min): min/max/sorted with key functions over modules and shapes: picking the finest level, largest head, ordered scales."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class FinestLevel(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.fuse = nn.Conv2d(channels, channels, 1)

    def forward(self, feats):
        target = max(feats, key=lambda f: f.shape[-1] * f.shape[-2])
        size = target.shape[-2:]
        return self.fuse(sum(F.interpolate(f, size=size, mode='nearest') for f in feats))


class WidestHead(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, 2), nn.Linear(dim, 5), nn.Linear(dim, 3)])

    def forward(self, x):
        widest = max(self.heads, key=lambda h: h.out_features)
        narrowest = min(self.heads, key=lambda h: h.out_features)
        return widest(x), narrowest(x)


class OrderedScales(nn.Module):

    def __init__(self, channels, scales=(4, 1, 2)):
        super().__init__()
        self.scales = scales
        self.convs = nn.ModuleDict({str(s): nn.Conv2d(channels, channels, 1) for s in scales})

    def forward(self, x):
        out = x
        for s in sorted(self.scales, reverse=True):
            pooled = F.avg_pool2d(out, s) if s > 1 else out
            out = out + F.interpolate(self.convs[str(s)](pooled), size=x.shape[-2:])
        return out


TESTCASES = [
    (FinestLevel, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([1, 2, 2, 2]), torch.rand([1, 2, 8, 8]), torch.rand([1, 2, 4, 4])]], {}), False),
    (WidestHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (OrderedScales, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'FinestLevel': {'dynamic': False, 'features': ['max(list, key=lambda over shapes)', 'list input']},
    'WidestHead': {'dynamic': False, 'features': ['max/min over ModuleList with key']},
    'OrderedScales': {'dynamic': False, 'features': ['sorted(reverse=True)', 'str keys']},
}
