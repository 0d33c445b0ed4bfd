"""Corpus (union): Union-typed inputs: a tensor or a list of tensors, an int or a tuple size, a string or a callable activation."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Callable, List, Union
patch_functional()


class ListOrTensor(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x: Union[Tensor, List[Tensor]]) -> Tensor:
        if isinstance(x, (list, tuple)):
            x = torch.cat(x, 0)
        return self.conv(x)


class SizeOrTuple(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, size: Union[int, tuple] = 6):
        if isinstance(size, int):
            size = (size, size)
        return self.conv(F.interpolate(x, size=size, mode='bilinear', align_corners=False))


class ActivationSpec(nn.Module):

    def __init__(self, dim, act: Union[str, Callable] = 'gelu'):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = getattr(F, act) if isinstance(act, str) else act

    def forward(self, x):
        return self.act(self.fc(x)), callable(self.act)


TESTCASES = [
    (ListOrTensor, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([1, 2, 3, 3]), torch.rand([2, 2, 3, 3])]], {}), False),
    (ListOrTensor, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3])], {}), False),
    (SizeOrTuple, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {'size': (5, 7)}), False),
    (ActivationSpec, lambda: ([], {'dim': 4, 'act': torch.tanh}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ListOrTensor': {'dynamic': False, 'features': ['isinstance(x, (list, tuple))', 'list input']},
    'ListOrTensor#1': {'dynamic': False, 'features': ['Union annotation, tensor input']},
    'SizeOrTuple': {'dynamic': False, 'features': ['tuple keyword input', 'isinstance(size, int)']},
    'ActivationSpec': {'dynamic': False, 'features': ['callable init argument', 'callable() output']},
}
