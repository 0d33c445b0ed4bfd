"""Corpus (self): modules that register hooks on themselves in __init__: input casting, output dict packing, stateful call counting in a buffer."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CastInputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_forward_pre_hook(lambda mod, args: tuple(a.float() if torch.is_tensor(a) else a for a in args))

    def forward(self, x, scale):
        return self.fc(x) * scale


class PackOutputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 3)
        self.register_forward_hook(self._pack)

    def _pack(self, module, args, output):
        return {'logits': output, 'probs': output.softmax(-1)}

    def forward(self, x):
        return self.fc(x)


class BufferCounterHook(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer('calls', torch.zeros(()))
        self.register_forward_pre_hook(BufferCounterHook._count)

    @staticmethod
    def _count(module, args):
        module.calls += 1

    def forward(self, x):
        return self.fc(x)


TESTCASES = [
    (CastInputs, lambda: ([], {'dim': 4}), lambda: ([torch.randint(0, 5, [2, 4]), 0.5], {}), False),
    (PackOutputs, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (BufferCounterHook, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'CastInputs': {'dynamic': False, 'features': ['pre-hook on self casting int inputs', 'torch.is_tensor in a generator']},
    'PackOutputs': {'dynamic': False, 'features': ['forward hook on self returning a dict']},
    'BufferCounterHook': {'dynamic': False, 'features': ['pre-hook on self updating a buffer in place']},
}
