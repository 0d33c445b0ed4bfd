"""Corpus (object): plain config objects and SimpleNamespace settings read in forward: argparse-like namespaces, nested config objects, vars()/getattr defaults."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import types
import argparse
patch_functional()


class NamespaceModel(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.args = argparse.Namespace(hidden=dim * 2, dropout=0.0, use_bias=True, act='tanh')
        self.fc1 = nn.Linear(dim, self.args.hidden, bias=self.args.use_bias)
        self.fc2 = nn.Linear(self.args.hidden, dim)

    def forward(self, x):
        act = getattr(torch, self.args.act)
        y = self.fc2(act(self.fc1(x)))
        return y, sorted(vars(self.args))


class NestedSettings(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.cfg = types.SimpleNamespace(model=types.SimpleNamespace(width=channels, depth=2), head=types.SimpleNamespace(classes=3))
        self.body = nn.Sequential(*[nn.Conv2d(channels, channels, 3, padding=1) for _ in range(self.cfg.model.depth)])
        self.head = nn.Linear(channels, self.cfg.head.classes)

    def forward(self, x):
        y = self.body(x).mean((2, 3))
        temp = getattr(self.cfg.head, 'temperature', 1.0)
        return self.head(y) / temp


class ConfigObject:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def get(self, key, default=None):
        return self.__dict__.get(key, default)


class DictBackedConfig(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.opt = ConfigObject(dim=dim, scale=2.0)
        self.fc = nn.Linear(self.opt.dim, self.opt.dim)

    def forward(self, x):
        return self.fc(x) * self.opt.scale + self.opt.get('shift', 0.0)


TESTCASES = [
    (NamespaceModel, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NestedSettings, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (DictBackedConfig, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'NamespaceModel': {'dynamic': False, 'features': ['argparse.Namespace config', 'getattr(torch, name)', 'vars() keys output']},
    'NestedSettings': {'dynamic': False, 'features': ['nested SimpleNamespace', 'getattr with default']},
    'DictBackedConfig': {'dynamic': False, 'features': ['__dict__.update config object', '.get default']},
}
