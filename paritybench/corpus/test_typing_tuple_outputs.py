"""Corpus (tuple): varied output structures: nested tuples, dicts of lists, None entries and mixed Python values returned from forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Dict, List, Optional, Tuple
patch_functional()


class NestedOutputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.dec = nn.Linear(dim, dim)

    def forward(self, x) -> Tuple[Tensor, Tuple[Tensor, List[Tensor]]]:
        h = self.enc(x)
        states = [h, torch.tanh(h)]
        return self.dec(h), (h.mean(), states)


class DictOfLists(nn.Module):

    def __init__(self, channels, levels=2):
        super().__init__()
        self.cls = nn.ModuleList(nn.Conv2d(channels, 3, 1) for _ in range(levels))
        self.box = nn.ModuleList(nn.Conv2d(channels, 4, 1) for _ in range(levels))

    def forward(self, feats: List[Tensor]) -> Dict[str, List[Tensor]]:
        return {'cls': [c(f) for c, f in zip(self.cls, feats)], 'box': [b(f) for b, f in zip(self.box, feats)]}


class MaybeAux(nn.Module):

    def __init__(self, dim, aux=False):
        super().__init__()
        self.main = nn.Linear(dim, 2)
        self.aux = nn.Linear(dim, 2) if aux else None

    def forward(self, x) -> Tuple[Tensor, Optional[Tensor], str, float]:
        aux = self.aux(x) if self.aux is not None else None
        return self.main(x), aux, 'v1', 0.5


TESTCASES = [
    (NestedOutputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (DictOfLists, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 2, 2])]], {}), False),
    (MaybeAux, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MaybeAux, lambda: ([], {'dim': 4, 'aux': True}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'NestedOutputs': {'dynamic': False, 'features': ['nested tuple/list output', 'return annotation']},
    'DictOfLists': {'dynamic': False, 'features': ['dict of lists output', 'list input']},
    'MaybeAux': {'dynamic': False, 'features': ['None inside a tuple output', 'str/float outputs']},
    'MaybeAux#3': {'dynamic': False, 'features': ['optional submodule present']},
}
