"""Corpus (attention): attention variants: multi-query, linear (kernel) attention, local windowed attention, talking heads."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MultiQueryAttention(nn.Module):

    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * self.head_dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).unsqueeze(1).chunk(2, -1)
        attn = (q @ k.transpose(-1, -2)) * self.head_dim ** -0.5
        return self.out((attn.softmax(-1) @ v).transpose(1, 2).reshape(b, n, -1))


class LinearAttention(nn.Module):
    """Katharopoulos et al.: elu(x) + 1 feature map, O(n) in sequence length."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.eps = eps

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        q, k = F.elu(q) + 1, F.elu(k) + 1
        kv = torch.einsum('bnd,bne->bde', k, v)
        z = 1 / (torch.einsum('bnd,bd->bn', q, k.sum(1)) + self.eps)
        return torch.einsum('bnd,bde,bn->bne', q, kv, z)


class LocalWindowAttention(nn.Module):

    def __init__(self, dim, window=2):
        super().__init__()
        self.window = window
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        b, n, d = x.shape
        w = self.window
        q, k, v = (t.reshape(b, n // w, w, d) for t in self.qkv(x).chunk(3, -1))
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1)
        return (attn @ v).reshape(b, n, d)


class TalkingHeads(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.pre = nn.Parameter(torch.eye(heads) + 0.01)
        self.post = nn.Parameter(torch.eye(heads) + 0.01)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        logits = torch.einsum('bhid,bhjd->bhij', q, k) / math.sqrt(d // self.heads)
        logits = torch.einsum('bhij,hg->bgij', logits, self.pre)
        weights = torch.einsum('bhij,hg->bgij', logits.softmax(-1), self.post)
        return (weights @ v).transpose(1, 2).reshape(b, n, d)


TESTCASES = [
    (MultiQueryAttention, lambda: ([], {'dim': 8}), lambda: ([torch.rand([2, 5, 8])], {}), False),
    (LinearAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 6, 4])], {}), False),
    (LocalWindowAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 6, 4])], {}), False),
    (TalkingHeads, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
]

EXPECTED = {
    'MultiQueryAttention': {'dynamic': False, 'features': ['shared key/value head', 'broadcast matmul']},
    'LinearAttention': {'dynamic': False, 'features': ['three-operand einsum', 'elu feature map']},
    'LocalWindowAttention': {'dynamic': False, 'features': ['generator unpacking of reshaped chunks']},
    'TalkingHeads': {'dynamic': False, 'features': ['permute then unpack q, k, v', 'head-mixing einsum']},
}
