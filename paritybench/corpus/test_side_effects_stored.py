"""Corpus (side effects): intermediate results kept on self for visualisation and auxiliary losses."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AttentionWithMaps(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_maps = []

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        att = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1)
        self.attn_maps = [att]
        return att @ v


class AuxLossNet(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, 2)
        self.aux_losses = {}

    def forward(self, x):
        h = self.fc1(x)
        self.aux_losses['l2'] = h.pow(2).mean()
        self.aux_losses['sparsity'] = h.abs().mean()
        return self.fc2(h)


class FeatureBank(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(2))
        self.features = None

    def forward(self, x):
        feats = []
        for b in self.blocks:
            x = b(x)
            feats.append(x)
        self.features = feats
        self.num_features = len(feats)
        return x


TESTCASES = [
    (AttentionWithMaps, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (AuxLossNet, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (FeatureBank, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'AttentionWithMaps': {'dynamic': False, 'features': ['list of tensors stored on self']},
    'AuxLossNet': {'dynamic': False, 'features': ['dict on self updated with tensors']},
    'FeatureBank': {'dynamic': False, 'features': ['attribute replaced by a new list', 'new attribute created in forward']},
}
