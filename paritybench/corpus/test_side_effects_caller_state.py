"""Corpus (effects): mutating what the caller passed in: appending to a list argument, filling a dict of outputs, in-place updates of input tensors."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CollectIntermediates(nn.Module):

    def __init__(self, dim, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x, store):
        for layer in self.layers:
            x = torch.relu(layer(x))
            store.append(x)
        return x


class FillOutputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, 2)
        self.b = nn.Linear(dim, 3)

    def forward(self, x, outputs):
        outputs['a'] = self.a(x)
        outputs['b'] = self.b(x)
        outputs.pop('stale', None)
        return len(outputs)


class InPlaceInputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, accum):
        y = self.fc(x)
        accum.add_(y.detach())
        x.clamp_(0, 0.5)
        return y


TESTCASES = [
    (CollectIntermediates, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), []], {}), False),
    (FillOutputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), {'stale': 1}], {}), False),
    (InPlaceInputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.zeros([2, 4])], {}), False),
]

EXPECTED = {
    'CollectIntermediates': {'dynamic': False, 'features': ['append to a caller list']},
    'FillOutputs': {'dynamic': False, 'features': ['write/pop on a caller dict', 'len output']},
    'InPlaceInputs': {'dynamic': False, 'features': ['add_ into an input tensor', 'clamp_ of an input']},
}
