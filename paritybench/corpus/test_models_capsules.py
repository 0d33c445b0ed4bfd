"""Corpus (capsules): capsule networks: squash nonlinearity, routing-by-agreement with a fixed number of iterations, primary capsules."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def squash(s, dim=-1):
    n2 = (s ** 2).sum(dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)


class PrimaryCaps(nn.Module):

    def __init__(self, cin, caps=2, dim=4):
        super().__init__()
        self.dim = dim
        self.conv = nn.Conv2d(cin, caps * dim, 3, stride=2, padding=1)

    def forward(self, x):
        u = self.conv(x)
        return squash(u.view(x.shape[0], -1, self.dim))


class DigitCaps(nn.Module):

    def __init__(self, in_caps, in_dim=4, out_caps=3, out_dim=4, iterations=3):
        super().__init__()
        self.W = nn.Parameter(0.1 * torch.randn(1, in_caps, out_caps, out_dim, in_dim))
        self.iterations = iterations

    def forward(self, u):
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
        b = torch.zeros(u_hat.shape[:3])
        for i in range(self.iterations):
            c = b.softmax(2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(1, keepdim=True))
            if i < self.iterations - 1:
                b = b + (u_hat * v).sum(-1)
        return v.squeeze(1)


class CapsNet(nn.Module):

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.primary = PrimaryCaps(4)
        self.digits = DigitCaps(in_caps=2 * 4 * 4)

    def forward(self, x):
        v = self.digits(self.primary(F.relu(self.stem(x))))
        return v.norm(dim=-1)


TESTCASES = [
    (CapsNet, lambda: ([], {}), lambda: ([torch.rand([2, 1, 8, 8])], {}), False),
    (DigitCaps, lambda: ([6], {}), lambda: ([torch.rand([2, 6, 4])], {}), False),
]

EXPECTED = {
    'CapsNet': {'dynamic': False, 'features': ['routing loop with a static iteration count', 'module-level helper function']},
    'DigitCaps': {'dynamic': False, 'features': ['broadcast matmul with None axes', 'conditional inside a loop on the loop index']},
}
