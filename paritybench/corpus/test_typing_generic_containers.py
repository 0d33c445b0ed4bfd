"""Corpus (generic): typing generics and Protocols in user code: TypeVar helpers, Protocol-typed collaborators, Sequence[int] configs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Generic, Protocol, Sequence, TypeVar
patch_functional()


T = TypeVar('T')


class Pair(Generic[T]):
    def __init__(self, first: T, second: T):
        self.first, self.second = first, second

    def swap(self) -> 'Pair[T]':
        return Pair(self.second, self.first)


class Scorer(Protocol):
    def __call__(self, a: Tensor, b: Tensor) -> Tensor:
        ...


def dot_scorer(a, b):
    return (a * b).sum(-1)


class GenericPair(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, a, b):
        pair = Pair[Tensor](self.fc(a), self.fc(b)).swap()
        return pair.first - pair.second


class ProtocolScorer(nn.Module):

    def __init__(self, dim, scorer: Scorer = dot_scorer):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.scorer = scorer

    def forward(self, a, b):
        return self.scorer(self.q(a), b)


class SequenceWidths(nn.Module):

    def __init__(self, widths: Sequence[int] = (3, 5, 2)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(i, o) for i, o in zip(widths[:-1], widths[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


TESTCASES = [
    (GenericPair, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (ProtocolScorer, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (SequenceWidths, lambda: ([], {}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'GenericPair': {'dynamic': False, 'features': ['Generic[T] class subscripted at run time', 'method returning a new generic']},
    'ProtocolScorer': {'dynamic': False, 'features': ['Protocol-annotated callable attribute']},
    'SequenceWidths': {'dynamic': False, 'features': ['zip of shifted slices', 'ModuleList slicing']},
}
