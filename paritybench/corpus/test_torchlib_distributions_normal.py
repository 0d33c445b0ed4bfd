"""Corpus (distributions): torch.distributions.Normal in forward: reparameterised samples, log_prob, entropy, KL to a prior."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.distributions import Normal, Independent, kl_divergence
patch_functional()


class VAEBottleneck(nn.Module):

    def __init__(self, dim, latent=2):
        super().__init__()
        self.mu = nn.Linear(dim, latent)
        self.log_sigma = nn.Linear(dim, latent)

    def forward(self, h):
        q = Normal(self.mu(h), self.log_sigma(h).exp(), validate_args=False)
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale), validate_args=False)
        return q.mean, kl_divergence(q, prior).sum(-1)


class GaussianActor(nn.Module):

    def __init__(self, obs, act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 8), nn.Tanh(), nn.Linear(8, act))
        self.log_std = nn.Parameter(torch.full((act,), -0.5))

    def forward(self, obs, action):
        dist = Normal(self.net(obs), self.log_std.exp(), validate_args=False)
        return dist.log_prob(action).sum(-1), dist.entropy().sum(-1)


class ReparamSample(nn.Module):
    """rsample with the global generator: the runner seeds it before every call."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim * 2)

    def forward(self, x):
        loc, raw = self.fc(x).chunk(2, -1)
        dist = Independent(Normal(loc, F.softplus(raw) + 1e-3, validate_args=False), 1)
        z = dist.rsample()
        return z, dist.log_prob(z)


TESTCASES = [
    (VAEBottleneck, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (GaussianActor, lambda: ([], {'obs': 4, 'act': 2}), lambda: ([torch.rand([3, 4]), torch.rand([3, 2])], {}), False),
    (ReparamSample, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'VAEBottleneck': {'dynamic': False, 'features': ['Normal(validate_args=False)', 'kl_divergence', '.mean property']},
    'GaussianActor': {'dynamic': False, 'features': ['Normal.log_prob', 'Normal.entropy']},
    'ReparamSample': {'dynamic': False, 'features': ['Independent(Normal)', 'rsample', 'log_prob of a sample']},
}
