"""Corpus (builtins): getattr/setattr/hasattr with f-string names, as in configurable backbones."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class NamedStages(nn.Module):

    def __init__(self, channels=4, stages=3):
        super().__init__()
        self.num_stages = stages
        for i in range(1, stages + 1):
            setattr(self, f'conv{i}', nn.Conv2d(channels, channels, 3, padding=1))
            setattr(self, f'act{i}', nn.ReLU() if i % 2 else nn.Tanh())

    def forward(self, x):
        for i in range(1, self.num_stages + 1):
            x = getattr(self, f'act{i}')(getattr(self, f'conv{i}')(x))
        return x


class AddModuleBackbone(nn.Module):

    def __init__(self, dims=(6, 8, 4)):
        super().__init__()
        self.names = []
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
            name = 'block_{}'.format(i)
            self.add_module(name, nn.Linear(a, b))
            self.names.append(name)

    def forward(self, x):
        for name in self.names:
            x = F.gelu(self._modules[name](x))
        return x


class OptionalHead(nn.Module):

    def __init__(self, dim, use_proj=True, use_norm=False):
        super().__init__()
        if use_proj:
            self.proj = nn.Linear(dim, dim)
        if use_norm:
            self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        if hasattr(self, 'proj'):
            x = self.proj(x)
        norm = getattr(self, 'norm', None)
        if norm is not None:
            x = norm(x)
        return x


TESTCASES = [
    (NamedStages, lambda: ([], {}), lambda: ([torch.rand([2, 4, 5, 5])], {}), False),
    (AddModuleBackbone, lambda: ([], {}), lambda: ([torch.rand([3, 6])], {}), False),
    (OptionalHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (OptionalHead, lambda: ([], {'dim': 4, 'use_proj': False, 'use_norm': True}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'NamedStages': {'dynamic': False, 'features': ['getattr with f-string', 'setattr in __init__']},
    'AddModuleBackbone': {'dynamic': False, 'features': ['add_module', 'str.format', 'self._modules lookup']},
    'OptionalHead': {'dynamic': False, 'features': ['hasattr', 'getattr default', 'is not None']},
    'OptionalHead#3': {'dynamic': False, 'features': ['hasattr false branch', 'getattr default']},
}
