"""Corpus (data): Python data structures filled from tensor values: dicts keyed by predicted labels, sorted lists of scores, sets of indices."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class GroupByPrediction(nn.Module):

    def __init__(self, dim, classes=3):
        super().__init__()
        self.cls = nn.Linear(dim, classes)

    def forward(self, x):
        labels = self.cls(x).argmax(-1)
        groups = {}
        for row, label in zip(x, labels.tolist()):
            groups.setdefault(label, []).append(row)
        return {k: torch.stack(v).mean(0) for k, v in sorted(groups.items())}


class SortedByScore(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, x):
        scores = self.score(x).squeeze(-1).tolist()
        order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
        return x[order[:2]], order


class SeenIndices(nn.Module):

    def forward(self, ids, table):
        seen = set()
        rows = []
        for i in ids.tolist():
            if i not in seen:
                seen.add(i)
                rows.append(table[i])
        return torch.stack(rows), len(seen)


TESTCASES = [
    (GroupByPrediction, lambda: ([], {'dim': 3}), lambda: ([torch.randn([6, 3])], {}), False),
    (SortedByScore, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3])], {}), False),
    (SeenIndices, lambda: ([], {}), lambda: ([torch.randint(0, 5, [6]), torch.rand([5, 2])], {}), False),
]

EXPECTED = {
    'GroupByPrediction': {'dynamic': True, 'features': ['dict keyed by argmax labels']},
    'SortedByScore': {'dynamic': True, 'features': ['sorted by .tolist() scores']},
    'SeenIndices': {'dynamic': True, 'features': ['set of tensor-derived ints', 'len(set) output']},
}
