"""Corpus (init): __init_subclass__ registries and class decorators that register blocks by name, built from a config list."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Block(nn.Module):
    registry = {}

    def __init_subclass__(cls, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Block.registry[name or cls.__name__.lower()] = cls


class ConvBlock(Block, name='conv'):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return F.relu(self.conv(x))


class PoolBlock(Block, name='pool'):

    def __init__(self, channels):
        super().__init__()

    def forward(self, x):
        return F.avg_pool2d(x, 3, 1, 1)


LAYERS = {}


def register(name):
    def wrap(cls):
        LAYERS[name] = cls
        cls.kind = name
        return cls
    return wrap


@register('gated')
class GatedLinear(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        return F.glu(self.fc(x), -1)


class ConfigNet(nn.Module):

    def __init__(self, channels, plan=('conv', 'pool', 'conv')):
        super().__init__()
        self.blocks = nn.Sequential(*[Block.registry[p](channels) for p in plan])

    def forward(self, x):
        return self.blocks(x)


class DecoratedRegistryNet(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layer = LAYERS['gated'](dim)

    def forward(self, x):
        return self.layer(x), self.layer.kind


TESTCASES = [
    (ConfigNet, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (DecoratedRegistryNet, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ConfigNet': {'dynamic': False, 'features': ['__init_subclass__ with class keyword', 'registry lookup']},
    'DecoratedRegistryNet': {'dynamic': False, 'features': ['class decorator registry', 'class attribute set by decorator']},
}
