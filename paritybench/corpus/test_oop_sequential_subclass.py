"""Corpus (sequential): subclassing nn.Sequential / nn.ModuleList with custom forward: returning intermediates, skipping, indexing slices."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ReturnAll(nn.Sequential):

    def forward(self, x):
        outs = []
        for module in self:
            x = module(x)
            outs.append(x)
        return outs


class SkipEveryOther(nn.ModuleList):

    def forward(self, x):
        for i, layer in enumerate(self):
            x = layer(x) + (x if i % 2 else 0)
        return x


class SlicedSequential(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, 2))

    def forward(self, x):
        feat = self.body[:-1](x)
        return self.body[-1](feat), len(self.body), feat


class SeqWithArgs(nn.Sequential):
    """A Sequential whose forward threads a condition tensor through every layer."""

    def forward(self, x, cond):
        for m in self:
            x = m(torch.cat([x, cond], -1))
        return x


TESTCASES = [
    (ReturnAll, lambda: ([nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (SkipEveryOther, lambda: ([[nn.Linear(4, 4) for _ in range(3)]], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (SlicedSequential, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SeqWithArgs, lambda: ([nn.Linear(5, 4), nn.Linear(5, 4)], {}), lambda: ([torch.rand([2, 4]), torch.rand([2, 1])], {}), False),
]

EXPECTED = {
    'ReturnAll': {'dynamic': False, 'features': ['Sequential subclass forward iterating self', 'list output']},
    'SkipEveryOther': {'dynamic': False, 'features': ['ModuleList subclass with forward', 'x + 0 int']},
    'SlicedSequential': {'dynamic': False, 'features': ['Sequential slicing body[:-1]', 'len(Sequential)']},
    'SeqWithArgs': {'dynamic': False, 'features': ['Sequential subclass with two inputs']},
}
