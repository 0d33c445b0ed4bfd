"""Corpus (numpy): tensor values converted to numpy during forward: .numpy() statistics steer scaling, np.random masks, argsort in numpy."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class NumpyPercentileClip(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.fc(x)
        hi = float(np.percentile(y.detach().numpy(), 95))
        return y.clamp(max=hi)


class NumpyDropMask(nn.Module):
    """Drops random feature columns chosen with NumPy's global generator."""

    def __init__(self, dim, p=0.5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.p = p

    def forward(self, x):
        keep = np.random.rand(x.shape[-1]) > self.p
        return self.fc(x) * torch.from_numpy(keep.astype(np.float32))


class NumpyRanking(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, items):
        s = self.score(items).squeeze(-1)
        order = np.argsort(-s.detach().numpy())
        return items[torch.from_numpy(order.copy())][:2]


TESTCASES = [
    (NumpyPercentileClip, lambda: ([], {'dim': 4}), lambda: ([torch.randn([5, 4])], {}), False),
    (NumpyDropMask, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NumpyRanking, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3])], {}), False),
]

EXPECTED = {
    'NumpyPercentileClip': {'dynamic': True, 'features': ['.numpy() into np.percentile', 'float clamp bound']},
    'NumpyDropMask': {'dynamic': True, 'features': ['np.random.rand mask', 'torch.from_numpy']},
    'NumpyRanking': {'dynamic': True, 'features': ['np.argsort of tensor values', 'index by numpy order']},
}
