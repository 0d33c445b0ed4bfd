"""Corpus (dict): dict methods on feature dicts: setdefault, update, pop with default, items() comprehensions, dict(zip(...))."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class FeatureDictNeck(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.names = ['c3', 'c4', 'c5']
        self.lateral = nn.ModuleDict({n: nn.Conv2d(channels, channels, 1) for n in self.names})

    def forward(self, c3, c4, c5):
        feats = dict(zip(self.names, (c3, c4, c5)))
        out = {k: self.lateral[k](v) for k, v in feats.items()}
        out['p6'] = F.max_pool2d(out['c5'], 2)
        aux = out.pop('aux', None)
        return out, aux is None


class SetdefaultGroups(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.kinds = ['a', 'b', 'a', 'c']
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in self.kinds)

    def forward(self, x):
        groups = {}
        for kind, layer in zip(self.kinds, self.layers):
            groups.setdefault(kind, []).append(layer(x))
        return {k: torch.stack(v).mean(0) for k, v in groups.items()}, list(groups)


class MergeOutputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cls = nn.Linear(dim, 3)
        self.reg = nn.Linear(dim, 4)

    def forward(self, x):
        base = {'cls': self.cls(x)}
        extra = {'reg': self.reg(x), 'cls': self.cls(x) * 2}
        merged = base | extra
        keys = sorted(merged.keys() - {'reg'})
        return merged, keys, dict.fromkeys(keys, 0)


TESTCASES = [
    (FeatureDictNeck, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8]), torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 2, 2])], {}), False),
    (SetdefaultGroups, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MergeOutputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'FeatureDictNeck': {'dynamic': False, 'features': ['dict(zip(...))', 'dict item assignment', 'pop with default', 'dict output']},
    'SetdefaultGroups': {'dynamic': False, 'features': ['setdefault(k, []).append', 'list(dict)']},
    'MergeOutputs': {'dynamic': False, 'features': ['dict | dict', 'keys() - set', 'dict.fromkeys']},
}
