"""Corpus (slicing): slicing idioms: Ellipsis, None axes, negative steps, slice objects stored on the module, strided views."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CropBorders(nn.Module):

    def __init__(self, border=1):
        super().__init__()
        self.region = (Ellipsis, slice(border, -border), slice(border, -border))

    def forward(self, x):
        return x[self.region], x[..., ::2, :].flip(-1)


class InterleaveHalves(nn.Module):

    def forward(self, x):
        even, odd = x[:, 0::2], x[:, 1::2]
        out = torch.empty_like(x)
        out[:, 0::2] = odd
        out[:, 1::2] = even
        return out, x[:, None, :, None].shape


class LastTokens(nn.Module):

    def __init__(self, dim, keep=2):
        super().__init__()
        self.keep = keep
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        head = x[:, :1]
        tail = x[:, -self.keep:]
        middle = x[:, 1:-self.keep]
        return self.fc(torch.cat([tail, middle.flip(1), head], 1)), middle.shape[1]


TESTCASES = [
    (CropBorders, lambda: ([], {}), lambda: ([torch.rand([1, 2, 5, 6])], {}), False),
    (InterleaveHalves, lambda: ([], {}), lambda: ([torch.rand([2, 6])], {}), False),
    (LastTokens, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 6, 3])], {}), False),
]

EXPECTED = {
    'CropBorders': {'dynamic': False, 'features': ['slice objects with Ellipsis on self', 'strided slice then flip']},
    'InterleaveHalves': {'dynamic': False, 'features': ['strided slice assignment', 'None-axis indexing shape output']},
    'LastTokens': {'dynamic': False, 'features': ['negative slice bounds from config', 'flip']},
}
