"""Corpus (try): tensor operations guarded by try/except the way numerical code writes them: a Cholesky with a jitter fallback, a solve that falls back to least squares, an embedding lookup that clamps out-of-range ids."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class JitteredCholesky(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        cov = h.t() @ h / h.shape[0] + torch.eye(h.shape[1]) * 1e-3
        try:
            L = torch.linalg.cholesky(cov)
        except RuntimeError:
            L = torch.linalg.cholesky(cov + torch.eye(cov.shape[0]) * 1e-1)
        return L


class SolveOrLstsq(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Parameter(torch.eye(dim) * 2 + 0.1)

    def forward(self, b):
        try:
            return torch.linalg.solve(self.a, b)
        except RuntimeError:
            return torch.linalg.lstsq(self.a, b).solution


TESTCASES = [
    (JitteredCholesky, lambda: ([], {'dim': 4}), lambda: ([torch.randn([16, 4])], {}), False),
    (SolveOrLstsq, lambda: ([], {'dim': 3}), lambda: ([torch.randn([3, 2])], {}), False),
]

EXPECTED = {
    'JitteredCholesky': {'dynamic': True, 'features': ['try/except around cholesky', 'fallback with jitter']},
    'SolveOrLstsq': {'dynamic': True, 'features': ['try/except around solve', 'lstsq fallback']},
}
