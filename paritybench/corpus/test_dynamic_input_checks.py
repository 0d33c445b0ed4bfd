"""Corpus (input): input-range checks that inspect values: rescaling images given in 0-255, clamping only when out of range, normalising by the observed maximum."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AutoRescale(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, img):
        if img.max() > 1.0:
            img = img / 255.0
        return self.conv(img)


class ClampIfNeeded(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.fc(x)
        lo, hi = y.min().item(), y.max().item()
        if lo < -1 or hi > 1:
            y = y.clamp(-1, 1)
        return y, (lo, hi)


class PeakNormalize(nn.Module):

    def forward(self, wav):
        peak = float(wav.abs().max())
        return wav / peak if peak > 0 else wav


TESTCASES = [
    (AutoRescale, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4]) * 2], {}), False),
    (ClampIfNeeded, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (PeakNormalize, lambda: ([], {}), lambda: ([torch.randn([2, 16])], {}), False),
]

EXPECTED = {
    'AutoRescale': {'dynamic': True, 'features': ['if img.max() > 1.0']},
    'ClampIfNeeded': {'dynamic': True, 'features': ['.item() bounds in a branch and an output tuple']},
    'PeakNormalize': {'dynamic': True, 'features': ['float(tensor) divides', 'conditional expression on a float']},
}
