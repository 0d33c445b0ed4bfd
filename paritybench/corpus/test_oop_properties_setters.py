"""Corpus (properties): properties with setters and deleters on modules: derived sizes, temperature stored in log space, cached tensors invalidated by setters."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LogTemperature(nn.Module):

    def __init__(self, dim, temperature=0.5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self._log_t = math.log(temperature)

    @property
    def temperature(self):
        return math.exp(self._log_t)

    @temperature.setter
    def temperature(self, value):
        self._log_t = math.log(value)

    def forward(self, x):
        self.temperature = 0.25
        return (self.fc(x) / self.temperature).softmax(-1)


class DerivedSizes(nn.Module):

    def __init__(self, heads=2, head_dim=3):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.qkv = nn.Linear(self.dim, self.dim * 3)

    @property
    def dim(self):
        return self.heads * self.head_dim

    @property
    def scale(self):
        return self.head_dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        return torch.softmax(q @ k.transpose(-1, -2) * self.scale, -1) @ v


class InvalidatedCache(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self._window = 3
        self._mask = None

    @property
    def window(self):
        return self._window

    @window.setter
    def window(self, w):
        self._window = w
        self._mask = None

    @property
    def mask(self):
        if self._mask is None:
            self._mask = torch.ones(self._window, self._window).triu(1).bool()
        return self._mask

    def forward(self, x):
        self.window = x.shape[1]
        s = self.fc(x) @ x.transpose(-1, -2)
        return s.masked_fill(self.mask, -1e4).softmax(-1)


TESTCASES = [
    (LogTemperature, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (DerivedSizes, lambda: ([], {}), lambda: ([torch.rand([2, 4, 6])], {}), False),
    (InvalidatedCache, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
]

EXPECTED = {
    'LogTemperature': {'dynamic': False, 'features': ['property setter called in forward', 'math.exp/log']},
    'DerivedSizes': {'dynamic': False, 'features': ['properties used in __init__ and forward']},
    'InvalidatedCache': {'dynamic': False, 'features': ['setter invalidating a cached tensor', 'lazy property-built mask']},
}
