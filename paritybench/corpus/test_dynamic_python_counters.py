"""Corpus (python): Python state that changes every call and feeds the math: step-dependent schedules, alternating branches, growing caches."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class WarmupSchedule(nn.Module):

    def __init__(self, dim, warmup=5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.step = 0
        self.warmup = warmup

    def forward(self, x):
        self.step += 1
        factor = min(1.0, self.step / self.warmup)
        return self.fc(x) * factor


class AnnealedTemperature(nn.Module):
    """Gumbel-softmax temperature annealed in a Python float on every call."""

    def __init__(self, dim, tau=1.0, decay=0.9, min_tau=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.tau, self.decay, self.min_tau = tau, decay, min_tau

    def forward(self, x):
        self.tau = max(self.min_tau, self.tau * self.decay)
        return torch.softmax(self.fc(x) / self.tau, -1)


class GrowingHistory(nn.Module):
    """Attends over every input seen so far: the history grows each call."""

    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.history = []

    def forward(self, x):
        self.history.append(x.detach())
        mem = torch.cat(self.history, 0)
        attn = torch.softmax(self.q(x) @ mem.t(), -1)
        return attn @ mem


TESTCASES = [
    (WarmupSchedule, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (AnnealedTemperature, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GrowingHistory, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'WarmupSchedule': {'dynamic': True, 'features': ['int step counter feeds a scale']},
    'AnnealedTemperature': {'dynamic': True, 'features': ['float attribute annealed each call feeds a division']},
    'GrowingHistory': {'dynamic': True, 'features': ['list on self grows; concatenated shape changes']},
}
