"""Corpus (dynamic typing): dict inputs and outputs, as in multi-modal and detection pipelines."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MultiModalEncoder(nn.Module):

    def __init__(self, dims=None, out=4):
        super().__init__()
        dims = dims or {'image': 6, 'text': 3}
        self.encoders = nn.ModuleDict({k: nn.Linear(d, out) for k, d in dims.items()})

    def forward(self, inputs):
        encoded = {}
        for key, value in inputs.items():
            if key in self.encoders:
                encoded[key] = self.encoders[key](value)
        fused = torch.stack(list(encoded.values()), 0).mean(0)
        return {'fused': fused, **encoded}


class LossDict(nn.Module):

    def __init__(self, weights=None):
        super().__init__()
        self.weights = weights or {'mse': 1.0, 'l1': 0.5}

    def forward(self, pred, target):
        losses = {'mse': F.mse_loss(pred, target), 'l1': F.l1_loss(pred, target)}
        total = sum(self.weights[k] * v for k, v in losses.items())
        losses['total'] = total
        return losses


class KeyedRouting(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.heads = nn.ModuleDict({'cls': nn.Linear(dim, 3), 'reg': nn.Linear(dim, 1)})

    def forward(self, feats, tasks=('cls', 'reg')):
        return {t: self.heads[t](feats[t if t in feats else 'shared']) for t in tasks}


TESTCASES = [
    (MultiModalEncoder, lambda: ([], {}), lambda: ([{'image': torch.rand([2, 6]), 'text': torch.rand([2, 3]), 'meta': 'ignored'}], {}), False),
    (LossDict, lambda: ([], {}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (KeyedRouting, lambda: ([], {'dim': 4}), lambda: ([{'shared': torch.rand([2, 4]), 'reg': torch.rand([2, 4])}], {}), False),
]

EXPECTED = {
    'MultiModalEncoder': {'dynamic': False, 'features': ['dict input with a non-tensor value', 'key in ModuleDict', 'dict merge output']},
    'LossDict': {'dynamic': False, 'features': ['dict of losses', 'sum(generator)', 'weights or default']},
    'KeyedRouting': {'dynamic': False, 'features': ['dict comprehension with conditional key', 'tuple default arg']},
}
