"""Corpus (weight): hand-written weight reparametrisations applied by pre-hooks: weight standardisation, scaled weights, masks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class WeightStandardize:
    def __init__(self, eps=1e-5):
        self.eps = eps

    def __call__(self, module, inputs):
        w = module.weight_raw
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        std = w.std(dim=(1, 2, 3), keepdim=True)
        module.weight = (w - mean) / (std + self.eps)


def standardized_conv(in_c, out_c, k):
    conv = nn.Conv2d(in_c, out_c, k, padding=k // 2)
    raw = conv.weight
    del conv.weight
    conv.weight_raw = raw
    conv.weight = raw.data.clone()
    conv.register_forward_pre_hook(WeightStandardize())
    return conv


class WSConvBlock(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = standardized_conv(channels, channels, 3)
        self.norm = nn.GroupNorm(1, channels)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class PrunedLinear(nn.Module):
    """Applies a fixed pruning mask to the weight before each call of the inner layer."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer('mask', (torch.arange(dim * dim).view(dim, dim) % 3 != 0).float())
        self.fc.register_forward_pre_hook(self._apply_mask)

    def _apply_mask(self, module, inputs):
        module.weight.data.mul_(self.mask)

    def forward(self, x):
        return self.fc(x)


TESTCASES = [
    (WSConvBlock, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (PrunedLinear, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'WSConvBlock': {'dynamic': False, 'features': ['pre-hook object recomputing a plain-tensor weight', 'del of a parameter']},
    'PrunedLinear': {'dynamic': False, 'features': ['pre-hook mutating weight.data in place', 'bound-method hook']},
}
