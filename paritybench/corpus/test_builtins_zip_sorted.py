"""Corpus (builtins): zip, sorted, reversed, min, max and sum over feature lists (FPN-style necks)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class FeaturePyramidNeck(nn.Module):

    def __init__(self, in_channels=(4, 8, 16), out_channels=4):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels)
        self.smooth = nn.ModuleList(nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels)

    def forward(self, c3, c4, c5):
        feats = [c3, c4, c5]
        laterals = [conv(f) for conv, f in zip(self.lateral, feats)]
        for i in reversed(range(1, len(laterals))):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[-2:], mode='nearest')
        return tuple(s(l) for s, l in zip(self.smooth, laterals))


class MultiScaleSum(nn.Module):

    def __init__(self, channels, scales=(1, 2, 4)):
        super().__init__()
        self.scales = scales
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        smallest = min(self.scales)
        largest = max(self.scales)
        pooled = [F.avg_pool2d(x, s) if s > 1 else x for s in self.scales]
        up = [F.interpolate(p, size=x.shape[-2:], mode='nearest') for p in pooled]
        return self.proj(sum(up, torch.zeros_like(x))) / (largest - smallest + 1)


class SortedBranches(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.branches = nn.ModuleDict({'gamma': nn.Linear(dim, dim), 'alpha': nn.Linear(dim, dim), 'beta': nn.Linear(dim, dim)})
        self.weights = {'alpha': 0.5, 'beta': 0.3, 'gamma': 0.2}

    def forward(self, x):
        out = []
        for name in sorted(self.branches.keys()):
            out.append(self.branches[name](x) * self.weights[name])
        ranked = sorted(self.weights.items(), key=lambda kv: kv[1], reverse=True)
        top_name = ranked[0][0]
        return torch.stack(out, 0).sum(0) + self.branches[top_name](x)


class TopKMerge(nn.Module):
    """Keeps the k channels groups with the largest configured priorities."""

    def __init__(self, groups=4, k=2):
        super().__init__()
        self.priorities = [3, 1, 4, 2][:groups]
        self.k = k

    def forward(self, x):
        chunks = x.chunk(len(self.priorities), dim=1)
        keep = sorted(range(len(chunks)), key=lambda i: -self.priorities[i])[:self.k]
        return torch.cat([chunks[i] for i in sorted(keep)], dim=1), max(keep), sum(self.priorities)


TESTCASES = [
    (FeaturePyramidNeck, lambda: ([], {}), lambda: ([torch.rand([1, 4, 16, 16]), torch.rand([1, 8, 8, 8]), torch.rand([1, 16, 4, 4])], {}), False),
    (MultiScaleSum, lambda: ([], {'channels': 4}), lambda: ([torch.rand([2, 4, 8, 8])], {}), True),
    (SortedBranches, lambda: ([], {'dim': 6}), lambda: ([torch.rand([3, 6])], {}), False),
    (TopKMerge, lambda: ([], {}), lambda: ([torch.rand([2, 8, 3])], {}), False),
]

EXPECTED = {
    'FeaturePyramidNeck': {'dynamic': False, 'features': ['zip', 'reversed(range)', 'list item assignment', 'tuple(generator)']},
    'MultiScaleSum': {'dynamic': False, 'features': ['min', 'max', 'sum with start', 'conditional expression']},
    'SortedBranches': {'dynamic': False, 'features': ['sorted(keys)', 'sorted(key=lambda, reverse=True)', 'ModuleDict']},
    'TopKMerge': {'dynamic': False, 'features': ['sorted(range, key)', 'slicing', 'max/sum outputs']},
}
