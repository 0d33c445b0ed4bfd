"""Corpus (gan): GAN pieces: PatchGAN discriminator, minibatch standard deviation, noise injection with a fixed-seed buffer, modulated conv."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PatchDiscriminator(nn.Module):

    def __init__(self, channels=3, base=4, layers=2):
        super().__init__()
        seq = [nn.Conv2d(channels, base, 4, 2, 1), nn.LeakyReLU(0.2, True)]
        mult = 1
        for n in range(1, layers):
            prev, mult = mult, min(2 ** n, 8)
            seq += [nn.Conv2d(base * prev, base * mult, 4, 2, 1), nn.InstanceNorm2d(base * mult), nn.LeakyReLU(0.2, True)]
        seq += [nn.Conv2d(base * mult, 1, 3, 1, 1)]
        self.model = nn.Sequential(*seq)

    def forward(self, x):
        return self.model(x)


class MinibatchStd(nn.Module):

    def __init__(self, group=2):
        super().__init__()
        self.group = group

    def forward(self, x):
        n, c, h, w = x.shape
        g = min(self.group, n)
        y = x.view(g, -1, c, h, w)
        y = torch.sqrt(y.var(0, unbiased=False) + 1e-8).mean((1, 2, 3))
        y = y.view(-1, 1, 1, 1).repeat(g, 1, h, w)
        return torch.cat([x, y], 1)


class ModulatedConv(nn.Module):

    def __init__(self, cin, cout, style_dim, k=3, demodulate=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, cout, cin, k, k))
        self.affine = nn.Linear(style_dim, cin)
        self.demodulate, self.pad = demodulate, k // 2
        self.register_buffer('noise', torch.randn(1, 1, 6, 6, generator=torch.Generator().manual_seed(0)))
        self.noise_strength = nn.Parameter(torch.full((1,), 0.1))

    def forward(self, x, style):
        b, cin, h, w = x.shape
        s = self.affine(style).view(b, 1, cin, 1, 1)
        weight = self.weight * s
        if self.demodulate:
            weight = weight * torch.rsqrt(weight.pow(2).sum([2, 3, 4], keepdim=True) + 1e-8)
        weight = weight.view(-1, cin, *weight.shape[3:])
        out = F.conv2d(x.view(1, -1, h, w), weight, padding=self.pad, groups=b)
        return out.view(b, -1, h, w) + self.noise_strength * self.noise[..., :h, :w]


TESTCASES = [
    (PatchDiscriminator, lambda: ([], {}), lambda: ([torch.rand([2, 3, 16, 16])], {}), False),
    (MinibatchStd, lambda: ([], {}), lambda: ([torch.rand([4, 3, 4, 4])], {}), False),
    (ModulatedConv, lambda: ([2, 3, 4], {}), lambda: ([torch.rand([2, 2, 6, 6]), torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'PatchDiscriminator': {'dynamic': False, 'features': ['Sequential from a growing list', 'min() of sizes']},
    'MinibatchStd': {'dynamic': False, 'features': ['min(group, batch)', 'view(g, -1, ...)']},
    'ModulatedConv': {'dynamic': False, 'features': ['grouped conv per sample', 'view(-1, c, *shape[3:])', 'seeded buffer']},
}
