"""Corpus (distributions): torch.distributions.Categorical and Bernoulli: policy heads with log_prob, entropy and probs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.distributions import Categorical, Bernoulli
patch_functional()


class DiscretePolicy(nn.Module):

    def __init__(self, obs, actions):
        super().__init__()
        self.logits = nn.Linear(obs, actions)

    def forward(self, obs, action):
        dist = Categorical(logits=self.logits(obs), validate_args=False)
        return dist.log_prob(action), dist.entropy(), dist.probs


class ActorCritic(nn.Module):

    def __init__(self, obs, actions):
        super().__init__()
        self.body = nn.Linear(obs, 8)
        self.pi = nn.Linear(8, actions)
        self.v = nn.Linear(8, 1)

    def forward(self, obs, action, advantage):
        h = torch.tanh(self.body(obs))
        dist = Categorical(probs=F.softmax(self.pi(h), -1), validate_args=False)
        policy_loss = -(dist.log_prob(action) * advantage).mean()
        return policy_loss - 0.01 * dist.entropy().mean(), self.v(h).squeeze(-1)


class BinaryGate(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Linear(dim, dim)

    def forward(self, x, decisions):
        dist = Bernoulli(logits=self.gate(x), validate_args=False)
        return dist.log_prob(decisions).sum(-1), dist.mean


TESTCASES = [
    (DiscretePolicy, lambda: ([], {'obs': 4, 'actions': 3}), lambda: ([torch.rand([5, 4]), torch.randint(0, 3, [5])], {}), False),
    (ActorCritic, lambda: ([], {'obs': 4, 'actions': 3}), lambda: ([torch.rand([5, 4]), torch.randint(0, 3, [5]), torch.randn([5])], {}), False),
    (BinaryGate, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3]), torch.randint(0, 2, [2, 3]).float()], {}), False),
]

EXPECTED = {
    'DiscretePolicy': {'dynamic': False, 'features': ['Categorical(logits=, validate_args=False)', 'log_prob', 'entropy', 'probs']},
    'ActorCritic': {'dynamic': False, 'features': ['Categorical(probs=)', 'policy-gradient loss']},
    'BinaryGate': {'dynamic': False, 'features': ['Bernoulli(logits=)', 'mean property']},
}
