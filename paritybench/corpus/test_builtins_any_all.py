"""Corpus (any): any/all/isinstance checks over static Python values: shape checks, config validation, optional inputs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ShapeGuarded(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, *xs):
        if all(x.shape == xs[0].shape for x in xs):
            stacked = torch.stack(xs)
        else:
            stacked = torch.stack([x.expand_as(xs[0]) for x in xs])
        return self.fc(stacked).sum(0)


class OptionalInputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, extra=None, bias=None):
        parts = [t for t in (x, extra, bias) if t is not None]
        if any(p.dim() > 2 for p in parts):
            parts = [p.flatten(0, -2) if p.dim() > 2 else p for p in parts]
        return self.fc(sum(parts))


class ValidatedStrides(nn.Module):

    def __init__(self, channels, strides=(1, 2, 2)):
        super().__init__()
        assert all(isinstance(s, int) and s > 0 for s in strides)
        self.convs = nn.Sequential(*[nn.Conv2d(channels, channels, 3, s, 1) for s in strides])
        self.downsamples = any(s > 1 for s in strides)

    def forward(self, x):
        y = self.convs(x)
        return y if not self.downsamples else F.interpolate(y, size=x.shape[-2:])


TESTCASES = [
    (ShapeGuarded, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4]), torch.rand([1, 4])], {}), False),
    (OptionalInputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {'bias': torch.rand([4])}), False),
    (ValidatedStrides, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
]

EXPECTED = {
    'ShapeGuarded': {'dynamic': False, 'features': ['all(generator of shape comparisons)', '*args']},
    'OptionalInputs': {'dynamic': False, 'features': ['is not None filter', 'any(generator)', 'keyword input']},
    'ValidatedStrides': {'dynamic': False, 'features': ['assert all(isinstance)', 'any in __init__']},
}
