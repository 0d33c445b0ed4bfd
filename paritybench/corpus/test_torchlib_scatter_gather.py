"""Corpus (scatter): scatter/gather family: scatter_add pooling by segment, scatter_reduce max, one_hot via scatter_, take_along_dim."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SegmentSum(nn.Module):

    def __init__(self, dim, segments=3):
        super().__init__()
        self.segments = segments
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, segment_ids):
        out = torch.zeros(self.segments, x.shape[1])
        return out.scatter_add(0, segment_ids.unsqueeze(-1).expand_as(x), self.fc(x))


class SegmentMax(nn.Module):

    def __init__(self, segments=3):
        super().__init__()
        self.segments = segments

    def forward(self, x, segment_ids):
        idx = segment_ids.unsqueeze(-1).expand_as(x)
        return torch.full((self.segments, x.shape[1]), -1e4).scatter_reduce(0, idx, x, reduce='amax', include_self=True)


class ScatterOneHot(nn.Module):

    def __init__(self, classes=5):
        super().__init__()
        self.classes = classes

    def forward(self, labels, scores):
        onehot = torch.zeros(labels.shape[0], self.classes).scatter_(1, labels.unsqueeze(1), 1.0)
        picked = torch.take_along_dim(scores, labels.unsqueeze(1), dim=1)
        return onehot * scores, picked


TESTCASES = [
    (SegmentSum, lambda: ([], {'dim': 3}), lambda: ([torch.rand([6, 3]), torch.tensor([0, 0, 1, 2, 2, 2])], {}), False),
    (SegmentMax, lambda: ([], {}), lambda: ([torch.rand([6, 3]), torch.tensor([0, 1, 1, 2, 0, 2])], {}), False),
    (ScatterOneHot, lambda: ([], {}), lambda: ([torch.randint(0, 5, [4]), torch.rand([4, 5])], {}), False),
]

EXPECTED = {
    'SegmentSum': {'dynamic': False, 'features': ['scatter_add with expanded index']},
    'SegmentMax': {'dynamic': False, 'features': ["scatter_reduce(reduce='amax')"]},
    'ScatterOneHot': {'dynamic': False, 'features': ['in-place scatter_ one-hot', 'take_along_dim']},
}
