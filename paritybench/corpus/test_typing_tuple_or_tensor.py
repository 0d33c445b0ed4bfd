"""Corpus (dynamic typing): inputs that may be a tensor, a tuple or a list, dispatched with isinstance."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MultiInputFusion(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        if isinstance(x, (list, tuple)):
            x = torch.cat(list(x), dim=-1)
        elif isinstance(x, dict):
            x = torch.cat([x[k] for k in sorted(x)], -1)
        return self.fc(x)


class TupleOrTensorOut(nn.Module):

    def __init__(self, dim, return_hidden=True):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.return_hidden = return_hidden

    def forward(self, x):
        h = self.fc(x)
        out = h.softmax(-1)
        return (out, h) if self.return_hidden else out


def to_pair(v):
    if isinstance(v, int):
        return v, v
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return tuple(v)
    raise TypeError(type(v))


class FlexiblePool(nn.Module):

    def __init__(self, kernel=2):
        super().__init__()
        self.kernel = to_pair(kernel)

    def forward(self, x, kernel=None):
        k = self.kernel if kernel is None else to_pair(kernel)
        if isinstance(x, torch.Tensor) and x.dim() == 3:
            x = x.unsqueeze(0)
        return F.max_pool2d(x, k)


TESTCASES = [
    (MultiInputFusion, lambda: ([], {'dim': 6}), lambda: ([(torch.rand([2, 2]), torch.rand([2, 4]))], {}), False),
    (MultiInputFusion, lambda: ([], {'dim': 6}), lambda: ([torch.rand([2, 6])], {}), False),
    (MultiInputFusion, lambda: ([], {'dim': 6}), lambda: ([{'b': torch.rand([2, 3]), 'a': torch.rand([2, 3])}], {}), False),
    (TupleOrTensorOut, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (FlexiblePool, lambda: ([], {}), lambda: ([torch.rand([2, 6, 6])], {'kernel': [3, 2]}), False),
]

EXPECTED = {
    'MultiInputFusion': {'dynamic': False, 'features': ['isinstance tuple input', 'list(tuple)']},
    'MultiInputFusion#1': {'dynamic': False, 'features': ['isinstance tensor input']},
    'MultiInputFusion#2': {'dynamic': False, 'features': ['isinstance dict input', 'sorted(dict)']},
    'TupleOrTensorOut': {'dynamic': False, 'features': ['conditional tuple-or-tensor output']},
    'FlexiblePool': {'dynamic': False, 'features': ['int-or-pair helper', 'list kwarg', 'isinstance(x, torch.Tensor)']},
}
