"""Corpus (vae): variational and vector-quantized autoencoders: reparameterisation with a seeded generator, VQ codebook lookup, beta-VAE losses."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ConvVAE(nn.Module):

    def __init__(self, channels=1, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(channels, 4, 4, 2, 1), nn.ReLU(), nn.Flatten())
        self.mu = nn.Linear(4 * 4 * 4, latent)
        self.logvar = nn.Linear(4 * 4 * 4, latent)
        self.dec = nn.Sequential(nn.Linear(latent, 4 * 4 * 4), nn.Unflatten(1, (4, 4, 4)), nn.ConvTranspose2d(4, channels, 4, 2, 1), nn.Sigmoid())

    def forward(self, x, eps):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        recon = self.dec(z)
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)
        return recon, F.binary_cross_entropy(recon, x, reduction='none').flatten(1).sum(1) + kld


class VectorQuantizer(nn.Module):

    def __init__(self, codes=8, dim=3, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(codes, dim)
        self.codebook.weight.data.uniform_(-1 / codes, 1 / codes)
        self.beta = beta

    def forward(self, z):
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.codebook.weight.t() + self.codebook.weight.pow(2).sum(1)
        idx = d.argmin(1)
        q = self.codebook(idx).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        loss = F.mse_loss(q.detach(), z) * self.beta + F.mse_loss(q, z.detach())
        q = z + (q - z).detach()
        perplexity = torch.exp(-(F.one_hot(idx, self.codebook.num_embeddings).float().mean(0) * torch.log(F.one_hot(idx, self.codebook.num_embeddings).float().mean(0) + 1e-10)).sum())
        return q, loss, perplexity


TESTCASES = [
    (ConvVAE, lambda: ([], {}), lambda: ([torch.rand([2, 1, 8, 8]), torch.randn([2, 4])], {}), False),
    (VectorQuantizer, lambda: ([], {}), lambda: ([torch.randn([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'ConvVAE': {'dynamic': False, 'features': ['reparameterisation with noise input', 'nn.Unflatten', 'KL term']},
    'VectorQuantizer': {'dynamic': False, 'features': ['argmin codebook lookup', 'straight-through detach', 'one_hot perplexity']},
}
