"""Corpus (iter): unpacking tensors: a, *rest = t, [*t], first/last rows, tuple(t)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class HeadAndTail(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.head = nn.Linear(dim, dim)
        self.tail = nn.Linear(dim, dim)

    def forward(self, x):
        first, *rest = x
        return self.head(first), self.tail(torch.stack(rest)).mean(0)


class SplitQKV(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        q, k, v = self.qkv(x).view(x.shape[0], 3, -1).transpose(0, 1)
        return torch.softmax(q @ k.t(), -1) @ v


class LastRowResidual(nn.Module):

    def forward(self, x):
        *body, last = [*x]
        return torch.stack(body).sum(0) + last, tuple(x)[0]


TESTCASES = [
    (HeadAndTail, lambda: ([], {'dim': 4}), lambda: ([torch.rand([4, 4])], {}), False),
    (SplitQKV, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (LastRowResidual, lambda: ([], {}), lambda: ([torch.rand([4, 3])], {}), False),
]

EXPECTED = {
    'HeadAndTail': {'dynamic': False, 'features': ['first, *rest = tensor', 'stack of a row list']},
    'SplitQKV': {'dynamic': False, 'features': ['q, k, v = tensor unpacking']},
    'LastRowResidual': {'dynamic': False, 'features': ['*body, last = [*tensor]', 'tuple(tensor)']},
}
