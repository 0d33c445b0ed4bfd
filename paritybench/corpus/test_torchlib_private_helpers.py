"""Corpus (private): private torch helpers users call: nn.init._calculate_correct_fan, _calculate_fan_in_and_fan_out, F._canonical_mask."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.init import _calculate_correct_fan, _calculate_fan_in_and_fan_out
patch_functional()


class EqualizedLinear(nn.Module):
    """Runtime He scaling computed from the weight's fan in every forward."""

    def __init__(self, in_dim, out_dim, gain=2 ** 0.5):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.gain = gain

    def forward(self, x):
        fan = _calculate_correct_fan(self.weight, 'fan_in')
        return F.linear(x, self.weight * (self.gain / math.sqrt(fan)), self.bias)


class FanScaledConv(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * 2, 3, padding=1)

    def forward(self, x):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(self.conv.weight)
        scale = math.sqrt(2.0 / (fan_in + fan_out))
        return F.conv2d(x, self.conv.weight * scale, self.conv.bias, padding=1)


class CanonicalMaskAttention(nn.Module):
    """Converts a boolean padding mask the way nn.MultiheadAttention does internally."""

    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, key_padding_mask):
        mask = F._canonical_mask(mask=key_padding_mask, mask_name='key_padding_mask', other_type=None,
                                 other_name='', target_type=x.dtype)
        scores = self.q(x) @ self.k(x).transpose(-1, -2) / math.sqrt(x.shape[-1])
        return torch.softmax(scores + mask[:, None, :], -1)


TESTCASES = [
    (EqualizedLinear, lambda: ([], {'in_dim': 4, 'out_dim': 3}), lambda: ([torch.rand([2, 4])], {}), False),
    (FanScaledConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (CanonicalMaskAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4]), torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])], {}), False),
]

EXPECTED = {
    'EqualizedLinear': {'dynamic': False, 'features': ['nn.init._calculate_correct_fan in forward']},
    'FanScaledConv': {'dynamic': False, 'features': ['_calculate_fan_in_and_fan_out in forward', 'math.sqrt']},
    'CanonicalMaskAttention': {'dynamic': False, 'features': ['F._canonical_mask', 'boolean mask input']},
}
