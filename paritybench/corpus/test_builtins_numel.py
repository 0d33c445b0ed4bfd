"""Corpus (builtins): tensor metadata arithmetic in normalizing flows (paper Fig. 3a #3)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import operator
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ActNorm(nn.Module):

    def __init__(self, features):
        super().__init__()
        self.log_scale = nn.Parameter(torch.linspace(-0.2, 0.2, features))
        self.shift = nn.Parameter(torch.linspace(0.1, -0.1, features))

    def forward(self, x):
        shape = [1, -1] + [1] * (x.dim() - 2)
        y = x * torch.exp(self.log_scale).view(shape) + self.shift.view(shape)
        spatial = torch.Size(x.shape[2:]).numel()
        logdet = torch.sum(self.log_scale) * spatial * torch.ones(x.shape[0])
        return y, logdet


class FlattenScale(nn.Module):

    def forward(self, x):
        return x * torch.Size(x.shape).numel()


class Squeeze(nn.Module):

    def __init__(self, factor=2):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        b, c, h, w = x.shape
        f = self.factor
        x = x.reshape(b, c, h // f, f, w // f, f).permute(0, 1, 3, 5, 2, 4)
        new_c = functools.reduce(operator.mul, (c, f, f), 1)
        return x.reshape(b, new_c, h // f, w // f), math.prod(x.shape[1:])


TESTCASES = [
    (ActNorm, lambda: ([], {'features': 4}), lambda: ([torch.rand([2, 4, 3, 3])], {}), False),
    (FlattenScale, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (Squeeze, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'ActNorm': {'dynamic': False, 'features': ['torch.Size.numel', 'list arithmetic', 'tuple outputs']},
    'FlattenScale': {'dynamic': False, 'features': ['torch.Size(x.shape).numel()']},
    'Squeeze': {'dynamic': False, 'features': ['functools.reduce', 'operator.mul', 'math.prod', 'int output']},
}
