"""Corpus (conformer): speech-transformer pieces: Conformer convolution module, macaron feed-forward halves, relative sinusoidal positions."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ConvModule(nn.Module):

    def __init__(self, dim, kernel=3):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pw1 = nn.Conv1d(dim, dim * 2, 1)
        self.dw = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.pw2 = nn.Conv1d(dim, dim, 1)

    def forward(self, x):
        y = self.norm(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = self.pw2(F.silu(self.bn(self.dw(y))))
        return x + y.transpose(1, 2)


class ConformerBlock(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.ff1 = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * 4), nn.SiLU(), nn.Linear(dim * 4, dim))
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.conv = ConvModule(dim)
        self.ff2 = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * 4), nn.SiLU(), nn.Linear(dim * 4, dim))
        self.out_norm = nn.LayerNorm(dim)

    def forward(self, x, pad_mask=None):
        x = x + 0.5 * self.ff1(x)
        q = self.attn_norm(x)
        x = x + self.attn(q, q, q, key_padding_mask=pad_mask, need_weights=False)[0]
        x = self.conv(x)
        return self.out_norm(x + 0.5 * self.ff2(x))


class Subsampler(nn.Module):
    """Two stride-2 convolutions over (time, freq), then flattening freq into features."""

    def __init__(self, feats=8, dim=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, dim, 3, 2), nn.ReLU(), nn.Conv2d(dim, dim, 3, 2), nn.ReLU())
        self.out = nn.Linear(dim * (((feats - 1) // 2 - 1) // 2), dim)

    def forward(self, x):
        y = self.conv(x.unsqueeze(1))
        b, c, t, f = y.size()
        return self.out(y.transpose(1, 2).contiguous().view(b, t, c * f))


TESTCASES = [
    (ConformerBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (ConformerBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4]), torch.tensor([[False] * 5, [False] * 3 + [True] * 2])], {}), False),
    (Subsampler, lambda: ([], {}), lambda: ([torch.rand([2, 12, 8])], {}), False),
]

EXPECTED = {
    'ConformerBlock': {'dynamic': False, 'features': ['MultiheadAttention(...)[0]', 'GLU over channels', 'None mask default']},
    'ConformerBlock#1': {'dynamic': False, 'features': ['key_padding_mask given']},
    'Subsampler': {'dynamic': False, 'features': ['size() unpacking', 'feature size arithmetic in __init__']},
}
