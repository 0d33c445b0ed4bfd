"""Corpus (print): printing tensor values during forward: debug prints of statistics, formatted per-class scores, NaN diagnostics."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DebugStats(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.fc(x)
        print(f'min={y.min().item():.4f} max={y.max().item():.4f}')
        return y


class PerClassScores(nn.Module):

    def __init__(self, dim, classes=('cat', 'dog')):
        super().__init__()
        self.classes = classes
        self.head = nn.Linear(dim, len(classes))

    def forward(self, x):
        probs = self.head(x).softmax(-1).mean(0)
        for name, p in zip(self.classes, probs.tolist()):
            print('{}: {:.3f}'.format(name, p))
        return probs


class GradientFreeMonitor(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        print('activation norm', y.norm(), 'sparsity', (y <= 0).float().mean())
        return F.relu(y)


TESTCASES = [
    (DebugStats, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (PerClassScores, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (GradientFreeMonitor, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
]

EXPECTED = {
    'DebugStats': {'dynamic': True, 'features': ['print of .item() with format spec']},
    'PerClassScores': {'dynamic': True, 'features': ['.tolist() into print', 'str.format']},
    'GradientFreeMonitor': {'dynamic': True, 'features': ['print of tensors']},
}
