"""Corpus (autograd): custom autograd.Function whose forward returns an input unchanged or lightly transformed (gradient tricks)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class GradReverse(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.alpha * grad, None


class PassThrough(torch.autograd.Function):
    """Identity in forward; clips the gradient in backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1, 1)


class StraightThroughRound(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class DomainClassifier(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.features = nn.Linear(dim, dim)
        self.domain = nn.Linear(dim, 2)

    def forward(self, x):
        f = torch.relu(self.features(x))
        return self.domain(GradReverse.apply(f, 0.5)), f


class ClippedGradient(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(PassThrough.apply(x)) + PassThrough.apply(x)


class QuantizeSTE(nn.Module):

    def __init__(self, dim, levels=4):
        super().__init__()
        self.levels = levels
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = torch.sigmoid(self.fc(x)) * (self.levels - 1)
        return StraightThroughRound.apply(y) / (self.levels - 1)


TESTCASES = [
    (DomainClassifier, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (ClippedGradient, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (QuantizeSTE, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'DomainClassifier': {'dynamic': False, 'features': ['autograd.Function returning view_as', 'ctx attribute', 'non-tensor apply argument']},
    'ClippedGradient': {'dynamic': False, 'features': ['autograd.Function returning its input unchanged']},
    'QuantizeSTE': {'dynamic': False, 'features': ['straight-through estimator Function']},
}
