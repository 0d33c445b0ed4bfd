"""Corpus (moe): mixture-of-experts layers: soft routing, top-k gating with dense dispatch masks, load-balancing auxiliary loss."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SoftMoE(nn.Module):

    def __init__(self, dim, experts=3):
        super().__init__()
        self.gate = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim)) for _ in range(experts))

    def forward(self, x):
        weights = self.gate(x).softmax(-1)
        outs = torch.stack([e(x) for e in self.experts], -1)
        return (outs * weights.unsqueeze(-2)).sum(-1)


class TopKDenseMoE(nn.Module):
    """Top-k routing computed densely: every expert runs, a mask keeps the chosen ones."""

    def __init__(self, dim, experts=4, k=2):
        super().__init__()
        self.k = k
        self.router = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, dim, dim * 2) * 0.1)
        self.w2 = nn.Parameter(torch.randn(experts, dim * 2, dim) * 0.1)

    def forward(self, x):
        logits = self.router(x)
        topv, topi = logits.topk(self.k, -1)
        gates = torch.zeros_like(logits).scatter(-1, topi, topv.softmax(-1))
        h = F.silu(torch.einsum('td,edh->teh', x, self.w1))
        y = torch.einsum('teh,ehd->ted', h, self.w2)
        probs = logits.softmax(-1)
        aux = (probs.mean(0) * (gates > 0).float().mean(0)).sum() * logits.shape[-1]
        return (gates.unsqueeze(-1) * y).sum(1), aux


TESTCASES = [
    (SoftMoE, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (TopKDenseMoE, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4])], {}), False),
]

EXPECTED = {
    'SoftMoE': {'dynamic': False, 'features': ['stack of expert outputs', 'softmax gating']},
    'TopKDenseMoE': {'dynamic': False, 'features': ['topk + scatter gates', 'batched expert einsum', 'aux loss output']},
}
