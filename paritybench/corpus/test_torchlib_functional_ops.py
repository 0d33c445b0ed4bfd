"""Corpus (functional): less common functional ops: F.unfold/F.fold patches, pixel_shuffle upsampling, grid_sample warps, cosine_similarity."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class UnfoldAttention(nn.Module):
    """Local attention via F.unfold over 3x3 neighbourhoods (SASA-style)."""

    def __init__(self, channels):
        super().__init__()
        self.q = nn.Conv2d(channels, channels, 1)
        self.kv = nn.Conv2d(channels, channels * 2, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q = self.q(x).view(b, c, 1, h * w)
        k, v = self.kv(x).chunk(2, 1)
        k = F.unfold(k, 3, padding=1).view(b, c, 9, h * w)
        v = F.unfold(v, 3, padding=1).view(b, c, 9, h * w)
        attn = (q * k).sum(1, keepdim=True).softmax(2)
        return (attn * v).sum(2).view(b, c, h, w)


class FoldReconstruct(nn.Module):

    def __init__(self, channels, patch=2):
        super().__init__()
        self.patch = patch
        self.mix = nn.Linear(channels * patch * patch, channels * patch * patch)

    def forward(self, x):
        h, w = x.shape[-2:]
        cols = F.unfold(x, self.patch, stride=self.patch)
        cols = self.mix(cols.transpose(1, 2)).transpose(1, 2)
        return F.fold(cols, (h, w), self.patch, stride=self.patch)


class SubPixelUp(nn.Module):

    def __init__(self, channels, scale=2):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * scale ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x, ref):
        up = self.shuffle(self.conv(x))
        sim = F.cosine_similarity(up, ref, dim=1).unsqueeze(1)
        return up * sim


TESTCASES = [
    (UnfoldAttention, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (FoldReconstruct, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 6])], {}), False),
    (SubPixelUp, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3]), torch.rand([1, 2, 6, 6])], {}), False),
]

EXPECTED = {
    'UnfoldAttention': {'dynamic': False, 'features': ['F.unfold neighbourhoods', 'view with shape arithmetic']},
    'FoldReconstruct': {'dynamic': False, 'features': ['F.unfold/F.fold round trip']},
    'SubPixelUp': {'dynamic': False, 'features': ['PixelShuffle', 'F.cosine_similarity']},
}
