"""Corpus (builtins): string methods picking layers by name (activation and norm factories)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def get_activation(name):
    name = name.lower().strip()
    if name.startswith('leaky'):
        slope = float(name.split('_')[1]) if '_' in name else 0.01
        return nn.LeakyReLU(slope)
    return {'relu': nn.ReLU(), 'gelu': nn.GELU(), 'silu': nn.SiLU(), 'swish': nn.SiLU()}[name]


class ConvNormAct(nn.Module):

    def __init__(self, cin, cout, norm='BN', act='Leaky_0.2'):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=norm.upper() == 'NONE')
        kind = norm.upper()
        self.norm = nn.BatchNorm2d(cout) if kind == 'BN' else nn.GroupNorm(2, cout) if kind.startswith('GN') else nn.Identity()
        self.act = get_activation(act)

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class SpecParser(nn.Module):
    """Builds an MLP from a spec string like '8-relu-6-gelu-4'."""

    def __init__(self, spec='8-relu-6-gelu-4'):
        super().__init__()
        tokens = spec.split('-')
        layers = []
        width = int(tokens[0])
        for tok in tokens[1:]:
            if tok.isdigit():
                layers.append(nn.Linear(width, int(tok)))
                width = int(tok)
            else:
                layers.append(get_activation(tok))
        self.net = nn.Sequential(*layers)
        self.tag = '_'.join(t for t in tokens if not t.isdigit())

    def forward(self, x):
        y = self.net(x)
        if self.tag.endswith('gelu'):
            y = y * 0.5
        return y


class KeyedOutputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(3))

    def forward(self, x):
        out = {}
        for i, layer in enumerate(self.layers):
            x = layer(x)
            out['stage%d' % i] = x
        key = 'stage' + str(len(self.layers) - 1)
        return out[key], ','.join(sorted(out)).upper()


TESTCASES = [
    (ConvNormAct, lambda: ([], {'cin': 3, 'cout': 4}), lambda: ([torch.rand([2, 3, 6, 6])], {}), False),
    (ConvNormAct, lambda: ([], {'cin': 3, 'cout': 4, 'norm': 'gn2', 'act': 'SiLU'}), lambda: ([torch.rand([2, 3, 6, 6])], {}), False),
    (SpecParser, lambda: ([], {}), lambda: ([torch.rand([3, 8])], {}), False),
    (KeyedOutputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ConvNormAct': {'dynamic': False, 'features': ['str.lower/upper/startswith/split', 'float(str)', 'dict of layers']},
    'ConvNormAct#1': {'dynamic': False, 'features': ['nested conditional expression', 'str methods']},
    'SpecParser': {'dynamic': False, 'features': ['str.split/isdigit/join/endswith', 'attribute string read in forward']},
    'KeyedOutputs': {'dynamic': False, 'features': ['% formatting', 'str()', 'sorted(dict)', 'str output']},
}
