"""Corpus (string): string methods on module and parameter names: startswith filters, split/join paths, replace and lower."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PrefixFilteredSum(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.enc_a = nn.Linear(dim, dim)
        self.enc_b = nn.Linear(dim, dim)
        self.dec = nn.Linear(dim, dim)

    def forward(self, x):
        encoders = [m for name, m in self.named_children() if name.startswith('enc_')]
        return self.dec(sum(e(x) for e in encoders))


class DottedPathLookup(nn.Module):

    def __init__(self, dim, path='blocks.1.fc'):
        super().__init__()
        self.blocks = nn.ModuleList(nn.ModuleDict({'fc': nn.Linear(dim, dim)}) for _ in range(2))
        self.path = path

    def forward(self, x):
        module = self
        for part in self.path.split('.'):
            module = module[int(part)] if part.isdigit() else (module[part] if isinstance(module, nn.ModuleDict) else getattr(module, part))
        return module(x), '/'.join(self.path.split('.')).upper()


class NormalizedNames(nn.Module):

    def __init__(self, dim, names=('Conv-Block', 'Res-Block')):
        super().__init__()
        self.layers = nn.ModuleDict({n.lower().replace('-', '_'): nn.Linear(dim, dim) for n in names})

    def forward(self, x):
        out = {}
        for key, layer in self.layers.items():
            stem, _, kind = key.partition('_')
            out[f'{stem}:{kind.strip()}'] = layer(x)
        return out


TESTCASES = [
    (PrefixFilteredSum, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (DottedPathLookup, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NormalizedNames, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'PrefixFilteredSum': {'dynamic': False, 'features': ['named_children with startswith filter']},
    'DottedPathLookup': {'dynamic': False, 'features': ['str.split/isdigit path walk', 'join/upper string output']},
    'NormalizedNames': {'dynamic': False, 'features': ['lower/replace keys', 'str.partition', 'f-string dict keys']},
}
