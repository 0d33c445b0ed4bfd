"""Corpus (lru): lru_cache on helper functions keyed by shapes and dtypes: grids, windows and relative indices."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


@functools.lru_cache(maxsize=16)
def base_grid(h, w):
    ys = torch.linspace(-1.0, 1.0, h)
    xs = torch.linspace(-1.0, 1.0, w)
    gy, gx = torch.meshgrid(ys, xs, indexing='ij')
    return torch.stack((gx, gy), -1).unsqueeze(0)


@functools.lru_cache(maxsize=None)
def relative_index(window):
    coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing='ij')).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
    return rel[..., 0] * (2 * window - 1) + rel[..., 1]


@functools.lru_cache(maxsize=4)
def hann(n):
    return 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(n, dtype=torch.float32) / n)


class AffineWarp(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Linear(channels, 2)

    def forward(self, x):
        n, c, h, w = x.shape
        shift = torch.tanh(self.loc(x.mean((2, 3)))).view(n, 1, 1, 2)
        return F.grid_sample(x, base_grid(h, w) + shift, align_corners=False)


class RelativeBias(nn.Module):

    def __init__(self, window=3, heads=2):
        super().__init__()
        self.window = window
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads))

    def forward(self, attn):
        bias = self.table[relative_index(self.window).view(-1)]
        bias = bias.view(self.window ** 2, self.window ** 2, -1).permute(2, 0, 1)
        return torch.softmax(attn + bias.unsqueeze(0), -1)


class WindowedFrames(nn.Module):

    def __init__(self, frame=8):
        super().__init__()
        self.frame = frame

    def forward(self, signal):
        frames = signal.unfold(-1, self.frame, self.frame // 2)
        return (frames * hann(self.frame)).pow(2).sum(-1).sqrt()


TESTCASES = [
    (AffineWarp, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 5, 6])], {}), False),
    (RelativeBias, lambda: ([], {}), lambda: ([torch.rand([1, 2, 9, 9])], {}), False),
    (WindowedFrames, lambda: ([], {}), lambda: ([torch.rand([2, 32])], {}), False),
]

EXPECTED = {
    'AffineWarp': {'dynamic': False, 'features': ['lru_cache keyed by shape ints', 'meshgrid', 'grid_sample']},
    'RelativeBias': {'dynamic': False, 'features': ['lru_cache(None) index tensor', 'parameter gather']},
    'WindowedFrames': {'dynamic': False, 'features': ['lru_cache window', 'unfold']},
}
