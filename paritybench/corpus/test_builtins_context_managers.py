"""Corpus (context): context managers in forward: torch.no_grad for frozen branches, contextlib helpers, custom __enter__/__exit__."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import contextlib
patch_functional()


@contextlib.contextmanager
def scaled(module, factor):
    old = module.scale
    module.scale = factor
    try:
        yield module
    finally:
        module.scale = old


class Timer:
    """A do-nothing profiling scope as projects keep around for their logs."""

    def __init__(self, name):
        self.name = name
        self.entered = False

    def __enter__(self):
        self.entered = True
        return self

    def __exit__(self, *exc):
        self.entered = False
        return False


class FrozenTeacher(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.teacher = nn.Linear(dim, dim)
        self.student = nn.Linear(dim, dim)

    def forward(self, x):
        with torch.no_grad():
            target = self.teacher(x).detach()
        return F.mse_loss(self.student(x), target, reduction='none')


class TemporaryScale(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.scale = 1.0

    def forward(self, x):
        with scaled(self, 0.5) as m:
            half = m.fc(x) * m.scale
        return half + self.fc(x) * self.scale


class NamedScopes(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.dec = nn.Linear(dim, dim)

    def forward(self, x):
        with Timer('encode') as t, contextlib.suppress(KeyError):
            h = torch.tanh(self.enc(x))
            name = t.name
        with contextlib.nullcontext():
            out = self.dec(h)
        return out, name


TESTCASES = [
    (FrozenTeacher, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (TemporaryScale, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (NamedScopes, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'FrozenTeacher': {'dynamic': False, 'features': ['with torch.no_grad()', 'detach']},
    'TemporaryScale': {'dynamic': False, 'features': ['contextlib.contextmanager', 'attribute restored in finally']},
    'NamedScopes': {'dynamic': False, 'features': ['custom __enter__/__exit__', 'contextlib.suppress', 'nullcontext']},
}
