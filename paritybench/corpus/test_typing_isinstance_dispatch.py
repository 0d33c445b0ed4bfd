"""Corpus (isinstance): isinstance dispatch over module types and containers: per-type init in forward-time helpers, nn.Module vs callable arguments, dict-or-tensor targets."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PerTypeScale(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(), nn.Conv2d(channels, channels, 1))

    def forward(self, x):
        for m in self.body:
            if isinstance(m, nn.Conv2d):
                x = m(x) * (1.0 / m.kernel_size[0])
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                x = m(x)
            else:
                x = m(x) + 0.1
        return x


class TargetsDictOrTensor(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cls = nn.Linear(dim, 3)
        self.reg = nn.Linear(dim, 1)

    def forward(self, x, targets):
        if isinstance(targets, dict):
            return F.cross_entropy(self.cls(x), targets['labels']) + F.mse_loss(self.reg(x).squeeze(-1), targets['values'])
        return F.cross_entropy(self.cls(x), targets)


class ModuleOrFunction(nn.Module):

    def __init__(self, dim, act=nn.GELU()):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act

    def forward(self, x):
        y = self.fc(x)
        return self.act(y) if isinstance(self.act, nn.Module) else self.act(y, inplace=False)


TESTCASES = [
    (PerTypeScale, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (TargetsDictOrTensor, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), {'labels': torch.randint(0, 3, [3]), 'values': torch.rand([3])}], {}), False),
    (TargetsDictOrTensor, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.randint(0, 3, [3])], {}), False),
    (ModuleOrFunction, lambda: ([], {'dim': 4, 'act': F.relu}), lambda: ([torch.randn([2, 4])], {}), False),
]

EXPECTED = {
    'PerTypeScale': {'dynamic': False, 'features': ['isinstance over Sequential children', 'isinstance with a tuple of classes']},
    'TargetsDictOrTensor': {'dynamic': False, 'features': ['isinstance(targets, dict)', 'dict input']},
    'TargetsDictOrTensor#2': {'dynamic': False, 'features': ['tensor targets path']},
    'ModuleOrFunction': {'dynamic': False, 'features': ['isinstance(attr, nn.Module) choosing call style']},
}
