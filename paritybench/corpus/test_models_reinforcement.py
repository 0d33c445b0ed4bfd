"""Corpus (reinforcement): reinforcement-learning networks: dueling Q heads, noisy linear layers with fixed noise buffers, recurrent policies with done masks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DuelingQ(nn.Module):

    def __init__(self, obs, actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 8), nn.ReLU())
        self.value = nn.Linear(8, 1)
        self.adv = nn.Linear(8, actions)

    def forward(self, s):
        h = self.body(s)
        a = self.adv(h)
        return self.value(h) + a - a.mean(1, keepdim=True)


class NoisyLinear(nn.Module):

    def __init__(self, cin, cout, sigma0=0.5):
        super().__init__()
        self.mu_w = nn.Parameter(torch.empty(cout, cin).uniform_(-1 / math.sqrt(cin), 1 / math.sqrt(cin)))
        self.sigma_w = nn.Parameter(torch.full((cout, cin), sigma0 / math.sqrt(cin)))
        self.mu_b = nn.Parameter(torch.zeros(cout))
        self.sigma_b = nn.Parameter(torch.full((cout,), sigma0 / math.sqrt(cin)))
        g = torch.Generator().manual_seed(1)
        f = lambda n: (lambda e: e.sign() * e.abs().sqrt())(torch.randn(n, generator=g))
        ein, eout = f(cin), f(cout)
        self.register_buffer('eps_w', torch.outer(eout, ein))
        self.register_buffer('eps_b', eout)

    def forward(self, x):
        return F.linear(x, self.mu_w + self.sigma_w * self.eps_w, self.mu_b + self.sigma_b * self.eps_b)


class RecurrentPolicy(nn.Module):

    def __init__(self, obs, hidden=4, actions=3):
        super().__init__()
        self.gru = nn.GRUCell(obs, hidden)
        self.pi = nn.Linear(hidden, actions)

    def forward(self, obs_seq, dones, h):
        logits = []
        for t in range(obs_seq.shape[0]):
            h = h * (1 - dones[t]).unsqueeze(-1)
            h = self.gru(obs_seq[t], h)
            logits.append(self.pi(h))
        return torch.stack(logits), h


TESTCASES = [
    (DuelingQ, lambda: ([], {'obs': 4, 'actions': 3}), lambda: ([torch.rand([2, 4])], {}), False),
    (NoisyLinear, lambda: ([4, 3], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (RecurrentPolicy, lambda: ([], {'obs': 3}), lambda: ([torch.rand([4, 2, 3]), torch.randint(0, 2, [4, 2]).float(), torch.zeros([2, 4])], {}), False),
]

EXPECTED = {
    'DuelingQ': {'dynamic': False, 'features': ['dueling aggregation']},
    'NoisyLinear': {'dynamic': False, 'features': ['factorised noise buffers from a seeded Generator', 'lambda returning lambda in __init__']},
    'RecurrentPolicy': {'dynamic': False, 'features': ['time loop with done masks', 'tensor state input']},
}
