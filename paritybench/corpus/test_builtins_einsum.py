"""Corpus (einsum): einsum in user code: attention scores, bilinear forms and batched outer products spelled with torch.einsum."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class EinsumAttention(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        attn = torch.einsum('bihd,bjhd->bhij', q, k) * (d // self.heads) ** -0.5
        out = torch.einsum('bhij,bjhd->bihd', attn.softmax(-1), v)
        return self.out(out.reshape(b, n, d))


class Bilinear(nn.Module):

    def __init__(self, dim, out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out, dim, dim) * 0.1)

    def forward(self, a, b):
        return torch.einsum('bi,oij,bj->bo', a, self.weight, b)


class OuterPool(nn.Module):
    """Bilinear pooling: the mean outer product of two feature maps."""

    def __init__(self, c1, c2):
        super().__init__()
        self.fc = nn.Linear(c1 * c2, 4)

    def forward(self, f1, f2):
        outer = torch.einsum('bchw,bdhw->bcd', f1, f2) / (f1.shape[-1] * f1.shape[-2])
        return self.fc(outer.flatten(1)), torch.einsum('bii->b', outer)


TESTCASES = [
    (EinsumAttention, lambda: ([], {'dim': 8}), lambda: ([torch.rand([2, 5, 8])], {}), False),
    (Bilinear, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.rand([3, 4])], {}), False),
    (OuterPool, lambda: ([], {'c1': 3, 'c2': 3}), lambda: ([torch.rand([2, 3, 4, 4]), torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'EinsumAttention': {'dynamic': False, 'features': ['torch.einsum multi-head', 'view().unbind unpacking']},
    'Bilinear': {'dynamic': False, 'features': ['three-operand einsum']},
    'OuterPool': {'dynamic': False, 'features': ['einsum outer product', 'batched trace einsum']},
}
