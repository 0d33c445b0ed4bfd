"""Corpus (dynamic): debugging output of tensor values with print and string formatting."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PrintStats(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.fc(x)
        print('mean activation', y.mean())
        return y


class FormatLoss(nn.Module):

    def forward(self, pred, target):
        loss = F.mse_loss(pred, target)
        message = f'loss={loss:.4f}'
        print(message)
        return loss, message


class WarnOnNaN(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = torch.log(self.fc(x))
        if torch.isnan(y).any():
            print(f'warning: {int(torch.isnan(y).sum())} NaNs')
            y = torch.nan_to_num(y)
        return y


TESTCASES = [
    (PrintStats, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (FormatLoss, lambda: ([], {}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (WarnOnNaN, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
]

EXPECTED = {
    'PrintStats': {'dynamic': True, 'features': ['print of a tensor value']},
    'FormatLoss': {'dynamic': True, 'features': ['f-string with a tensor format spec', 'string output']},
    'WarnOnNaN': {'dynamic': True, 'features': ['tensor-dependent branch with print']},
}
