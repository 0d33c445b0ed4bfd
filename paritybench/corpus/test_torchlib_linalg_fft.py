"""Corpus (linalg): torch.linalg and torch.fft in models: orthogonal projections by QR, spectral filtering (FNO-style), whitening with eigh."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SpectralConv1d(nn.Module):
    """Fourier neural operator layer: keep the lowest modes, multiply by complex weights."""

    def __init__(self, channels, modes=3):
        super().__init__()
        self.modes = modes
        self.w_re = nn.Parameter(torch.randn(channels, channels, modes) * 0.1)
        self.w_im = nn.Parameter(torch.randn(channels, channels, modes) * 0.1)

    def forward(self, x):
        xf = torch.fft.rfft(x)
        w = torch.complex(self.w_re, self.w_im)
        out = torch.zeros_like(xf)
        out[..., :self.modes] = torch.einsum('bix,iox->box', xf[..., :self.modes], w)
        return torch.fft.irfft(out, n=x.shape[-1])


class OrthoProjection(nn.Module):

    def __init__(self, dim, rank=2):
        super().__init__()
        self.raw = nn.Parameter(torch.randn(dim, rank))

    def forward(self, x):
        q, _ = torch.linalg.qr(self.raw)
        return x @ q @ q.t(), torch.linalg.matrix_norm(q.t() @ q)


class Whitening(nn.Module):

    def __init__(self, eps=1e-3):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        xc = x - x.mean(0, keepdim=True)
        cov = xc.t() @ xc / (x.shape[0] - 1) + self.eps * torch.eye(x.shape[1])
        evals, evecs = torch.linalg.eigh(cov)
        w = evecs @ torch.diag(evals.rsqrt()) @ evecs.t()
        return xc @ w, torch.linalg.vector_norm(xc, dim=1)


TESTCASES = [
    (SpectralConv1d, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 8])], {}), False),
    (OrthoProjection, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (Whitening, lambda: ([], {}), lambda: ([torch.rand([8, 3])], {}), False),
]

EXPECTED = {
    'SpectralConv1d': {'dynamic': False, 'features': ['rfft/irfft', 'torch.complex parameters', 'slice assignment into a complex tensor']},
    'OrthoProjection': {'dynamic': False, 'features': ['torch.linalg.qr unpacking', 'matrix_norm']},
    'Whitening': {'dynamic': False, 'features': ['torch.linalg.eigh', 'diag/rsqrt']},
}
