"""Corpus (bisect): bisect and heapq on static configuration: picking a stage by resolution, k smallest channel costs, milestones."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import bisect
import heapq
patch_functional()


class ResolutionStage(nn.Module):

    def __init__(self, channels, thresholds=(4, 8, 16)):
        super().__init__()
        self.thresholds = list(thresholds)
        self.stages = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1) for _ in range(len(thresholds) + 1))

    def forward(self, x):
        idx = bisect.bisect_right(self.thresholds, x.shape[-1])
        return self.stages[idx](x), idx


class CheapestPaths(nn.Module):

    def __init__(self, dim, costs=(3.0, 1.0, 2.5, 0.5)):
        super().__init__()
        self.costs = list(costs)
        self.paths = nn.ModuleList(nn.Linear(dim, dim) for _ in costs)

    def forward(self, x):
        chosen = heapq.nsmallest(2, range(len(self.costs)), key=self.costs.__getitem__)
        return sum(self.paths[i](x) for i in chosen), chosen


class MilestoneScale(nn.Module):

    def __init__(self, dim, epoch=7, milestones=(5, 10)):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.factor = 0.1 ** bisect.bisect(list(milestones), epoch)

    def forward(self, x):
        heap = []
        for v in (3, 1, 2):
            heapq.heappush(heap, v)
        return self.fc(x) * self.factor + heapq.heappop(heap)


TESTCASES = [
    (ResolutionStage, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (CheapestPaths, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MilestoneScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ResolutionStage': {'dynamic': False, 'features': ['bisect_right on a shape', 'int output']},
    'CheapestPaths': {'dynamic': False, 'features': ['heapq.nsmallest with a bound-method key', 'list output']},
    'MilestoneScale': {'dynamic': False, 'features': ['bisect in __init__', 'heappush/heappop in forward']},
}
