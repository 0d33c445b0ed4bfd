"""Corpus (mask): boolean-mask shapes read into Python: counts of selected elements divide, branch and size new tensors."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MaskedAverage(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, threshold=0.5):
        y = self.fc(x)
        selected = y[y > threshold]
        n = selected.shape[0]
        return selected.sum() / max(n, 1), n


class PositiveAnchors(nn.Module):
    """Normalises a loss by the number of positive anchors, read with len()."""

    def __init__(self, dim):
        super().__init__()
        self.cls = nn.Linear(dim, 1)

    def forward(self, feats, iou):
        logits = self.cls(feats).squeeze(-1)
        pos = iou > 0.5
        num_pos = len(logits[pos])
        if num_pos == 0:
            return logits.sum() * 0
        return F.binary_cross_entropy_with_logits(logits, pos.float(), reduction='sum') / num_pos


class GatherValid(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, valid):
        rows = x[valid]
        out = x.new_zeros(rows.size(0), x.shape[1])
        for i in range(rows.size(0)):
            out[i] = self.fc(rows[i])
        return out


TESTCASES = [
    (MaskedAverage, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (PositiveAnchors, lambda: ([], {'dim': 4}), lambda: ([torch.rand([8, 4]), torch.rand([8])], {}), False),
    (GatherValid, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3]), torch.rand([5]) > 0.4], {}), False),
]

EXPECTED = {
    'MaskedAverage': {'dynamic': True, 'features': ['y[mask].shape[0] into Python', 'int output']},
    'PositiveAnchors': {'dynamic': True, 'features': ['len(x[mask]) in a branch and a division']},
    'GatherValid': {'dynamic': True, 'features': ['loop over range(masked.size(0))']},
}
