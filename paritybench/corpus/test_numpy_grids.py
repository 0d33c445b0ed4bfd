"""Corpus (grids): np.linspace / np.arange / np.meshgrid made in forward, then torch.from_numpy or torch.tensor."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LinspaceGrid(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels + 2, channels, 1)

    def forward(self, x):
        n, _, h, w = x.shape
        ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing='ij')
        coords = torch.from_numpy(np.stack([xs, ys]).astype(np.float32))
        return self.conv(torch.cat([x, coords.unsqueeze(0).expand(n, -1, -1, -1)], 1))


class ArangeTimesteps(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        half = self.dim // 2
        freqs = np.exp(-np.log(10000.0) * np.arange(half) / half)
        steps = np.arange(x.shape[1])[:, None] * freqs[None, :]
        emb = torch.tensor(np.concatenate([np.sin(steps), np.cos(steps)], axis=1), dtype=x.dtype)
        return self.proj(x + emb)


class GaussianWindow(nn.Module):

    def __init__(self, size=5, sigma=1.5):
        super().__init__()
        self.size, self.sigma = size, sigma

    def forward(self, img):
        r = np.arange(self.size) - self.size // 2
        g = np.exp(-(r ** 2) / (2 * self.sigma ** 2))
        g = g / g.sum()
        k = torch.from_numpy(np.outer(g, g)).float()[None, None]
        c = img.shape[1]
        return F.conv2d(img, k.expand(c, 1, -1, -1), padding=self.size // 2, groups=c)


TESTCASES = [
    (LinspaceGrid, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 3, 4])], {}), False),
    (ArangeTimesteps, lambda: ([], {'dim': 6}), lambda: ([torch.rand([2, 5, 6])], {}), False),
    (GaussianWindow, lambda: ([], {}), lambda: ([torch.rand([1, 3, 6, 6])], {}), False),
]

EXPECTED = {
    'LinspaceGrid': {'dynamic': False, 'features': ['np.meshgrid(np.linspace)', 'torch.from_numpy', 'shape-dependent numpy']},
    'ArangeTimesteps': {'dynamic': False, 'features': ['np.arange/np.exp', 'np.concatenate', 'torch.tensor(ndarray, dtype)']},
    'GaussianWindow': {'dynamic': False, 'features': ['np.outer', 'from_numpy().float()']},
}
