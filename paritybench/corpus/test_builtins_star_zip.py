"""Corpus (star): zip(*...): transposing lists of per-sample tuples and per-level feature lists."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PairwiseFeatures(nn.Module):
    """Each branch returns (feature, gate); zip(*...) splits them into two lists."""

    def __init__(self, dim, branches=3):
        super().__init__()
        self.feat = nn.ModuleList(nn.Linear(dim, dim) for _ in range(branches))
        self.gate = nn.ModuleList(nn.Linear(dim, 1) for _ in range(branches))

    def forward(self, x):
        pairs = [(f(x), torch.sigmoid(g(x))) for f, g in zip(self.feat, self.gate)]
        feats, gates = zip(*pairs)
        return sum(f * g for f, g in zip(feats, gates)) / len(feats)


class TransposeNested(nn.Module):
    """Per-image outputs of a multi-level head regrouped per level."""

    def __init__(self, channels):
        super().__init__()
        self.head = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, levels):
        per_image = [tuple(self.head(l[i:i + 1]) for l in levels) for i in range(levels[0].shape[0])]
        per_level = [torch.cat(level, 0) for level in zip(*per_image)]
        return per_level


class UnzipBoxes(nn.Module):

    def forward(self, boxes):
        x1, y1, x2, y2 = boxes.unbind(-1)
        corners = [(x1, y1), (x2, y2)]
        xs, ys = zip(*corners)
        return (xs[1] - xs[0]).clamp(min=0) * (ys[1] - ys[0]).clamp(min=0)

TESTCASES = [
    (PairwiseFeatures, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (TransposeNested, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([2, 2, 8, 8]), torch.rand([2, 2, 4, 4])]], {}), False),
    (UnzipBoxes, lambda: ([], {}), lambda: ([torch.rand([5, 4])], {}), False),
]

EXPECTED = {
    'PairwiseFeatures': {'dynamic': False, 'features': ['zip(*list of tuples)', 'sum(generator)']},
    'TransposeNested': {'dynamic': False, 'features': ['zip(*nested lists)', 'list input', 'shape-driven range']},
    'UnzipBoxes': {'dynamic': False, 'features': ['zip(*pairs)', 'unbind(-1) unpacking']},
}
