"""Corpus (item): .item() values steering Python control flow: thresholds, clipping decisions, loss-scale choices."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ConfidenceGate(nn.Module):

    def __init__(self, dim, classes=3):
        super().__init__()
        self.fast = nn.Linear(dim, classes)
        self.slow = nn.Sequential(nn.Linear(dim, 8), nn.ReLU(), nn.Linear(8, classes))

    def forward(self, x):
        logits = self.fast(x)
        if logits.softmax(-1).max().item() > 0.6:
            return logits
        return self.slow(x)


class AdaptiveClip(nn.Module):

    def __init__(self, dim, max_norm=1.0):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.max_norm = max_norm

    def forward(self, x):
        y = self.fc(x)
        norm = y.norm().item()
        if norm > self.max_norm:
            y = y * (self.max_norm / norm)
        return y


class LossScale(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, x, target):
        loss = F.mse_loss(self.fc(x).squeeze(-1), target)
        scale = 10.0 if loss.item() < 0.1 else 1.0
        return loss * scale, scale


TESTCASES = [
    (ConfidenceGate, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4]) * 3], {}), False),
    (AdaptiveClip, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (LossScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([4, 4]), torch.rand([4])], {}), False),
]

EXPECTED = {
    'ConfidenceGate': {'dynamic': True, 'features': ['.item() in an if', 'early return']},
    'AdaptiveClip': {'dynamic': True, 'features': ['.item() in arithmetic and a branch']},
    'LossScale': {'dynamic': True, 'features': ['conditional expression on .item()', 'float output']},
}
