"""Corpus (neural): continuous-depth models with fixed solvers: Euler and RK4 steps over an ODE function module, augmented states."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ODEFunc(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 8), nn.Tanh(), nn.Linear(8, dim))

    def forward(self, t, y):
        tt = torch.full_like(y[:, :1], t)
        return self.net(torch.cat([y, tt], 1))


class FixedRK4(nn.Module):

    def __init__(self, dim, steps=3, t1=1.0):
        super().__init__()
        self.func = ODEFunc(dim)
        self.steps, self.t1 = steps, t1

    def forward(self, y):
        h = self.t1 / self.steps
        t = 0.0
        for _ in range(self.steps):
            k1 = self.func(t, y)
            k2 = self.func(t + h / 2, y + h / 2 * k1)
            k3 = self.func(t + h / 2, y + h / 2 * k2)
            k4 = self.func(t + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
        return y


class AugmentedEuler(nn.Module):

    def __init__(self, dim, aug=2, steps=4):
        super().__init__()
        self.aug, self.steps = aug, steps
        self.func = ODEFunc(dim + aug)
        self.out = nn.Linear(dim + aug, dim)

    def forward(self, x):
        y = torch.cat([x, x.new_zeros(x.shape[0], self.aug)], 1)
        ts = [i / self.steps for i in range(self.steps + 1)]
        for t0, t1 in zip(ts[:-1], ts[1:]):
            y = y + (t1 - t0) * self.func(t0, y)
        return self.out(y)


TESTCASES = [
    (FixedRK4, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3])], {}), False),
    (AugmentedEuler, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'FixedRK4': {'dynamic': False, 'features': ['RK4 with a Python float time', 'torch.full_like with a float']},
    'AugmentedEuler': {'dynamic': False, 'features': ['time grid list comprehension', 'zip of shifted lists']},
}
