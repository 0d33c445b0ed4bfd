"""Corpus (recsys): recommendation models: factorization machines, EmbeddingBag with offsets, DCN cross layers, two-tower scoring."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class FactorizationMachine(nn.Module):

    def __init__(self, fields=3, vocab=10, k=4):
        super().__init__()
        self.embed = nn.Embedding(fields * vocab, k)
        self.linear = nn.Embedding(fields * vocab, 1)
        self.register_buffer('offsets', torch.arange(fields) * vocab)

    def forward(self, idx):
        idx = idx + self.offsets
        e = self.embed(idx)
        inter = 0.5 * (e.sum(1).pow(2) - e.pow(2).sum(1)).sum(1, keepdim=True)
        return torch.sigmoid(self.linear(idx).sum(1) + inter)


class BagOfWords(nn.Module):

    def __init__(self, vocab=20, dim=4, classes=3):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode='mean')
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.fc(self.bag(tokens, offsets))


class CrossNetwork(nn.Module):

    def __init__(self, dim, layers=2):
        super().__init__()
        self.w = nn.ParameterList(nn.Parameter(torch.randn(dim, 1) * 0.1) for _ in range(layers))
        self.b = nn.ParameterList(nn.Parameter(torch.zeros(dim)) for _ in range(layers))

    def forward(self, x0):
        x = x0
        for w, b in zip(self.w, self.b):
            x = x0 * (x @ w) + b + x
        return x


class TwoTower(nn.Module):

    def __init__(self, users=5, items=7, dim=4):
        super().__init__()
        self.user = nn.Sequential(nn.Embedding(users, dim), nn.Linear(dim, dim))
        self.item = nn.Sequential(nn.Embedding(items, dim), nn.Linear(dim, dim))

    def forward(self, u, i):
        return (F.normalize(self.user(u), dim=-1) * F.normalize(self.item(i), dim=-1)).sum(-1) / 0.1


TESTCASES = [
    (FactorizationMachine, lambda: ([], {}), lambda: ([torch.randint(0, 10, [4, 3])], {}), False),
    (BagOfWords, lambda: ([], {}), lambda: ([torch.randint(0, 20, [7]), torch.tensor([0, 3])], {}), False),
    (CrossNetwork, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (TwoTower, lambda: ([], {}), lambda: ([torch.randint(0, 5, [3]), torch.randint(0, 7, [3])], {}), False),
]

EXPECTED = {
    'FactorizationMachine': {'dynamic': False, 'features': ['field offsets buffer', 'FM pairwise trick']},
    'BagOfWords': {'dynamic': False, 'features': ['EmbeddingBag with offsets']},
    'CrossNetwork': {'dynamic': False, 'features': ['zip of two ParameterLists']},
    'TwoTower': {'dynamic': False, 'features': ['Sequential starting with Embedding', 'cosine scores']},
}
