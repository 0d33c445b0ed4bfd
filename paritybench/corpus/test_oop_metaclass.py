"""Corpus (metaclass): metaclasses whose __call__ runs super().__call__: registries, post-init hooks and singletons of layers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RegistryMeta(type(nn.Module)):
    registry = {}

    def __new__(mcs, name, bases, ns):
        cls = super().__new__(mcs, name, bases, ns)
        mcs.registry[name.lower()] = cls
        return cls


class PostInitMeta(type(nn.Module)):
    """Calls __post_init__ after __init__, as some config-driven code bases do."""

    def __call__(cls, *args, **kwargs):
        obj = super().__call__(*args, **kwargs)
        if hasattr(obj, '__post_init__'):
            obj.__post_init__()
        return obj


class Scaler(metaclass=PostInitMeta):
    def __init__(self, factor):
        self.factor = factor

    def __post_init__(self):
        self.inverse = 1.0 / self.factor


class GatedUnit(nn.Module, metaclass=RegistryMeta):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim * 2)

    def forward(self, x):
        a, b = self.fc(x).chunk(2, -1)
        return a * torch.sigmoid(b)


class RegistryBuilt(nn.Module):

    def __init__(self, dim, kind='gatedunit'):
        super().__init__()
        self.block = RegistryMeta.registry[kind](dim)

    def forward(self, x):
        return self.block(x) + x


class PostInitModule(nn.Module, metaclass=PostInitMeta):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def __post_init__(self):
        self.register_buffer('scale', torch.full((1,), 0.5))

    def forward(self, x):
        return self.fc(x) * self.scale


class ScalerInForward(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        s = Scaler(4.0)
        return self.fc(x) * s.inverse + s.factor


TESTCASES = [
    (RegistryBuilt, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (PostInitModule, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ScalerInForward, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'RegistryBuilt': {'dynamic': False, 'features': ['metaclass __new__ registry', 'module class looked up by name']},
    'PostInitModule': {'dynamic': False, 'features': ['metaclass __call__ with super().__call__', 'buffer registered after init']},
    'ScalerInForward': {'dynamic': False, 'features': ['metaclass __call__ on an object built in forward']},
}
