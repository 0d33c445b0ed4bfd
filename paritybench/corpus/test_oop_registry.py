"""Corpus (oop): registries, builders and abstract base classes (mmcv/detectron-style config-driven models)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


BLOCKS = {}


def register(name):
    def deco(cls):
        BLOCKS[name] = cls
        cls.registry_name = name
        return cls
    return deco


class BlockBase(nn.Module, abc.ABC):

    @abc.abstractmethod
    def body(self, x):
        ...

    def forward(self, x):
        return x + self.body(x)


@register('basic')
class BasicBlock(BlockBase):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def body(self, x):
        return F.relu(self.fc(x))


@register('gated')
class GatedBlock(BlockBase):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)

    def body(self, x):
        return self.fc(x) * torch.sigmoid(self.gate(x))


def build_block(cfg):
    cfg = dict(cfg)
    kind = cfg.pop('type')
    return BLOCKS[kind](**cfg)


class ConfigNet(nn.Module):

    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(build_block(c) for c in blocks)
        self.names = [type(b).registry_name for b in self.blocks]

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ActivationRegistry(nn.Module):
    table = {'relu': F.relu, 'gelu': F.gelu, 'sigmoid': torch.sigmoid}

    def __init__(self, dim, acts=('relu', 'gelu')):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.acts = [self.table[a] for a in acts]

    def forward(self, x):
        x = self.fc(x)
        return sum(act(x) for act in self.acts)


TESTCASES = [
    (ConfigNet, lambda: ([[{'type': 'basic', 'dim': 4}, {'type': 'gated', 'dim': 4}, {'type': 'basic', 'dim': 4}]], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (BasicBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), True),
    (ActivationRegistry, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ConfigNet': {'dynamic': False, 'features': ['decorator registry', 'builder from dict config', 'abstract base class', 'template method']},
    'BasicBlock': {'dynamic': False, 'features': ['abc.ABC with nn.Module', 'template method']},
    'ActivationRegistry': {'dynamic': False, 'features': ['class-level dict of functions', 'sum(generator)']},
}
