"""Corpus (tabular): tabular models: categorical embeddings concatenated with numeric features, feature-wise attention (TabNet-like sparsemax-free masks), wide & deep."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class EmbeddingConcatMLP(nn.Module):

    def __init__(self, cardinalities=(5, 7, 3), numeric=4, dim=3):
        super().__init__()
        self.embeds = nn.ModuleList(nn.Embedding(card, min(dim, (card + 1) // 2)) for card in cardinalities)
        total = sum(e.embedding_dim for e in self.embeds) + numeric
        self.bn = nn.BatchNorm1d(numeric)
        self.mlp = nn.Sequential(nn.Linear(total, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, cats, nums):
        embs = [e(cats[:, i]) for i, e in enumerate(self.embeds)]
        return self.mlp(torch.cat(embs + [self.bn(nums)], 1)).squeeze(-1)


class FeatureMaskSteps(nn.Module):

    def __init__(self, features=6, steps=2, relax=1.5):
        super().__init__()
        self.steps, self.relax = steps, relax
        self.att = nn.ModuleList(nn.Linear(features, features) for _ in range(steps))
        self.fc = nn.ModuleList(nn.Linear(features, 4) for _ in range(steps))

    def forward(self, x):
        prior = torch.ones_like(x)
        out = 0
        for att, fc in zip(self.att, self.fc):
            mask = torch.softmax(att(x) * prior, -1)
            prior = prior * (self.relax - mask)
            out = out + F.relu(fc(x * mask))
        return out


class WideAndDeep(nn.Module):

    def __init__(self, wide_dim=8, deep_cards=(6, 4), dim=3):
        super().__init__()
        self.wide = nn.Linear(wide_dim, 1)
        self.deep_emb = nn.ModuleList(nn.Embedding(c, dim) for c in deep_cards)
        self.deep = nn.Sequential(nn.Linear(dim * len(deep_cards), 4), nn.ReLU(), nn.Linear(4, 1))

    def forward(self, wide_x, deep_ids):
        deep_in = torch.cat([emb(deep_ids[:, i]) for i, emb in enumerate(self.deep_emb)], -1)
        return torch.sigmoid(self.wide(wide_x) + self.deep(deep_in))


TESTCASES = [
    (EmbeddingConcatMLP, lambda: ([], {}), lambda: ([torch.stack([torch.randint(0, 5, [4]), torch.randint(0, 7, [4]), torch.randint(0, 3, [4])], 1), torch.rand([4, 4])], {}), False),
    (FeatureMaskSteps, lambda: ([], {}), lambda: ([torch.rand([3, 6])], {}), False),
    (WideAndDeep, lambda: ([], {}), lambda: ([torch.rand([3, 8]), torch.stack([torch.randint(0, 6, [3]), torch.randint(0, 4, [3])], 1)], {}), False),
]

EXPECTED = {
    'EmbeddingConcatMLP': {'dynamic': False, 'features': ['embedding sizes from cardinalities', 'list + [tensor] concatenation']},
    'FeatureMaskSteps': {'dynamic': False, 'features': ['out = 0 accumulator', 'prior mask update']},
    'WideAndDeep': {'dynamic': False, 'features': ['per-column embeddings by enumerate']},
}
