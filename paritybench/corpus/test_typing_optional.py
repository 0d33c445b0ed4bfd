"""Corpus (dynamic typing): Optional arguments (masks, biases, residuals) defaulting to None."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()

from typing import Optional


class MaskedMean(nn.Module):

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is None:
            return x.mean(1)
        mask = mask.unsqueeze(-1).to(x.dtype)
        return (x * mask).sum(1) / mask.sum(1).clamp(min=1.0)


class OptionalBias(nn.Module):

    def __init__(self, dim, bias=None):
        super().__init__()
        self.fc = nn.Linear(dim, dim, bias=False)
        self.extra_bias = nn.Parameter(torch.full((dim,), 0.3)) if bias else None

    def forward(self, x, residual=None, scale: Optional[float] = None):
        y = self.fc(x)
        if self.extra_bias is not None:
            y = y + self.extra_bias
        if residual is not None:
            y = y + residual
        return y * (scale or 1.0)


class DecoderStep(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cell = nn.GRUCell(dim, dim)

    def forward(self, x, hidden=None, steps=2):
        if hidden is None:
            hidden = x.new_zeros(x.shape[0], self.cell.hidden_size)
        outs = []
        for _ in range(steps):
            hidden = self.cell(x, hidden)
            outs.append(hidden)
        return torch.stack(outs, 1), hidden


TESTCASES = [
    (MaskedMean, lambda: ([], {}), lambda: ([torch.rand([2, 5, 3])], {}), False),
    (MaskedMean, lambda: ([], {}), lambda: ([torch.rand([2, 5, 3]), torch.rand([2, 5]) > 0.5], {}), False),
    (OptionalBias, lambda: ([], {'dim': 4, 'bias': True}), lambda: ([torch.rand([2, 4])], {'residual': torch.rand([2, 4])}), False),
    (OptionalBias, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {'scale': 0.5}), False),
    (DecoderStep, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'MaskedMean': {'dynamic': False, 'features': ['Optional mask omitted', 'type annotations']},
    'MaskedMean#1': {'dynamic': False, 'features': ['Optional mask given', 'clamp(min=)']},
    'OptionalBias': {'dynamic': False, 'features': ['Optional parameter', 'Optional residual kwarg', 'scale or default']},
    'OptionalBias#3': {'dynamic': False, 'features': ['None parameter', 'float kwarg']},
    'DecoderStep': {'dynamic': False, 'features': ['hidden=None default', 'new_zeros', 'GRUCell loop']},
}
