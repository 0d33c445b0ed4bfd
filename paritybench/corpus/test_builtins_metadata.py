"""Corpus (builtins): tensor metadata (ndim, dtype, device, size) steering reshapes and interpolation."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AnyRankNorm(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels) * 1.5)

    def forward(self, x):
        if x.ndim == 2:
            return x * self.weight
        view = (1, -1) + (1,) * (x.ndim - 2)
        dims = tuple(range(2, x.dim()))
        mean = x.mean(dim=dims, keepdim=True)
        return (x - mean) * self.weight.view(*view)


class ResizeLike(nn.Module):

    def forward(self, x, ref):
        if x.shape[-2:] != ref.shape[-2:]:
            x = F.interpolate(x, size=ref.shape[-2:], mode='bilinear', align_corners=False)
        return x + ref


class DtypeGuard(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        if not x.is_floating_point():
            x = x.float() / 255.0
        out = self.lin(x.to(self.lin.weight.dtype))
        mask = out.new_ones(out.shape[0], 1, dtype=torch.bool)
        dev = str(x.device)
        return out.type_as(x) * mask, dev, x.dtype == torch.float32


TESTCASES = [
    (AnyRankNorm, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (AnyRankNorm, lambda: ([], {'channels': 3}), lambda: ([torch.rand([5, 3])], {}), False),
    (ResizeLike, lambda: ([], {}), lambda: ([torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 8, 8])], {}), False),
    (DtypeGuard, lambda: ([], {'dim': 4}), lambda: ([torch.randint(0, 255, [3, 4], dtype=torch.uint8)], {}), False),
]

EXPECTED = {
    'AnyRankNorm': {'dynamic': False, 'features': ['Tensor.ndim', 'tuple arithmetic', 'tuple(range)']},
    'AnyRankNorm#1': {'dynamic': False, 'features': ['Tensor.ndim early return']},
    'ResizeLike': {'dynamic': False, 'features': ['torch.Size comparison', 'shape slice as size']},
    'DtypeGuard': {'dynamic': False, 'features': ['is_floating_point', 'dtype comparison', 'str(device)', 'new_ones']},
}
