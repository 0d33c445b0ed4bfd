"""Corpus (dynamic typing): int/float/bool/str arguments choosing behaviour at call time."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Reducer(nn.Module):

    def forward(self, x, mode='mean', dim=1, keepdim=False):
        if mode == 'mean':
            return x.mean(dim, keepdim=keepdim)
        elif mode == 'max':
            return x.max(dim, keepdim=keepdim)[0]
        return x.sum(dim, keepdim=keepdim)


class ScaleAny(nn.Module):

    def __init__(self, scale=2):
        super().__init__()
        self.scale = scale

    def forward(self, x, extra=1):
        s = self.scale * extra
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        return x * s, type(s).__name__


class Upsampler(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, factor=2, smooth=True, mode='nearest'):
        x = F.interpolate(x, scale_factor=float(factor), mode=mode)
        return self.conv(x) if smooth else x


TESTCASES = [
    (Reducer, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4])], {'mode': 'max', 'dim': -1}), False),
    (Reducer, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4])], {'mode': 'sum', 'keepdim': True}), False),
    (ScaleAny, lambda: ([], {}), lambda: ([torch.rand([3])], {'extra': 1.5}), False),
    (Upsampler, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3])], {'factor': 2, 'smooth': True}), False),
]

EXPECTED = {
    'Reducer': {'dynamic': False, 'features': ['string mode argument', 'negative dim', 'tuple result indexing']},
    'Reducer#1': {'dynamic': False, 'features': ['string mode fallthrough', 'keepdim flag']},
    'ScaleAny': {'dynamic': False, 'features': ['int*float', 'float.is_integer', 'type(x).__name__ output']},
    'Upsampler': {'dynamic': False, 'features': ['int→float conversion', 'bool flag argument', 'conditional expression return']},
}
