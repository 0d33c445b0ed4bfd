"""Corpus (sampling): stochastic sampling read back into Python: multinomial tokens choosing embeddings by int, Gumbel choices, torch.randint loop lengths."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SampleNextToken(nn.Module):

    def __init__(self, vocab=6, dim=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, h):
        tokens = []
        for _ in range(3):
            probs = self.out(h).softmax(-1)
            tok = int(torch.multinomial(probs[0], 1))
            tokens.append(tok)
            h = h + self.embed.weight[tok]
        return h, tokens


class RandomLengthRollout(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cell = nn.GRUCell(dim, dim)

    def forward(self, x):
        steps = int(torch.randint(1, 5, ()))
        h = torch.zeros_like(x)
        for _ in range(steps):
            h = self.cell(x, h)
        return h


class GumbelRoute(nn.Module):

    def __init__(self, dim, paths=3):
        super().__init__()
        self.router = nn.Linear(dim, paths)
        self.paths = nn.ModuleList(nn.Linear(dim, dim) for _ in range(paths))

    def forward(self, x):
        choice = F.gumbel_softmax(self.router(x.mean(0)), tau=1.0, hard=True).argmax().item()
        return self.paths[choice](x)


TESTCASES = [
    (SampleNextToken, lambda: ([], {}), lambda: ([torch.rand([1, 4])], {}), False),
    (RandomLengthRollout, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3])], {}), False),
    (GumbelRoute, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'SampleNextToken': {'dynamic': True, 'features': ['int(torch.multinomial) indexes a weight', 'list of ints output']},
    'RandomLengthRollout': {'dynamic': True, 'features': ['int(torch.randint) loop length']},
    'GumbelRoute': {'dynamic': True, 'features': ['gumbel_softmax(...).argmax().item() picks a module']},
}
