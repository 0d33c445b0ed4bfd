"""Corpus (decoding): greedy decoding that stops on an end token, adaptive computation time halting, early exit on confidence."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class GreedyDecoder(nn.Module):

    def __init__(self, vocab=5, dim=4, eos=0, max_len=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.eos, self.max_len = eos, max_len

    def forward(self, h):
        token = torch.ones(h.shape[0], dtype=torch.long)
        tokens = []
        for _ in range(self.max_len):
            h = self.cell(self.embed(token), h)
            token = self.out(h).argmax(-1)
            tokens.append(token)
            if (token == self.eos).all():
                break
        return torch.stack(tokens, 1)


class ACTHalting(nn.Module):
    """Adaptive computation time: ponder steps until the halting probability passes 1 - eps."""

    def __init__(self, dim, max_steps=6, eps=0.01):
        super().__init__()
        self.step = nn.Linear(dim, dim)
        self.halt = nn.Linear(dim, 1)
        self.max_steps, self.eps = max_steps, eps

    def forward(self, x):
        total = torch.zeros(x.shape[0], 1)
        out = torch.zeros_like(x)
        n = 0
        while total.min() < 1 - self.eps and n < self.max_steps:
            x = torch.tanh(self.step(x))
            p = torch.sigmoid(self.halt(x))
            out = out + p * x
            total = total + p
            n += 1
        return out, n


class EarlyExitStack(nn.Module):

    def __init__(self, dim, depth=4, classes=3, threshold=0.5):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.exits = nn.ModuleList(nn.Linear(dim, classes) for _ in range(depth))
        self.threshold = threshold

    def forward(self, x):
        for depth, (block, exit_head) in enumerate(zip(self.blocks, self.exits)):
            x = torch.relu(block(x))
            logits = exit_head(x)
            if logits.softmax(-1).max(-1).values.min() > self.threshold:
                return logits, depth
        return logits, len(self.blocks)


TESTCASES = [
    (GreedyDecoder, lambda: ([], {}), lambda: ([torch.randn([2, 4])], {}), False),
    (ACTHalting, lambda: ([], {'dim': 4}), lambda: ([torch.randn([3, 4])], {}), False),
    (EarlyExitStack, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4]) * 2], {}), False),
]

EXPECTED = {
    'GreedyDecoder': {'dynamic': True, 'features': ['break on (token == eos).all()']},
    'ACTHalting': {'dynamic': True, 'features': ['while on a tensor min()', 'step counter output']},
    'EarlyExitStack': {'dynamic': True, 'features': ['return from inside a loop on confidence']},
}
