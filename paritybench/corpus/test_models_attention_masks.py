"""Corpus (attention): attention with masks and biases: ALiBi slopes, key padding masks, relative position buckets, cross attention."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def alibi_slopes(heads):
    start = 2 ** (-8 / heads)
    return [start ** (i + 1) for i in range(heads)]


class AlibiAttention(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.register_buffer('slopes', torch.tensor(alibi_slopes(heads)).view(heads, 1, 1))

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(n)
        bias = -(pos[None, :] - pos[:, None]).abs().float() * self.slopes
        attn = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
        return (attn.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)


class PaddedCrossAttention(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, queries, memory, memory_padding):
        out, _ = self.attn(queries, memory, memory, key_padding_mask=memory_padding)
        return self.norm(queries + out)


class RelativeBuckets(nn.Module):

    def __init__(self, dim, buckets=8, max_distance=16):
        super().__init__()
        self.buckets, self.max_distance = buckets, max_distance
        self.bias = nn.Embedding(buckets, 1)
        self.qk = nn.Linear(dim, dim * 2)

    def bucket(self, rel):
        half = self.buckets // 2
        sign = (rel > 0).long() * half
        n = rel.abs()
        exact = half // 2
        large = exact + (torch.log(n.float().clamp(min=1) / exact) / math.log(self.max_distance / exact) * (half - exact)).long()
        return sign + torch.where(n < exact, n, large.clamp(max=half - 1))

    def forward(self, x):
        n = x.shape[1]
        rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
        q, k = self.qk(x).chunk(2, -1)
        return torch.softmax(q @ k.transpose(-1, -2) + self.bias(self.bucket(rel)).squeeze(-1), -1)


TESTCASES = [
    (AlibiAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (PaddedCrossAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4]), torch.rand([2, 5, 4]), torch.tensor([[False] * 4 + [True], [False] * 5])], {}), False),
    (RelativeBuckets, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 6, 4])], {}), False),
]

EXPECTED = {
    'AlibiAttention': {'dynamic': False, 'features': ['list comprehension slopes to buffer', 'generator unpacking', 'arange bias']},
    'PaddedCrossAttention': {'dynamic': False, 'features': ['MultiheadAttention key_padding_mask', 'boolean input']},
    'RelativeBuckets': {'dynamic': False, 'features': ['log-bucketed relative positions', 'torch.where', 'Embedding of indices']},
}
