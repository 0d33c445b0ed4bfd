"""Corpus (cast): typing subscripts evaluated at run time: typing.cast(Optional[Tensor], ...), List[Tensor] casts, Dict annotations."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Dict, List, Optional, Tuple
patch_functional()


class CastOptionalMask(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.mask = None

    def forward(self, x):
        mask = typing.cast(Optional[Tensor], self.mask)
        y = self.fc(x)
        if mask is not None:
            y = y.masked_fill(mask, 0.0)
        return y


class CastListOfTensors(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 1) for _ in range(2))

    def forward(self, x):
        feats = typing.cast(List[Tensor], [conv(x) for conv in self.convs])
        pair = typing.cast(Tuple[Tensor, Tensor], (feats[0], feats[1]))
        return pair[0] * pair[1]


class RuntimeAnnotations(nn.Module):
    """Annotations with subscripted typing generics on locals and helpers, evaluated eagerly."""

    def __init__(self, dim):
        super().__init__()
        self.heads: Dict[str, nn.Module] = nn.ModuleDict({'a': nn.Linear(dim, dim), 'b': nn.Linear(dim, dim)})

    def _run(self, x: Tensor, names: List[str]) -> Dict[str, Tensor]:
        out: Dict[str, Tensor] = {}
        for name in names:
            out[name] = self.heads[name](x)
        return out

    def forward(self, x):
        kinds = typing.get_args(Tuple[str, str])
        res = self._run(x, ['a', 'b'])
        return res['a'] + res['b'], len(kinds), Optional[Tensor] == typing.Union[Tensor, None]


TESTCASES = [
    (CastOptionalMask, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (CastListOfTensors, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 3])], {}), False),
    (RuntimeAnnotations, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'CastOptionalMask': {'dynamic': False, 'features': ['typing.cast(Optional[Tensor])', 'None attribute branch']},
    'CastListOfTensors': {'dynamic': False, 'features': ['typing.cast(List[Tensor])', 'Tuple[Tensor, Tensor] subscript']},
    'RuntimeAnnotations': {'dynamic': False, 'features': ['annotated locals', 'typing.get_args', 'Optional == Union comparison']},
}
