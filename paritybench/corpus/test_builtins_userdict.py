"""Corpus (userdict): UserDict and dict subclasses as configs: attribute-style access, defaults via __missing__."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from collections import UserDict
patch_functional()


class AttrConfig(UserDict):
    def __getattr__(self, name):
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name)


class DefaultingConfig(dict):
    def __missing__(self, key):
        return 1.0


class UserDictBlock(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cfg = AttrConfig(dim=dim, residual=True, scale=0.5)
        self.fc = nn.Linear(self.cfg.dim, self.cfg['dim'])

    def forward(self, x):
        y = self.fc(x) * self.cfg.scale
        if self.cfg.get('residual', False):
            y = y + x
        return y, 'scale' in self.cfg


class MissingKeyWeights(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.losses = DefaultingConfig(mse=2.0)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, target):
        y = self.fc(x)
        return self.losses['mse'] * F.mse_loss(y, target) + self.losses['l1'] * F.l1_loss(y, target)


class MockConfigModel(nn.Module):

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(nn.Linear(cfg.hidden, cfg.hidden) for _ in range(cfg.depth))

    def forward(self, x):
        for layer in self.layers:
            x = getattr(F, self.cfg.act)(layer(x))
        return x


TESTCASES = [
    (UserDictBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MissingKeyWeights, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (MockConfigModel, lambda: ([], {'cfg': _mock_config(hidden=4, depth=2, act='silu')}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'UserDictBlock': {'dynamic': False, 'features': ['UserDict subclass with __getattr__', 'in/get on UserDict']},
    'MissingKeyWeights': {'dynamic': False, 'features': ['dict subclass __missing__']},
    'MockConfigModel': {'dynamic': False, 'features': ['_mock_config attribute access', 'getattr(F, name)']},
}
