"""Corpus (scalar): Python scalar arguments to forward: temperatures, top-k counts, booleans and strings passed per call."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class TemperatureSoftmax(nn.Module):

    def __init__(self, dim, classes=4):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    def forward(self, x, temperature: float = 1.0, log: bool = False):
        z = self.fc(x) / temperature
        return z.log_softmax(-1) if log else z.softmax(-1)


class TopKPool(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, x, k: int):
        s = self.score(x).squeeze(-1)
        idx = s.topk(k, dim=1).indices
        return torch.gather(x, 1, idx.unsqueeze(-1).expand(-1, -1, x.shape[-1])) * torch.sigmoid(s.gather(1, idx)).unsqueeze(-1)


class ModeString(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, mode: str = 'bilinear', scale: int = 2):
        y = self.conv(x)
        kwargs = {} if mode == 'nearest' else {'align_corners': False}
        return F.interpolate(y, scale_factor=scale, mode=mode, **kwargs)


TESTCASES = [
    (TemperatureSoftmax, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), 0.5, True], {}), False),
    (TopKPool, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 6, 3])], {'k': 2}), False),
    (ModeString, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3])], {'mode': 'nearest', 'scale': 3}), False),
]

EXPECTED = {
    'TemperatureSoftmax': {'dynamic': False, 'features': ['float and bool positional inputs']},
    'TopKPool': {'dynamic': False, 'features': ['int keyword input into topk', 'gather']},
    'ModeString': {'dynamic': False, 'features': ['string input selects kwargs', '**{} expansion']},
}
