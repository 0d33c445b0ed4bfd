"""Corpus (metaclass): metaclass-built config and layer objects created inside forward (super().__call__ with caching and validation)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ValidatingMeta(type):
    def __call__(cls, *args, **kwargs):
        obj = super().__call__(*args, **kwargs)
        obj.validate()
        return obj


class CachedMeta(type):
    """Returns one instance per argument tuple, like flyweight layer specs."""

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._instances = {}

    def __call__(cls, *args):
        if args not in cls._instances:
            cls._instances[args] = super().__call__(*args)
        return cls._instances[args]


class Window(metaclass=ValidatingMeta):
    def __init__(self, size, stride=None):
        self.size = size
        self.stride = stride or size

    def validate(self):
        if self.stride > self.size:
            raise ValueError('stride larger than window')


class Spec(metaclass=CachedMeta):
    def __init__(self, heads, dim):
        self.heads = heads
        self.head_dim = dim // heads


class PooledWindows(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, x):
        win = Window(4, 2)
        return F.avg_pool1d(self.conv(x), win.size, win.stride)


class SpecHeads(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        spec = Spec(self.heads, x.shape[-1])
        h = self.fc(x).view(*x.shape[:-1], spec.heads, spec.head_dim)
        return h.softmax(-1).flatten(-2), Spec(self.heads, x.shape[-1]) is spec


TESTCASES = [
    (PooledWindows, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 12])], {}), False),
    (SpecHeads, lambda: ([], {'dim': 6}), lambda: ([torch.rand([2, 3, 6])], {}), False),
]

EXPECTED = {
    'PooledWindows': {'dynamic': False, 'features': ['metaclass __call__ validating', 'object built in forward']},
    'SpecHeads': {'dynamic': False, 'features': ['metaclass instance cache', 'identity comparison output']},
}
