"""Corpus (kwargs): keyword-heavy forwards: **kwargs passthrough, keyword-only flags, defaults that switch behaviour."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class KwargsPassthrough(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.inner = nn.MultiheadAttention(dim, 2, batch_first=True)

    def forward(self, x, **kwargs):
        out, weights = self.inner(x, x, x, **kwargs)
        return out, weights


class KeywordOnly(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, *, return_hidden=False, scale=1.0):
        h = self.fc(x) * scale
        out = torch.relu(h)
        return (out, h) if return_hidden else out


class OptionsDict(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.defaults = dict(dropout=0.0, residual=True, norm=False)

    def forward(self, x, options=None):
        opts = {**self.defaults, **(options or {})}
        y = F.dropout(self.fc(x), opts['dropout'], training=self.training)
        if opts['norm']:
            y = F.layer_norm(y, y.shape[-1:])
        return y + x if opts['residual'] else y


TESTCASES = [
    (KwargsPassthrough, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {'need_weights': True, 'average_attn_weights': False}), False),
    (KeywordOnly, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {'return_hidden': True, 'scale': 0.5}), False),
    (OptionsDict, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {'options': {'norm': True}}), False),
]

EXPECTED = {
    'KwargsPassthrough': {'dynamic': False, 'features': ['**kwargs forwarded to MultiheadAttention', 'boolean keyword inputs']},
    'KeywordOnly': {'dynamic': False, 'features': ['keyword-only arguments', 'conditional tuple return']},
    'OptionsDict': {'dynamic': False, 'features': ['{**defaults, **options} merge', 'dict keyword input']},
}
