"""Corpus (random): random.random() / random.randint branches: test-time augmentation, random erasing, stochastic layer choices."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RandomFlipTTA(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        if random.random() < 0.5:
            return self.conv(x.flip(-1)).flip(-1)
        return self.conv(x)


class RandomErase(nn.Module):

    def __init__(self, size=2):
        super().__init__()
        self.size = size

    def forward(self, img):
        h, w = img.shape[-2:]
        top = random.randint(0, h - self.size)
        left = random.randint(0, w - self.size)
        out = img.clone()
        out[..., top:top + self.size, left:left + self.size] = 0
        return out


class RandomResolution(nn.Module):

    def __init__(self, channels, sizes=(4, 6, 8)):
        super().__init__()
        self.sizes = sizes
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        s = random.choice(self.sizes)
        return F.adaptive_avg_pool2d(self.conv(F.interpolate(x, size=(s, s))), 2)


TESTCASES = [
    (RandomFlipTTA, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (RandomErase, lambda: ([], {}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (RandomResolution, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
]

EXPECTED = {
    'RandomFlipTTA': {'dynamic': True, 'features': ['random.random() branch']},
    'RandomErase': {'dynamic': True, 'features': ['random.randint slice bounds', 'slice assignment']},
    'RandomResolution': {'dynamic': True, 'features': ['random.choice of a size']},
}
