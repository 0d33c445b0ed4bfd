"""Corpus (shape): value-shaped results read into Python: nonzero counts, unique sizes, masked lengths used to build new tensors."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class UniqueEmbedding(nn.Module):

    def __init__(self, vocab=10, dim=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, ids):
        uniq, inverse = torch.unique(ids, return_inverse=True)
        table = self.embed(uniq)
        return table[inverse], uniq.numel()


class TopSelected(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, x):
        s = self.score(x).squeeze(-1)
        keep = torch.nonzero(s > 0).squeeze(1)
        k = min(2, keep.shape[0])
        return x[keep[:k]], k


class PadToCount(nn.Module):

    def __init__(self, width=4):
        super().__init__()
        self.width = width

    def forward(self, x):
        picked = x[x > 0.5]
        out = torch.zeros(self.width)
        n = min(self.width, picked.numel())
        out[:n] = picked[:n]
        return out


TESTCASES = [
    (UniqueEmbedding, lambda: ([], {}), lambda: ([torch.randint(0, 10, [6])], {}), False),
    (TopSelected, lambda: ([], {'dim': 3}), lambda: ([torch.randn([6, 3])], {}), False),
    (PadToCount, lambda: ([], {}), lambda: ([torch.rand([3, 3])], {}), False),
]

EXPECTED = {
    'UniqueEmbedding': {'dynamic': True, 'features': ['torch.unique numel into Python']},
    'TopSelected': {'dynamic': True, 'features': ['nonzero().shape[0] with min()']},
    'PadToCount': {'dynamic': True, 'features': ['masked numel sizes a slice assignment']},
}
