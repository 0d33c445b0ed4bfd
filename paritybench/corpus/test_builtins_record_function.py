"""Corpus (record): torch.autograd.profiler.record_function and torch.profiler.record_function blocks around sub-steps."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ProfiledBlock(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.attn = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        with torch.autograd.profiler.record_function('attention'):
            x = x + torch.softmax(self.attn(x), -1)
        with torch.autograd.profiler.record_function('mlp'):
            x = x + F.relu(self.mlp(x))
        return x


class LabelledStages(nn.Module):

    def __init__(self, channels, stages=3):
        super().__init__()
        self.stages = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1) for _ in range(stages))

    def forward(self, x):
        for i, stage in enumerate(self.stages):
            with torch.profiler.record_function(f'stage_{i}'):
                x = F.relu(stage(x))
        return x


class ProfiledLoss(nn.Module):

    def __init__(self, dim, classes=3):
        super().__init__()
        self.head = nn.Linear(dim, classes)

    def forward(self, x, target):
        with torch.autograd.profiler.record_function('head'):
            logits = self.head(x)
        with torch.autograd.profiler.record_function('loss'):
            loss = F.cross_entropy(logits, target)
        return loss, logits


TESTCASES = [
    (ProfiledBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (LabelledStages, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (ProfiledLoss, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), torch.randint(0, 3, [5])], {}), False),
]

EXPECTED = {
    'ProfiledBlock': {'dynamic': False, 'features': ['with torch.autograd.profiler.record_function']},
    'LabelledStages': {'dynamic': False, 'features': ['torch.profiler.record_function(f-string)', 'enumerate ModuleList']},
    'ProfiledLoss': {'dynamic': False, 'features': ['record_function around loss', 'integer target input']},
}
