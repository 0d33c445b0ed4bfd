"""Corpus (static): numpy on static module arrays: np.sum, np.add.reduce, astype and reshape of arrays kept on the module."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AnchorWeights(nn.Module):

    def __init__(self, channels=3):
        super().__init__()
        self.ratios = np.array([0.5, 1.0, 2.0])
        self.scales = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int64)
        self.conv = nn.Conv2d(channels, len(self.ratios), 1)

    def forward(self, x):
        total = float(np.sum(self.ratios))
        per_ratio = np.add.reduce(self.scales, axis=1).astype(np.float32)
        w = torch.from_numpy(per_ratio / per_ratio.sum()).view(1, -1, 1, 1)
        return self.conv(x) * w / total


class NumpyKernel(nn.Module):
    """A fixed blur kernel stored as a numpy array, reshaped for conv2d in forward."""

    def __init__(self, channels=2):
        super().__init__()
        k = np.array([1, 2, 1], dtype=np.float64)
        self.kernel = np.outer(k, k)
        self.channels = channels

    def forward(self, x):
        k = (self.kernel / self.kernel.sum()).astype(np.float32).reshape(1, 1, 3, 3)
        weight = torch.tensor(k).repeat(self.channels, 1, 1, 1)
        return F.conv2d(x, weight, padding=1, groups=self.channels)


class ClassPriors(nn.Module):

    def __init__(self, dim, counts=(10, 30, 60)):
        super().__init__()
        self.counts = np.asarray(counts)
        self.head = nn.Linear(dim, len(counts))

    def forward(self, x):
        prior = np.log(self.counts / self.counts.sum())
        return self.head(x) + torch.as_tensor(prior, dtype=torch.float32), int(np.argmax(self.counts))


TESTCASES = [
    (AnchorWeights, lambda: ([], {}), lambda: ([torch.rand([1, 3, 4, 4])], {}), False),
    (NumpyKernel, lambda: ([], {}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (ClassPriors, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'AnchorWeights': {'dynamic': False, 'features': ['np.sum on a module array', 'np.add.reduce', 'astype', 'torch.from_numpy']},
    'NumpyKernel': {'dynamic': False, 'features': ['ndarray.astype().reshape()', 'torch.tensor(ndarray)']},
    'ClassPriors': {'dynamic': False, 'features': ['np.log of a static array', 'torch.as_tensor(ndarray)', 'np.argmax int output']},
}
