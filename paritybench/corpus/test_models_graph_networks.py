"""Corpus (graph): graph neural networks on dense adjacency: GCN normalisation, GAT attention, message passing with index_add."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DenseGCN(nn.Module):

    def __init__(self, dim, out):
        super().__init__()
        self.fc = nn.Linear(dim, out)

    def forward(self, x, adj):
        a = adj + torch.eye(adj.shape[-1])
        deg = a.sum(-1)
        d = deg.pow(-0.5)
        norm = d.unsqueeze(-1) * a * d.unsqueeze(-2)
        return torch.relu(norm @ self.fc(x))


class DenseGAT(nn.Module):

    def __init__(self, dim, out, heads=2):
        super().__init__()
        self.heads, self.out = heads, out
        self.fc = nn.Linear(dim, out * heads, bias=False)
        self.att_src = nn.Parameter(torch.randn(heads, out) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(heads, out) * 0.1)

    def forward(self, x, adj):
        n = x.shape[0]
        h = self.fc(x).view(n, self.heads, self.out)
        e = (h * self.att_src).sum(-1).t().unsqueeze(-1) + (h * self.att_dst).sum(-1).t().unsqueeze(1)
        e = F.leaky_relu(e, 0.2).masked_fill(adj.unsqueeze(0) == 0, float('-inf'))
        alpha = torch.softmax(e, -1)
        return torch.einsum('hij,jhd->ihd', alpha, h).reshape(n, -1)


class EdgeMessagePassing(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.msg = nn.Linear(dim * 2, dim)
        self.upd = nn.GRUCell(dim, dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = self.msg(torch.cat([x[src], x[dst]], -1))
        agg = torch.zeros_like(x).index_add_(0, dst, messages)
        return self.upd(agg, x)


def ring_adjacency(n):
    adj = torch.zeros(n, n)
    idx = torch.arange(n)
    adj[idx, (idx + 1) % n] = 1
    adj[(idx + 1) % n, idx] = 1
    return adj


TESTCASES = [
    (DenseGCN, lambda: ([], {'dim': 3, 'out': 4}), lambda: ([torch.rand([5, 3]), ring_adjacency(5)], {}), False),
    (DenseGAT, lambda: ([], {'dim': 3, 'out': 2}), lambda: ([torch.rand([5, 3]), ring_adjacency(5) + torch.eye(5)], {}), False),
    (EdgeMessagePassing, lambda: ([], {'dim': 3}), lambda: ([torch.rand([4, 3]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])], {}), False),
]

EXPECTED = {
    'DenseGCN': {'dynamic': False, 'features': ['symmetric normalisation', 'torch.eye from a shape']},
    'DenseGAT': {'dynamic': False, 'features': ['masked_fill(-inf) on adjacency', 'einsum aggregation']},
    'EdgeMessagePassing': {'dynamic': False, 'features': ['edge_index unpacking', 'gather by index', 'index_add_ on a fresh tensor']},
}
