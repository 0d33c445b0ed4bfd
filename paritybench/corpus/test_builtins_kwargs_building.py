"""Corpus (kwargs): building call arguments in Python: **dict expansion into F functions, *list into modules, kwargs filtered by signature."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import inspect
patch_functional()


class ConvKwargs(nn.Module):

    def __init__(self, channels, **conv_kwargs):
        super().__init__()
        defaults = dict(kernel_size=3, padding=1, bias=False)
        defaults.update(conv_kwargs)
        self.conv = nn.Conv2d(channels, channels, **defaults)
        self.interp = {'mode': 'bilinear', 'align_corners': False}

    def forward(self, x):
        y = self.conv(x)
        return F.interpolate(y, size=x.shape[-2:], **self.interp)


class SignatureFiltered(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = nn.LeakyReLU
        accepted = inspect.signature(self.act).parameters
        opts = {'negative_slope': 0.3, 'unused_option': 1}
        self.act_layer = self.act(**{k: v for k, v in opts.items() if k in accepted})

    def forward(self, x):
        return self.act_layer(self.fc(x))


class StarArgs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.bilinear = nn.Bilinear(dim, dim, 2)

    def forward(self, a, b):
        pair = [a, b]
        args = (*pair,)
        return self.bilinear(*args), torch.add(*reversed(pair), alpha=2)


TESTCASES = [
    (ConvKwargs, lambda: ([2], {'kernel_size': 3, 'stride': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (SignatureFiltered, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (StarArgs, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3]), torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'ConvKwargs': {'dynamic': False, 'features': ['**kwargs in __init__', '**dict into F.interpolate']},
    'SignatureFiltered': {'dynamic': False, 'features': ['inspect.signature filtering in __init__']},
    'StarArgs': {'dynamic': False, 'features': ['(*list,) tuple', 'torch.add(*reversed(list), alpha=)']},
}
