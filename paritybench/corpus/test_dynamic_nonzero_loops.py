"""Corpus (nonzero): loops over nonzero indices and tolist() results: per-object heads, sparse updates, ragged batches."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PerObjectHead(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.head = nn.Linear(channels, 2)

    def forward(self, fmap, heat):
        outs = []
        for b, y, x in torch.nonzero(heat > 0.8).tolist():
            outs.append(self.head(fmap[b, :, y, x]))
        return torch.stack(outs) if outs else fmap.new_zeros(0, 2)


class RaggedMean(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, lengths):
        packed = self.fc(x[:int(lengths.sum())])
        pieces = torch.split(packed, lengths.tolist())
        return torch.stack([p.mean(0) for p in pieces])


class SparseRowUpdate(nn.Module):

    def __init__(self, rows=6, dim=3):
        super().__init__()
        self.table = nn.Parameter(torch.randn(rows, dim))

    def forward(self, ids):
        out = self.table.clone()
        for i in ids.unique():
            out[i] = out[i] * 2
        return out


TESTCASES = [
    (PerObjectHead, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4]), torch.rand([2, 4, 4])], {}), False),
    (RaggedMean, lambda: ([], {'dim': 3}), lambda: ([torch.rand([20, 3]), torch.randint(1, 6, [4])], {}), False),
    (SparseRowUpdate, lambda: ([], {}), lambda: ([torch.randint(0, 6, [4])], {}), False),
]

EXPECTED = {
    'PerObjectHead': {'dynamic': True, 'features': ['for over nonzero().tolist()', 'empty-list branch']},
    'RaggedMean': {'dynamic': True, 'features': ['int(lengths.sum()) slice', 'torch.split(lengths.tolist())']},
    'SparseRowUpdate': {'dynamic': True, 'features': ['iterating unique() values']},
}
