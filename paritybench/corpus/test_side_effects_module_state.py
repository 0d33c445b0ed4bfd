"""Corpus (effects): Python state kept on the module across calls: cached masks keyed by size, stored last outputs, memory banks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CachedCausalMask(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)
        self._masks = {}

    def _mask(self, n):
        if n not in self._masks:
            self._masks[n] = torch.ones(n, n).tril().bool()
        return self._masks[n]

    def forward(self, x):
        q, k = self.qk(x).chunk(2, -1)
        s = q @ k.transpose(-1, -2)
        return s.masked_fill(~self._mask(x.shape[1]), float('-inf')).softmax(-1)


class MemoryBank(nn.Module):
    """Queue of past embeddings in a buffer (MoCo-style), written in place each call."""

    def __init__(self, dim, size=8, batch=2):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.register_buffer('queue', torch.zeros(size, dim))
        self.register_buffer('ptr', torch.zeros(1, dtype=torch.long))
        self.batch = batch

    def forward(self, x):
        k = F.normalize(self.enc(x), dim=-1)
        logits = k @ self.queue.t()
        self.queue = torch.cat([k.detach(), self.queue[:-x.shape[0]]], 0)
        return logits


class LastOutputDelta(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer('prev', torch.zeros(1, dim))

    def forward(self, x):
        y = self.fc(x)
        delta = y - self.prev
        self.prev.copy_(y.mean(0, keepdim=True).detach())
        return delta


TESTCASES = [
    (CachedCausalMask, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (MemoryBank, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (LastOutputDelta, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'CachedCausalMask': {'dynamic': False, 'features': ['dict cache on self keyed by length', 'masked_fill with ~mask']},
    'MemoryBank': {'dynamic': False, 'features': ['buffer reassigned with torch.cat', 'queue of detached keys']},
    'LastOutputDelta': {'dynamic': False, 'features': ['buffer copy_ of the last output']},
}
