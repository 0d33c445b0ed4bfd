"""Corpus (oop): torch.autograd.Function subclasses applied in forward (custom activations, straight-through)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()

from torch.autograd import Function


class SwishFn(Function):

    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i, = ctx.saved_tensors
        s = torch.sigmoid(i)
        return grad_output * (s * (1 + i * (1 - s)))


class Swish(nn.Module):

    def forward(self, x):
        return SwishFn.apply(x)


class RoundSTE(Function):

    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, g):
        return g, None


class FakeQuant(nn.Module):

    def __init__(self, bits=4):
        super().__init__()
        self.step = 1.0 / (2 ** bits - 1)

    def forward(self, x):
        return RoundSTE.apply(x.clamp(0, 1), self.step)


class ScaleGrad(Function):

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


class GradReversalHead(nn.Module):

    def __init__(self, dim, lambd=0.3):
        super().__init__()
        self.lambd = lambd
        self.fc = nn.Linear(dim, 2)

    def forward(self, x):
        return self.fc(ScaleGrad.apply(x, -self.lambd))


TESTCASES = [
    (Swish, lambda: ([], {}), lambda: ([torch.randn([2, 4])], {}), False),
    (FakeQuant, lambda: ([], {}), lambda: ([torch.rand([3, 4])], {}), False),
    (GradReversalHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'Swish': {'dynamic': False, 'features': ['autograd.Function.apply', 'ctx.save_for_backward']},
    'FakeQuant': {'dynamic': False, 'features': ['autograd.Function with non-tensor arg', 'straight-through estimator']},
    'GradReversalHead': {'dynamic': False, 'features': ['autograd.Function writing ctx attributes', 'view_as']},
}
