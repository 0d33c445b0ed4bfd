"""Corpus (rearrange): einops-like rearranges written by hand: patchify, window partition, pixel unshuffle, head split."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def rearrange_patches(x, p):
    """'b c (h p1) (w p2) -> b (h w) (p1 p2 c)' without einops."""
    b, c, h, w = x.shape
    x = x.reshape(b, c, h // p, p, w // p, p)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, c)


def window_reverse(windows, ws, h, w):
    b = windows.shape[0] // ((h // ws) * (w // ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


class PatchEmbed(nn.Module):

    def __init__(self, channels=3, patch=2, dim=8):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(channels * patch * patch, dim)

    def forward(self, img):
        return self.proj(rearrange_patches(img, self.patch))


class WindowMixer(nn.Module):

    def __init__(self, dim, window=2):
        super().__init__()
        self.window = window
        self.mix = nn.Linear(window * window, window * window)

    def forward(self, x):
        b, h, w, c = x.shape
        win = window_partition(x, self.window)
        win = self.mix(win.transpose(1, 2)).transpose(1, 2)
        return window_reverse(win, self.window, h, w)


class SplitHeads(nn.Module):

    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads = heads
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        h = self.fc(x).view(b, n, self.heads, d // self.heads).transpose(1, 2)
        merged = h.transpose(1, 2).reshape(b, n, -1)
        return F.pixel_unshuffle(merged.view(b, 1, n, d), 1).squeeze(1) + h.mean(1).repeat(1, 1, self.heads)


TESTCASES = [
    (PatchEmbed, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (WindowMixer, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 4, 6, 3])], {}), False),
    (SplitHeads, lambda: ([], {'dim': 8}), lambda: ([torch.rand([2, 5, 8])], {}), False),
]

EXPECTED = {
    'PatchEmbed': {'dynamic': False, 'features': ['hand-written rearrange', 'integer division of shapes']},
    'WindowMixer': {'dynamic': False, 'features': ['window partition/reverse helpers', 'view(-1, ...)']},
    'SplitHeads': {'dynamic': False, 'features': ['head split/merge', 'pixel_unshuffle', 'repeat']},
}
