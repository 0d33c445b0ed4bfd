"""Corpus (effects): buffers updated in place during forward: EMA statistics, step counters as tensors, codebook usage."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class RunningNorm(nn.Module):
    """Normalises with running statistics that it updates every call (even in eval, as some RL code does)."""

    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer('mean', torch.zeros(dim))
        self.register_buffer('var', torch.ones(dim))

    def forward(self, x):
        with torch.no_grad():
            self.mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
            self.var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=False))
        return (x - self.mean) / torch.sqrt(self.var + 1e-5)


class StepCounter(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer('steps', torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.steps += 1
        warm = torch.clamp(self.steps.float() / 10.0, max=1.0)
        return self.fc(x) * warm


class CodebookUsage(nn.Module):

    def __init__(self, codes=6, dim=3):
        super().__init__()
        self.codebook = nn.Parameter(torch.randn(codes, dim))
        self.register_buffer('usage', torch.zeros(codes))

    def forward(self, z):
        d = torch.cdist(z, self.codebook)
        idx = d.argmin(-1)
        self.usage.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
        return self.codebook[idx], self.usage / self.usage.sum()


TESTCASES = [
    (RunningNorm, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4])], {}), False),
    (StepCounter, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (CodebookUsage, lambda: ([], {}), lambda: ([torch.randn([5, 3])], {}), False),
]

EXPECTED = {
    'RunningNorm': {'dynamic': False, 'features': ['buffer mul_/add_ in no_grad', 'EMA update']},
    'StepCounter': {'dynamic': False, 'features': ['tensor counter buffer += 1', 'clamp(max=)']},
    'CodebookUsage': {'dynamic': False, 'features': ['index_add_ on a buffer', 'argmin lookup']},
}
