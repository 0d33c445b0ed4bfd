"""Corpus (descriptors): Python descriptors: functools.cached_property, a lazy_property descriptor class, __get__-based parameter views."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class lazy_property:
    """Computes a value once per instance, then stores it in the instance dict."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, cls):
        if obj is None:
            return self
        value = self.fn(obj)
        setattr(obj, self.fn.__name__, value)
        return value


class Transposed:
    """A descriptor exposing a weight matrix transposed, as tied-embedding code does."""

    def __init__(self, attr):
        self.attr = attr

    def __get__(self, obj, cls):
        return getattr(obj, self.attr).weight.t()


class CachedGeometry(nn.Module):

    def __init__(self, size=4, channels=2):
        super().__init__()
        self.size = size
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    @functools.cached_property
    def num_cells(self):
        return self.size * self.size

    def forward(self, x):
        return self.conv(x).flatten(2).sum(-1) / self.num_cells


class LazyScale(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.fc = nn.Linear(dim, dim)

    @lazy_property
    def inv_sqrt_dim(self):
        return 1.0 / math.sqrt(self.dim)

    def forward(self, x):
        return self.fc(x) * self.inv_sqrt_dim


class TiedDecoder(nn.Module):
    decoder_weight = Transposed('embed')

    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, idx):
        h = self.embed(idx)
        return h @ self.decoder_weight


TESTCASES = [
    (CachedGeometry, lambda: ([], {}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (LazyScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (TiedDecoder, lambda: ([], {'vocab': 7, 'dim': 4}), lambda: ([torch.randint(0, 7, [2, 3])], {}), False),
]

EXPECTED = {
    'CachedGeometry': {'dynamic': False, 'features': ['functools.cached_property']},
    'LazyScale': {'dynamic': False, 'features': ['lazy_property descriptor with setattr', 'update_wrapper']},
    'TiedDecoder': {'dynamic': False, 'features': ['__get__ descriptor returning a weight view']},
}
