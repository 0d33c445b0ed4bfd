"""Corpus (legacy): legacy constructors in forward: torch.FloatTensor(list), torch.LongTensor(range(n)), torch.Tensor(list), sized FloatTensor."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MeanStdNormalize(nn.Module):

    def __init__(self):
        super().__init__()
        self.mean = [0.485, 0.456, 0.406]
        self.std = [0.229, 0.224, 0.225]

    def forward(self, img):
        mean = torch.FloatTensor(self.mean).view(1, 3, 1, 1)
        std = torch.Tensor(self.std).view(1, 3, 1, 1)
        return (img - mean) / std


class ReverseSequence(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.rnn_cell = nn.GRUCell(dim, dim)

    def forward(self, seq):
        idx = torch.LongTensor(range(seq.shape[1] - 1, -1, -1))
        rev = seq.index_select(1, idx)
        h = torch.zeros(seq.shape[0], seq.shape[2])
        for t in range(rev.shape[1]):
            h = self.rnn_cell(rev[:, t], h)
        return h


class ZeroStateInit(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        state = torch.FloatTensor(x.shape[0], self.dim).zero_()
        weights = torch.Tensor([0.25, 0.75])
        return self.fc(x) * weights[1] + state * weights[0]


TESTCASES = [
    (MeanStdNormalize, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (ReverseSequence, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 4, 3])], {}), False),
    (ZeroStateInit, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'MeanStdNormalize': {'dynamic': False, 'features': ['torch.FloatTensor(list)', 'torch.Tensor(list)']},
    'ReverseSequence': {'dynamic': False, 'features': ['torch.LongTensor(range(n-1, -1, -1))', 'GRUCell loop']},
    'ZeroStateInit': {'dynamic': False, 'features': ['torch.FloatTensor(n, d).zero_()', 'torch.Tensor(list)']},
}
