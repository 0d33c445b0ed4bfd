"""Corpus (models): compact transformer blocks (pre-norm encoder layer, GPT block, cross-attention)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PreNormEncoderLayer(nn.Module):

    def __init__(self, d_model=8, nhead=2, dim_ff=16, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d_model, dim_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(dim_ff, d_model))
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, src, key_padding_mask=None):
        x = self.norm1(src)
        attn, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        src = src + attn
        return src + self.ff(self.norm2(src))


class GPTBlock(nn.Module):

    def __init__(self, n_embd=8, n_head=2, block_size=16):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.ln_1 = nn.LayerNorm(n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd)))
        self.register_buffer('bias', torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.n_head, self.n_embd = n_head, n_embd

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.c_proj(F.gelu(m.c_fc(self.ln_2(x))))


class CrossAttention(nn.Module):

    def __init__(self, dim=8, context_dim=None, heads=2):
        super().__init__()
        context_dim = context_dim if context_dim is not None else dim
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_kv = nn.Linear(context_dim, dim * 2, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, context=None):
        context = x if context is None else context
        q = self.to_q(x)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        split = lambda t: t.reshape(*t.shape[:2], self.heads, -1).transpose(1, 2)
        q, k, v = map(split, (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(out.transpose(1, 2).flatten(2))


TESTCASES = [
    (PreNormEncoderLayer, lambda: ([], {}), lambda: ([torch.rand([2, 5, 8])], {}), False),
    (GPTBlock, lambda: ([], {}), lambda: ([torch.rand([2, 6, 8])], {}), False),
    (CrossAttention, lambda: ([], {'context_dim': 6}), lambda: ([torch.rand([2, 4, 8]), torch.rand([2, 3, 6])], {}), False),
    (CrossAttention, lambda: ([], {}), lambda: ([torch.rand([2, 4, 8])], {}), False),
]

EXPECTED = {
    'PreNormEncoderLayer': {'dynamic': False, 'features': ['nn.MultiheadAttention', 'Optional mask', 'tuple unpacking with _']},
    'GPTBlock': {'dynamic': False, 'features': ['ModuleDict with attribute access', 'split/view/transpose', 'causal mask buffer slice']},
    'CrossAttention': {'dynamic': False, 'features': ['lambda with star-shape', 'map over a tuple', 'sdpa']},
    'CrossAttention#3': {'dynamic': False, 'features': ['context defaults to x']},
}
