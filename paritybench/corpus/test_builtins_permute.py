"""Corpus (builtins): axis bookkeeping with generators and list methods, as in video SR code (paper Fig. 3a #1)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def move_axes_front(x, axes):
    perm = list(axes)
    perm.extend(i for i in range(x.dim()) if i not in perm)
    return x.permute(*perm)


class TemporalFusion(nn.Module):
    """Fuses a (B, T, C, H, W) clip by moving time next to channels."""

    def __init__(self, channels, frames):
        super().__init__()
        self.frames = frames
        self.fuse = nn.Conv2d(channels * frames, channels, 3, padding=1)

    def forward(self, x):
        perm = [0, 2]
        perm.extend(i for i in range(x.dim()) if i not in perm)
        x = x.permute(*perm).contiguous()
        b, c, t, h, w = x.shape
        return self.fuse(x.view(b, c * t, h, w))


class SpaceToDepth(nn.Module):

    def __init__(self, block_size=2):
        super().__init__()
        self.bs = block_size

    def forward(self, x):
        n, c, h, w = x.size()
        x = x.view(n, c, h // self.bs, self.bs, w // self.bs, self.bs)
        x = move_axes_front(x, [0, 3, 5, 1]).contiguous()
        return x.view(n, c * self.bs ** 2, h // self.bs, w // self.bs)


class ChannelShuffle(nn.Module):

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        batch, channels, *spatial = x.shape
        per_group = channels // self.groups
        x = x.reshape(batch, self.groups, per_group, *spatial)
        order = [0, 2, 1] + [d for d in range(3, x.dim())]
        return x.permute(order).reshape(batch, channels, *spatial)


TESTCASES = [
    (TemporalFusion, lambda: ([], {'channels': 4, 'frames': 3}), lambda: ([torch.rand([2, 3, 4, 8, 8])], {}), False),
    (SpaceToDepth, lambda: ([], {}), lambda: ([torch.rand([2, 4, 8, 8])], {}), False),
    (ChannelShuffle, lambda: ([], {'groups': 2}), lambda: ([torch.rand([2, 4, 5, 5])], {}), True),
]

EXPECTED = {
    'TemporalFusion': {'dynamic': False, 'features': ['generator expression', 'list.extend', 'range', 'star-args']},
    'SpaceToDepth': {'dynamic': False, 'features': ['helper function', 'list.extend', 'Tensor.size']},
    'ChannelShuffle': {'dynamic': False, 'features': ['star unpacking', 'list comprehension', 'list concat']},
}
