"""Corpus (list): list and tuple inputs of varying structure: lists of feature maps, tuples of (tensor, int) pairs, nested lists of tensors."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MultiLevelMerge(nn.Module):

    def __init__(self, channels, levels=3):
        super().__init__()
        self.proj = nn.ModuleList(nn.Conv2d(channels, channels, 1) for _ in range(levels))

    def forward(self, feats: list):
        size = feats[0].shape[-2:]
        return sum(F.interpolate(p(f), size=size) for p, f in zip(self.proj, feats)) / len(feats)


class PairsInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, pairs):
        return torch.stack([self.fc(t) * k for t, k in pairs]).sum(0)


class NestedListInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, groups):
        return torch.cat([self.fc(torch.stack(g)).mean(0) for g in groups])


TESTCASES = [
    (MultiLevelMerge, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([1, 2, 8, 8]), torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 2, 2])]], {}), False),
    (PairsInput, lambda: ([], {'dim': 3}), lambda: ([[(torch.rand([2, 3]), 1), (torch.rand([2, 3]), 3)]], {}), False),
    (NestedListInput, lambda: ([], {'dim': 3}), lambda: ([[[torch.rand([3]), torch.rand([3])], [torch.rand([3])]]], {}), False),
]

EXPECTED = {
    'MultiLevelMerge': {'dynamic': False, 'features': ['list of feature maps input', 'sum(generator) / len(list)']},
    'PairsInput': {'dynamic': False, 'features': ['list of (tensor, int) tuples input']},
    'NestedListInput': {'dynamic': False, 'features': ['nested lists of tensors of different lengths']},
}
