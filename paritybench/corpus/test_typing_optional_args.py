"""Corpus (optional): Optional arguments with None defaults: optional masks, optional conditioning, optional initial states, Optional[int] sizes."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Optional
patch_functional()


class OptionalCondition(nn.Module):

    def __init__(self, dim, cond_dim=3):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.cond = nn.Linear(cond_dim, dim * 2)

    def forward(self, x: Tensor, cond: Optional[Tensor] = None) -> Tensor:
        h = self.fc(x)
        if cond is None:
            return h
        scale, shift = self.cond(cond).chunk(2, -1)
        return h * (1 + scale) + shift


class OptionalState(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.rnn = nn.GRU(dim, dim, batch_first=True)

    def forward(self, x, state: Optional[Tensor] = None):
        out, state = self.rnn(x, state)
        return out, state


class OptionalSize(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x, size: Optional[int] = None, scale: Optional[float] = 2.0):
        if size is not None:
            return self.conv(F.interpolate(x, size=size))
        return self.conv(F.interpolate(x, scale_factor=scale))


TESTCASES = [
    (OptionalCondition, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (OptionalCondition, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 3])], {}), False),
    (OptionalState, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 4, 3])], {}), False),
    (OptionalSize, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3])], {'size': 5}), False),
]

EXPECTED = {
    'OptionalCondition': {'dynamic': False, 'features': ['Optional[Tensor] = None, absent']},
    'OptionalCondition#1': {'dynamic': False, 'features': ['Optional[Tensor] given', 'chunk unpacking']},
    'OptionalState': {'dynamic': False, 'features': ['None initial state to nn.GRU']},
    'OptionalSize': {'dynamic': False, 'features': ['Optional[int] keyword', 'Optional[float] default']},
}
