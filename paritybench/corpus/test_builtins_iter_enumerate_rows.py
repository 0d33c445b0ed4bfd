"""Corpus (iter): enumerate over tensors: row index and row together, as per-sample loops are written."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PositionalRows(nn.Module):

    def __init__(self, dim, max_len=16):
        super().__init__()
        self.pos = nn.Embedding(max_len, dim)

    def forward(self, x):
        out = []
        for i, row in enumerate(x):
            out.append(row + self.pos.weight[i])
        return torch.stack(out)


class AlternatingSign(nn.Module):

    def forward(self, x):
        return torch.stack([row if i % 2 == 0 else -row for i, row in enumerate(x, 1)])


class PerChannelConv(nn.Module):
    """A separate 1x1 conv for each input channel, fed channel by channel."""

    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(1, 2, 1) for _ in range(channels))

    def forward(self, x):
        chans = x.transpose(0, 1)
        return torch.cat([self.convs[i](c.unsqueeze(1)) for i, c in enumerate(chans)], 1)


TESTCASES = [
    (PositionalRows, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4])], {}), False),
    (AlternatingSign, lambda: ([], {}), lambda: ([torch.rand([4, 3])], {}), False),
    (PerChannelConv, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'PositionalRows': {'dynamic': False, 'features': ['enumerate(tensor)', 'parameter row indexing']},
    'AlternatingSign': {'dynamic': False, 'features': ['enumerate(tensor, 1)', 'conditional expression']},
    'PerChannelConv': {'dynamic': False, 'features': ['enumerate(transposed tensor)', 'ModuleList index']},
}
