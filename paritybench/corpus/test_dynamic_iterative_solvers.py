"""Corpus (iterative): data-dependent loops: fixed-point iterations until convergence, Sinkhorn with tolerance, power iteration with early stop."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class FixedPointLayer(nn.Module):
    """Deep-equilibrium style: iterate z = tanh(Wz + x) until the update is small."""

    def __init__(self, dim, tol=1e-3, max_iter=50):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.fc.weight.data.mul_(0.3)
        self.tol, self.max_iter = tol, max_iter

    def forward(self, x):
        z = torch.zeros_like(x)
        for it in range(self.max_iter):
            z_next = torch.tanh(self.fc(z) + x)
            if (z_next - z).norm() < self.tol:
                break
            z = z_next
        return z_next, it


class SinkhornTolerance(nn.Module):

    def __init__(self, eps=0.5, tol=1e-4):
        super().__init__()
        self.eps, self.tol = eps, tol

    def forward(self, cost):
        K = torch.exp(-cost / self.eps)
        u = torch.ones(cost.shape[0])
        v = torch.ones(cost.shape[1])
        err = 1.0
        while err > self.tol:
            u_prev = u
            u = 1.0 / (K @ v)
            v = 1.0 / (K.t() @ u)
            err = (u - u_prev).abs().max().item()
        return u[:, None] * K * v[None, :]


class PowerIteration(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        m = self.proj(x).t() @ self.proj(x)
        v = torch.ones(m.shape[0]) / math.sqrt(m.shape[0])
        steps = 0
        while True:
            w = F.normalize(m @ v, dim=0)
            steps += 1
            if torch.allclose(w, v, atol=1e-4) or steps >= 100:
                break
            v = w
        return (v @ m @ v), steps


TESTCASES = [
    (FixedPointLayer, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SinkhornTolerance, lambda: ([], {}), lambda: ([torch.rand([3, 4])], {}), False),
    (PowerIteration, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3])], {}), False),
]

EXPECTED = {
    'FixedPointLayer': {'dynamic': True, 'features': ['break on a tensor comparison', 'loop counter output']},
    'SinkhornTolerance': {'dynamic': True, 'features': ['while err > tol with .item()']},
    'PowerIteration': {'dynamic': True, 'features': ['while True with torch.allclose break']},
}
