"""Corpus (wrappers): wrapper modules around callables: Residual(fn), PreNorm(dim, fn), Lambda layers, __getattr__ delegation."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Residual(nn.Module):

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(x, **kwargs) + x


class PreNorm(nn.Module):

    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class Lambda(nn.Module):

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class FeedForward(nn.Module):

    def __init__(self, dim, mult=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x, scale=1.0):
        return self.net(x) * scale


class WrappedTransformerMLP(nn.Module):

    def __init__(self, dim, depth=2):
        super().__init__()
        self.layers = nn.ModuleList(Residual(PreNorm(dim, FeedForward(dim))) for _ in range(depth))
        self.out = Lambda(lambda t: t.mean(1))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, scale=0.5)
        return self.out(x)


class Delegating(nn.Module):
    """Forwards unknown attribute reads to the wrapped module, like DataParallel-style wrappers."""

    def __init__(self, dim):
        super().__init__()
        self.module = nn.Linear(dim, dim)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + self.out_features


TESTCASES = [
    (WrappedTransformerMLP, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (Delegating, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'WrappedTransformerMLP': {'dynamic': False, 'features': ['nested wrapper modules', '**kwargs through wrappers', 'Lambda module']},
    'Delegating': {'dynamic': False, 'features': ['__getattr__ override with super().__getattr__ fallback']},
}
