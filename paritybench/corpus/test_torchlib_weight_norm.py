"""Corpus (weight): weight and spectral normalisation from torch.nn.utils and parametrizations on submodules."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils import weight_norm, spectral_norm
from torch.nn.utils import parametrizations
patch_functional()


class WeightNormConv(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(channels, channels, 3, padding=1))

    def forward(self, x):
        return F.gelu(self.conv(x))


class SpectralNormDisc(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc1 = spectral_norm(nn.Linear(dim, dim))
        self.fc2 = spectral_norm(nn.Linear(dim, 1))

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x), 0.2))


class ParametrizedOrthogonal(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = parametrizations.weight_norm(nn.Linear(dim, dim))

    def forward(self, x):
        return self.fc(x) + x


TESTCASES = [
    (WeightNormConv, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6])], {}), False),
    (SpectralNormDisc, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ParametrizedOrthogonal, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'WeightNormConv': {'dynamic': False, 'features': ['nn.utils.weight_norm pre-hook']},
    'SpectralNormDisc': {'dynamic': False, 'features': ['nn.utils.spectral_norm (eval: no power iteration)']},
    'ParametrizedOrthogonal': {'dynamic': False, 'features': ['parametrizations.weight_norm property']},
}
