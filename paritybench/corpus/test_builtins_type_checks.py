"""Corpus (type): type checks and conversions on Python values: type(x) is, type(x).__name__ dispatch, callable(), int/float/bool conversions."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class TypeNameDispatch(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.ModuleDict({'Linear': nn.Identity(), 'Conv1d': nn.Flatten(1)})
        self.body = nn.Linear(dim, dim)

    def forward(self, x):
        key = type(self.body).__name__
        return self.proj[key](self.body(x)), key


class ExactTypeCheck(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, extra):
        if type(extra) is tuple:
            extra = torch.stack(extra).sum(0)
        elif type(extra) is float:
            extra = torch.full_like(x, extra)
        return self.fc(x + extra)


class Conversions(nn.Module):

    def __init__(self, dim, ratio='0.5', depth=2.0, enabled=1):
        super().__init__()
        self.ratio, self.depth, self.enabled = float(ratio), int(depth), bool(enabled)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(self.depth))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x) * self.ratio if self.enabled else x
        return x, callable(self.layers[0]), str(self.depth), round(self.ratio * 3, 1)


TESTCASES = [
    (TypeNameDispatch, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ExactTypeCheck, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), (torch.rand([2, 4]), torch.rand([2, 4]))], {}), False),
    (ExactTypeCheck, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), 0.25], {}), False),
    (Conversions, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'TypeNameDispatch': {'dynamic': False, 'features': ['type(module).__name__ as a key', 'string output']},
    'ExactTypeCheck': {'dynamic': False, 'features': ['type(x) is tuple', 'tuple input']},
    'ExactTypeCheck#2': {'dynamic': False, 'features': ['type(x) is float', 'float input']},
    'Conversions': {'dynamic': False, 'features': ['float/int/bool of config strings', 'callable()', 'str()/round() outputs']},
}
