"""Corpus (dynamic): tensor values leave the graph as Python numbers (.item(), int(), .tolist())."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ItemScale(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        peak = x.abs().max().item()
        return self.fc(x / (peak + 1e-06)), peak


class ArgmaxSelect(nn.Module):

    def __init__(self, dim, n=3):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n))
        self.router = nn.Linear(dim, n)

    def forward(self, x):
        idx = int(self.router(x.mean(0)).argmax())
        return self.experts[idx](x)


class ToListLengths(nn.Module):

    def forward(self, x, lengths):
        outs = []
        for i, n in enumerate(lengths.tolist()):
            outs.append(x[i, :n].sum(0))
        return torch.stack(outs)


TESTCASES = [
    (ItemScale, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (ArgmaxSelect, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (ToListLengths, lambda: ([], {}), lambda: ([torch.rand([3, 5, 2]), torch.randint(1, 6, [3])], {}), False),
]

EXPECTED = {
    'ItemScale': {'dynamic': True, 'features': ['.item() into Python arithmetic', 'float output']},
    'ArgmaxSelect': {'dynamic': True, 'features': ['int(tensor) indexes a ModuleList']},
    'ToListLengths': {'dynamic': True, 'features': ['.tolist() drives slicing']},
}
