"""Corpus (jit): TorchScript-aware code paths in eager: torch.jit.is_scripting(), torch.jit.annotate, @torch.jit.ignore/unused helpers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import List
patch_functional()


class ScriptAwareDropPath(nn.Module):

    def __init__(self, dim, p=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.p = p

    def forward(self, x):
        if torch.jit.is_scripting() or not self.training or self.p == 0.0:
            return x + self.fc(x)
        keep = torch.rand(x.shape[0], 1) > self.p
        return x + self.fc(x) * keep / (1 - self.p)


class AnnotatedList(nn.Module):

    def __init__(self, dim, depth=2):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        outs = torch.jit.annotate(List[Tensor], [])
        for layer in self.layers:
            x = layer(x)
            outs.append(x)
        return torch.stack(outs)


class IgnoredHelper(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    @torch.jit.ignore
    def describe(self, x):
        return f'{x.dim()}d'

    @torch.jit.unused
    def debug_path(self, x):
        return x * 0

    def forward(self, x):
        return self.fc(x), self.describe(x), torch.jit.is_tracing()


TESTCASES = [
    (ScriptAwareDropPath, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (AnnotatedList, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (IgnoredHelper, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), True),
]

EXPECTED = {
    'ScriptAwareDropPath': {'dynamic': False, 'features': ['torch.jit.is_scripting()', 'self.training branch']},
    'AnnotatedList': {'dynamic': False, 'features': ['torch.jit.annotate(List[Tensor], [])']},
    'IgnoredHelper': {'dynamic': False, 'features': ['@torch.jit.ignore method', '@torch.jit.unused', 'torch.jit.is_tracing()']},
}
