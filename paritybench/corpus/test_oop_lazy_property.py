"""Corpus (lazy): lazy_property descriptors on helper objects (distribution wrappers, anchors) read inside forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class lazy_property:
    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


class DiagGaussian:
    """Lightweight Gaussian with lazily derived quantities."""

    def __init__(self, mean, log_std):
        self.mean = mean
        self.log_std = log_std

    @lazy_property
    def std(self):
        return self.log_std.exp()

    @lazy_property
    def entropy(self):
        return (0.5 + 0.5 * math.log(2 * math.pi) + self.log_std).sum(-1)

    def log_prob(self, x):
        return (-((x - self.mean) ** 2) / (2 * self.std ** 2) - self.log_std - 0.5 * math.log(2 * math.pi)).sum(-1)


class GaussianPolicy(nn.Module):

    def __init__(self, obs, act):
        super().__init__()
        self.mu = nn.Linear(obs, act)
        self.log_std = nn.Parameter(torch.zeros(act) - 0.5)

    def forward(self, obs, action):
        dist = DiagGaussian(self.mu(obs), self.log_std.expand(obs.shape[0], -1))
        return dist.log_prob(action), dist.entropy, dist.std


class AnchorGrid:
    def __init__(self, size, stride):
        self.size, self.stride = size, stride

    @lazy_property
    def centers(self):
        r = (torch.arange(self.size, dtype=torch.float32) + 0.5) * self.stride
        return torch.stack(torch.meshgrid(r, r, indexing='xy'), -1).view(-1, 2)


class CenterRegression(nn.Module):

    def __init__(self, channels, stride=4):
        super().__init__()
        self.stride = stride
        self.reg = nn.Conv2d(channels, 2, 1)

    def forward(self, x):
        grid = AnchorGrid(x.shape[-1], self.stride)
        offsets = self.reg(x).flatten(2).transpose(1, 2)
        return grid.centers + offsets * self.stride, grid.centers.shape[0]


TESTCASES = [
    (GaussianPolicy, lambda: ([], {'obs': 4, 'act': 2}), lambda: ([torch.rand([3, 4]), torch.rand([3, 2])], {}), False),
    (CenterRegression, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'GaussianPolicy': {'dynamic': False, 'features': ['lazy_property on a helper object', '__dict__ write', 'math constants']},
    'CenterRegression': {'dynamic': False, 'features': ['lazy_property returning a grid tensor', 'int output from shape']},
}
