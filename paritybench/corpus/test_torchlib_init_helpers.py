"""Corpus (init): nn.init and parameter helpers used in model code: trunc_normal_ init in __init__, calculate_gain in forward, Parameter created in __init__ from helpers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def make_param(*shape, std=0.02):
    p = nn.Parameter(torch.empty(*shape))
    nn.init.trunc_normal_(p, std=std, a=-2 * std, b=2 * std)
    return p


class GainScaled(nn.Module):

    def __init__(self, dim, act='leaky_relu'):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        nn.init.kaiming_uniform_(self.fc.weight, a=0.2, nonlinearity=act)
        self.act = act

    def forward(self, x):
        gain = nn.init.calculate_gain(self.act, 0.2)
        return F.leaky_relu(self.fc(x), 0.2) / gain


class LearnedQueries(nn.Module):

    def __init__(self, dim, queries=3):
        super().__init__()
        self.queries = make_param(queries, dim)
        self.pos = make_param(1, queries, dim, std=0.5)
        self.attn = nn.MultiheadAttention(dim, 1, batch_first=True)

    def forward(self, memory):
        q = (self.queries + self.pos).expand(memory.shape[0], -1, -1)
        return self.attn(q, memory, memory)[0]


class OrthogonalInit(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.rnn = nn.RNN(dim, dim, batch_first=True)
        for name, p in self.rnn.named_parameters():
            if 'weight_hh' in name:
                nn.init.orthogonal_(p)
            elif 'bias' in name:
                nn.init.constant_(p, 0.0)

    def forward(self, x):
        return self.rnn(x)[0]


TESTCASES = [
    (GainScaled, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (LearnedQueries, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (OrthogonalInit, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 4, 3])], {}), False),
]

EXPECTED = {
    'GainScaled': {'dynamic': False, 'features': ['nn.init.calculate_gain in forward']},
    'LearnedQueries': {'dynamic': False, 'features': ['trunc_normal_ parameter helper', 'MultiheadAttention(...)[0]']},
    'OrthogonalInit': {'dynamic': False, 'features': ['named_parameters init in __init__', 'nn.RNN']},
}
