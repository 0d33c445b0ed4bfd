"""Corpus (dynamic): Python scalars that change on every call (step counters feeding the math, clocks)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class WarmupScale(nn.Module):

    def __init__(self, dim, warmup=10):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.step = 0
        self.warmup = warmup

    def forward(self, x):
        self.step += 1
        return self.fc(x) * min(1.0, self.step / self.warmup)


class AnnealedTemperature(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.tau = 1.0

    def forward(self, x):
        self.tau = max(0.1, self.tau * 0.5)
        return (self.fc(x) / self.tau).softmax(-1)


class RunningCount(nn.Module):

    def __init__(self):
        super().__init__()
        self.seen = 0

    def forward(self, x):
        self.seen += x.shape[0]
        return x + self.seen


TESTCASES = [
    (WarmupScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (AnnealedTemperature, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (RunningCount, lambda: ([], {}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'WarmupScale': {'dynamic': True, 'features': ['int counter on self feeding the computation']},
    'AnnealedTemperature': {'dynamic': True, 'features': ['float attribute updated each call']},
    'RunningCount': {'dynamic': True, 'features': ['counter incremented by batch size, added to output']},
}
