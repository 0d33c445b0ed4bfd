"""Corpus (diffusion): diffusion model pieces: sinusoidal timestep embeddings, noise schedules as buffers, time-conditioned residual blocks, DDPM step math."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], -1)


class TimeResBlock(nn.Module):

    def __init__(self, channels, tdim=4):
        super().__init__()
        self.norm1 = nn.GroupNorm(2, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.time = nn.Linear(tdim, channels)
        self.norm2 = nn.GroupNorm(2, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.tdim = tdim

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(F.silu(timestep_embedding(t, self.tdim)))[:, :, None, None]
        return x + self.conv2(F.silu(self.norm2(h)))


class DDPMStep(nn.Module):

    def __init__(self, channels, steps=10):
        super().__init__()
        betas = torch.linspace(1e-4, 0.02, steps)
        alphas = 1 - betas
        self.register_buffer('betas', betas)
        self.register_buffer('alphas_cumprod', torch.cumprod(alphas, 0))
        self.eps_model = TimeResBlock(channels)

    def forward(self, x_t, t):
        eps = self.eps_model(x_t, t)
        a_bar = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        beta = self.betas[t].view(-1, 1, 1, 1)
        mean = (x_t - beta / torch.sqrt(1 - a_bar) * eps) / torch.sqrt(1 - beta)
        x0 = (x_t - torch.sqrt(1 - a_bar) * eps) / torch.sqrt(a_bar)
        return mean, x0.clamp(-1, 1)


TESTCASES = [
    (TimeResBlock, lambda: ([], {'channels': 4}), lambda: ([torch.rand([2, 4, 4, 4]), torch.randint(0, 10, [2])], {}), False),
    (DDPMStep, lambda: ([], {'channels': 2}), lambda: ([torch.randn([2, 2, 4, 4]), torch.randint(0, 10, [2])], {}), False),
]

EXPECTED = {
    'TimeResBlock': {'dynamic': False, 'features': ['timestep embedding helper', '[:, :, None, None] broadcast']},
    'DDPMStep': {'dynamic': False, 'features': ['schedule buffers indexed by an integer tensor', 'cumprod']},
}
