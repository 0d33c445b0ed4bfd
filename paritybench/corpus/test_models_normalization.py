"""Corpus (normalization): normalization variants written by hand: RMSNorm, LayerNorm over channels, AdaIN, conditional BatchNorm, GRN."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RMSNorm(nn.Module):

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ChannelLayerNorm(nn.Module):
    """LayerNorm over the channel axis of NCHW maps (ConvNeXt 'channels_first')."""

    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class AdaIN(nn.Module):

    def __init__(self, channels, style_dim):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=False)
        self.style = nn.Linear(style_dim, channels * 2)

    def forward(self, x, style):
        gamma, beta = self.style(style).unsqueeze(-1).unsqueeze(-1).chunk(2, 1)
        return (1 + gamma) * self.norm(x) + beta


class ConditionalBatchNorm(nn.Module):

    def __init__(self, channels, classes):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, affine=False)
        self.embed = nn.Embedding(classes, channels * 2)
        self.embed.weight.data[:, :channels].fill_(1.0)
        self.embed.weight.data[:, channels:].zero_()

    def forward(self, x, y):
        gamma, beta = self.embed(y).chunk(2, 1)
        return gamma.view(-1, x.shape[1], 1, 1) * self.bn(x) + beta.view(-1, x.shape[1], 1, 1)


class GlobalResponseNorm(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.zeros(1, 1, 1, dim) + 0.1)
        self.beta = nn.Parameter(torch.zeros(1, 1, 1, dim))

    def forward(self, x):
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


TESTCASES = [
    (RMSNorm, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (ChannelLayerNorm, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (AdaIN, lambda: ([], {'channels': 2, 'style_dim': 4}), lambda: ([torch.rand([2, 2, 4, 4]), torch.rand([2, 4])], {}), False),
    (ConditionalBatchNorm, lambda: ([], {'channels': 2, 'classes': 3}), lambda: ([torch.rand([2, 2, 4, 4]), torch.tensor([0, 2])], {}), False),
    (GlobalResponseNorm, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 4, 4, 3])], {}), False),
]

EXPECTED = {
    'RMSNorm': {'dynamic': False, 'features': ['rsqrt normalization']},
    'ChannelLayerNorm': {'dynamic': False, 'features': ['channels-first LayerNorm', '[:, None, None] indexing']},
    'AdaIN': {'dynamic': False, 'features': ['InstanceNorm2d', 'style-conditioned affine']},
    'ConditionalBatchNorm': {'dynamic': False, 'features': ['Embedding-conditioned BatchNorm', 'weight.data slicing in __init__']},
    'GlobalResponseNorm': {'dynamic': False, 'features': ['torch.norm over dims', 'ConvNeXt-V2 GRN']},
}
