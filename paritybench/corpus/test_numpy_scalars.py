"""Corpus (scalars): numpy scalars and math on configs: np.sqrt/np.pi constants, np.float32 scalars, np.prod of shapes."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ScaledDotProduct(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.scale = np.sqrt(dim)
        self.qk = nn.Linear(dim, dim * 2)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, -1)
        return torch.softmax(q @ k.transpose(-1, -2) / self.scale, -1)


class FlattenNumpyProd(nn.Module):

    def __init__(self, shape=(2, 4, 4), out=3):
        super().__init__()
        self.fc = nn.Linear(int(np.prod(shape)), out)

    def forward(self, x):
        return self.fc(x.view(-1, int(np.prod(x.shape[1:]))))


class PeriodicActivation(nn.Module):

    def __init__(self, dim, omega=30.0):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.omega = np.float32(omega)

    def forward(self, x):
        return torch.sin(self.omega * self.fc(x)) + np.pi * torch.cos(2 * np.pi * x)


TESTCASES = [
    (ScaledDotProduct, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (FlattenNumpyProd, lambda: ([], {}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
    (PeriodicActivation, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ScaledDotProduct': {'dynamic': False, 'features': ['np.sqrt scalar divides a tensor']},
    'FlattenNumpyProd': {'dynamic': False, 'features': ['int(np.prod(shape))']},
    'PeriodicActivation': {'dynamic': False, 'features': ['np.float32 scalar times tensor', 'np.pi']},
}
