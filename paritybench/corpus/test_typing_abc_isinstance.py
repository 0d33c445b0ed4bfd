"""Corpus (abc): isinstance against collections.abc and numbers ABCs: Sequence/Mapping inputs, Number scalars, Iterable sizes."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import collections.abc as cabc
patch_functional()


def to_pair(v):
    if isinstance(v, cabc.Iterable):
        return tuple(v)
    return (v, v)


class AbcFlexibleInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, inputs):
        if isinstance(inputs, cabc.Mapping):
            x = sum(inputs.values())
        elif isinstance(inputs, cabc.Sequence):
            x = torch.stack(list(inputs)).mean(0)
        else:
            x = inputs
        return self.fc(x)


class NumberOrTensorScale(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, scale=2):
        if isinstance(scale, numbers.Number):
            scale = torch.full((x.shape[-1],), float(scale))
        return self.fc(x) * scale


class PairKernel(nn.Module):

    def __init__(self, channels, kernel=3, stride=(1, 2)):
        super().__init__()
        self.kernel, self.stride = to_pair(kernel), to_pair(stride)
        self.conv = nn.Conv2d(channels, channels, self.kernel, self.stride, tuple(k // 2 for k in self.kernel))

    def forward(self, x):
        return self.conv(x), isinstance(self.kernel, cabc.Sized) and len(self.kernel)


TESTCASES = [
    (AbcFlexibleInput, lambda: ([], {'dim': 4}), lambda: ([{'a': torch.rand([2, 4]), 'b': torch.rand([2, 4])}], {}), False),
    (AbcFlexibleInput, lambda: ([], {'dim': 4}), lambda: ([[torch.rand([2, 4]), torch.rand([2, 4])]], {}), False),
    (NumberOrTensorScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {'scale': 3}), False),
    (PairKernel, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
]

EXPECTED = {
    'AbcFlexibleInput': {'dynamic': False, 'features': ['isinstance(x, collections.abc.Mapping)', 'dict input']},
    'AbcFlexibleInput#1': {'dynamic': False, 'features': ['isinstance(x, collections.abc.Sequence)', 'list input']},
    'NumberOrTensorScale': {'dynamic': False, 'features': ['isinstance(v, numbers.Number)', 'int keyword input']},
    'PairKernel': {'dynamic': False, 'features': ['isinstance Iterable in a helper', 'isinstance Sized output']},
}
