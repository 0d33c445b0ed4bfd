"""Corpus (models): StyleGAN-flavoured generator pieces (modulated conv, noise injection, pixel norm)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PixelNorm(nn.Module):

    def forward(self, x, eps=1e-08):
        return x * torch.rsqrt(torch.mean(x ** 2, dim=1, keepdim=True) + eps)


class ModulatedConv2d(nn.Module):

    def __init__(self, cin, cout, kernel, style_dim, demodulate=True):
        super().__init__()
        self.kernel, self.cin, self.cout = kernel, cin, cout
        self.scale = 1 / math.sqrt(cin * kernel ** 2)
        self.padding = kernel // 2
        self.weight = nn.Parameter(torch.randn(1, cout, cin, kernel, kernel))
        self.modulation = nn.Linear(style_dim, cin)
        self.demodulate = demodulate

    def __repr__(self):
        return f'{self.__class__.__name__}({self.cin}, {self.cout}, {self.kernel}, demodulate={self.demodulate})'

    def forward(self, x, style):
        batch, cin, height, width = x.shape
        style = self.modulation(style).view(batch, 1, cin, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-08)
            weight = weight * demod.view(batch, self.cout, 1, 1, 1)
        weight = weight.view(batch * self.cout, cin, self.kernel, self.kernel)
        x = x.view(1, batch * cin, height, width)
        out = F.conv2d(x, weight, padding=self.padding, groups=batch)
        return out.view(batch, self.cout, *out.shape[-2:])


class NoiseInjection(nn.Module):

    def __init__(self, size=4):
        super().__init__()
        self.weight = nn.Parameter(torch.full((1,), 0.1))
        self.register_buffer('fixed_noise', torch.randn(1, 1, size, size))

    def forward(self, image, noise=None):
        if noise is None:
            noise = self.fixed_noise.expand(image.shape[0], 1, -1, -1)
        return image + self.weight * noise


TESTCASES = [
    (PixelNorm, lambda: ([], {}), lambda: ([torch.rand([2, 4, 3, 3])], {}), True),
    (ModulatedConv2d, lambda: ([], {'cin': 3, 'cout': 4, 'kernel': 3, 'style_dim': 5}), lambda: ([torch.rand([2, 3, 6, 6]), torch.rand([2, 5])], {}), False),
    (NoiseInjection, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'PixelNorm': {'dynamic': False, 'features': ['default float argument', 'rsqrt']},
    'ModulatedConv2d': {'dynamic': False, 'features': ['shape unpacking', 'grouped conv via view', 'star-shape view', '__repr__ with f-string']},
    'NoiseInjection': {'dynamic': False, 'features': ['Optional noise', 'expand with -1']},
}
