"""Corpus (builtins): math-module positional encodings and schedules computed in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SinusoidalEmbedding(nn.Module):

    def __init__(self, dim=8, max_period=10000):
        super().__init__()
        self.dim = dim
        self.max_period = max_period

    def forward(self, t):
        half = self.dim // 2
        exponent = -math.log(self.max_period) * torch.arange(half, dtype=torch.float32) / half
        args = t[:, None].float() * torch.exp(exponent)[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class PositionalEncoding(nn.Module):

    def __init__(self, d_model=8, max_len=32):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)
        self.scale = math.sqrt(d_model)

    def forward(self, x):
        return x * self.scale + self.pe[:x.size(1)]


class CosineGate(nn.Module):

    def __init__(self, dim, phase=0.25):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.gain = 0.5 * (1 + math.cos(math.pi * phase))
        self.floor = math.floor(math.e)

    def forward(self, x):
        y = self.lin(x) * self.gain + math.hypot(3, 4)
        return torch.clamp(y, max=float(self.floor)), math.isclose(self.gain, 0.8535533905932737)


TESTCASES = [
    (SinusoidalEmbedding, lambda: ([], {}), lambda: ([torch.randint(0, 100, [4])], {}), False),
    (PositionalEncoding, lambda: ([], {}), lambda: ([torch.rand([2, 5, 8])], {}), True),
    (CosineGate, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'SinusoidalEmbedding': {'dynamic': False, 'features': ['math.log', 'None indexing', 'integer tensor input']},
    'PositionalEncoding': {'dynamic': False, 'features': ['register_buffer', 'math.sqrt', 'slice by x.size(1)']},
    'CosineGate': {'dynamic': False, 'features': ['math.cos/pi/floor/e/hypot/isclose', 'bool output']},
}
