"""Corpus (perceiver): latent-bottleneck models: Perceiver cross-attention into learned latents, Set Transformer pooling by multihead attention, slot attention with fixed iterations."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PerceiverBlock(nn.Module):

    def __init__(self, dim, latents=4):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim) * 0.1)
        self.cross = nn.MultiheadAttention(dim, 1, batch_first=True)
        self.self_attn = nn.TransformerEncoderLayer(dim, 2, dim * 2, dropout=0.0, batch_first=True)

    def forward(self, inputs):
        lat = self.latents.unsqueeze(0).expand(inputs.shape[0], -1, -1)
        lat = lat + self.cross(lat, inputs, inputs, need_weights=False)[0]
        return self.self_attn(lat)


class SlotAttention(nn.Module):

    def __init__(self, dim, slots=3, iters=2):
        super().__init__()
        self.slots, self.iters, self.scale = slots, iters, dim ** -0.5
        self.mu = nn.Parameter(torch.randn(1, 1, dim) * 0.1)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.gru = nn.GRUCell(dim, dim)
        self.norm_in, self.norm_slots = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, inputs):
        b, n, d = inputs.shape
        inputs = self.norm_in(inputs)
        k, v = self.k(inputs), self.v(inputs)
        slots = self.mu.expand(b, self.slots, -1)
        for _ in range(self.iters):
            q = self.q(self.norm_slots(slots))
            attn = torch.softmax(torch.einsum('bid,bjd->bij', q, k) * self.scale, dim=1) + 1e-8
            attn = attn / attn.sum(-1, keepdim=True)
            updates = torch.einsum('bij,bjd->bid', attn, v)
            slots = self.gru(updates.reshape(-1, d), slots.reshape(-1, d)).view(b, -1, d)
        return slots


class PoolingByAttention(nn.Module):

    def __init__(self, dim, seeds=2):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, seeds, dim))
        self.mab = nn.MultiheadAttention(dim, 2, batch_first=True)

    def forward(self, x, mask=None):
        s = self.seeds.repeat(x.shape[0], 1, 1)
        out, w = self.mab(s, x, x, key_padding_mask=mask)
        return out, w


TESTCASES = [
    (PerceiverBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 6, 4])], {}), False),
    (SlotAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (PoolingByAttention, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
]

EXPECTED = {
    'PerceiverBlock': {'dynamic': False, 'features': ['learned latents expanded per batch', 'cross attention with need_weights=False']},
    'SlotAttention': {'dynamic': False, 'features': ['fixed-iteration refinement loop', 'tuple attribute unpacking of Linear layers']},
    'PoolingByAttention': {'dynamic': False, 'features': ['seed vectors repeat', 'attention weights output']},
}
