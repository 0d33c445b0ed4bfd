"""Corpus (lru): functools.lru_cache helpers returning tensors and numbers (positional tables, kernel sizes, masks)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


@functools.lru_cache(maxsize=None)
def sinusoid_table(length, dim):
    pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


@functools.lru_cache()
def kernel_size_for(channels, gamma=2, b=1):
    k = int(abs((math.log(channels, 2) + b) / gamma))
    return k if k % 2 else k + 1


@functools.lru_cache(maxsize=8)
def causal_mask(n):
    return torch.triu(torch.full((n, n), float('-inf')), diagonal=1)


class SinusoidEncoding(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x + sinusoid_table(x.shape[1], self.dim))


class ECAAttention(nn.Module):
    """Efficient channel attention: the 1-D kernel size is derived from the channel count."""

    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        k = kernel_size_for(channels)
        self.conv = nn.Conv1d(1, 1, k, padding=k // 2, bias=False)

    def forward(self, x):
        y = x.mean((2, 3)).unsqueeze(1)
        pad = kernel_size_for(self.channels) // 2
        y = torch.sigmoid(self.conv(y)).squeeze(1)
        return x * y[:, :, None, None] + pad


class CausalScores(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(-1, -2) / math.sqrt(x.shape[-1])
        return torch.softmax(scores + causal_mask(x.shape[1]), -1)


TESTCASES = [
    (SinusoidEncoding, lambda: ([], {'dim': 6}), lambda: ([torch.rand([2, 5, 6])], {}), False),
    (ECAAttention, lambda: ([], {'channels': 16}), lambda: ([torch.rand([2, 16, 3, 3])], {}), False),
    (CausalScores, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
]

EXPECTED = {
    'SinusoidEncoding': {'dynamic': False, 'features': ['lru_cache function returning a tensor', 'slice assignment']},
    'ECAAttention': {'dynamic': False, 'features': ['lru_cache function returning an int', 'math.log']},
    'CausalScores': {'dynamic': False, 'features': ['lru_cache(maxsize) mask', 'float("-inf")']},
}
