"""Corpus (counter): collections.Counter and defaultdict: counting layer kinds, grouping features by key."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from collections import Counter, defaultdict
patch_functional()


class CountedBranches(nn.Module):

    def __init__(self, dim, kinds=('conv', 'conv', 'pool', 'conv')):
        super().__init__()
        self.kinds = list(kinds)
        self.counts = Counter(kinds)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        scale = self.counts['conv'] / sum(self.counts.values())
        common, n = self.counts.most_common(1)[0]
        return self.proj(x) * scale + n, common


class GroupByStride(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.strides = [1, 2, 1, 2]
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, s, 1) for s in self.strides)

    def forward(self, x):
        groups = defaultdict(list)
        for stride, conv in zip(self.strides, self.convs):
            groups[stride].append(conv(x))
        return {s: torch.stack(v).sum(0) for s, v in sorted(groups.items())}


class TokenHistogram(nn.Module):
    """Counts a fixed vocabulary given at construction to weight embeddings."""

    def __init__(self, dim, vocab=('a', 'b', 'a', 'c', 'a', 'b')):
        super().__init__()
        counts = Counter(vocab)
        self.tokens = sorted(counts)
        self.freq = [counts[t] for t in self.tokens]
        self.embed = nn.Embedding(len(self.tokens), dim)

    def forward(self, idx):
        weights = torch.tensor(self.freq, dtype=torch.float32)
        return self.embed(idx) * (weights / weights.sum())[idx].unsqueeze(-1)


TESTCASES = [
    (CountedBranches, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GroupByStride, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (TokenHistogram, lambda: ([], {'dim': 4}), lambda: ([torch.randint(0, 3, [2, 5])], {}), False),
]

EXPECTED = {
    'CountedBranches': {'dynamic': False, 'features': ['Counter lookups', 'most_common', 'string output']},
    'GroupByStride': {'dynamic': False, 'features': ['defaultdict(list)', 'dict comprehension output with int keys']},
    'TokenHistogram': {'dynamic': False, 'features': ['torch.tensor(list) in forward', 'tensor indexing by input']},
}
