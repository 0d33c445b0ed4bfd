"""Corpus (oop): mixins and cooperative multiple inheritance (MRO) in model components."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ResidualMixin:
    residual_scale = 1.0

    def residual(self, x, y):
        return x + self.residual_scale * y


class NormMixin:

    def normalize(self, x):
        return F.layer_norm(x, x.shape[-1:])


class FeedForward(ResidualMixin, NormMixin, nn.Module):
    residual_scale = 0.5

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.residual(x, self.fc(self.normalize(x)))


class Base(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def transform(self, x):
        return x


class Scaled(Base):

    def __init__(self, dim):
        super().__init__(dim)
        self.scale = nn.Parameter(torch.full((dim,), 2.0))

    def transform(self, x):
        return super().transform(x) * self.scale


class Shifted(Base):

    def __init__(self, dim):
        super().__init__(dim)
        self.shift = nn.Parameter(torch.full((dim,), 0.5))

    def transform(self, x):
        return super().transform(x) + self.shift


class Diamond(Scaled, Shifted):
    """MRO: Diamond -> Scaled -> Shifted -> Base; transform is (x + shift) * scale."""

    def forward(self, x):
        return self.transform(x), [cls.__name__ for cls in type(self).__mro__[:4]]


class InitMixin:

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0.1)


class Tower(InitMixin, nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.init_weights()

    def forward(self, x):
        return self.blocks(x)


TESTCASES = [
    (FeedForward, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (Diamond, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (Tower, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), True),
]

EXPECTED = {
    'FeedForward': {'dynamic': False, 'features': ['mixin methods', 'class attribute override', 'shape slice']},
    'Diamond': {'dynamic': False, 'features': ['diamond inheritance', 'cooperative super()', '__mro__', 'list of names output']},
    'Tower': {'dynamic': False, 'features': ['mixin used in __init__', 'isinstance over modules()']},
}
