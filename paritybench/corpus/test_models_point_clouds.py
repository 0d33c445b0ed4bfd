"""Corpus (point): point-cloud models: PointNet with a learned input transform, k-NN grouping by topk, farthest-point-free set abstraction."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class TNet(nn.Module):

    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Sequential(nn.Conv1d(k, 8, 1), nn.ReLU(), nn.Conv1d(8, 16, 1), nn.ReLU())
        self.fc = nn.Linear(16, k * k)

    def forward(self, x):
        feat = self.conv(x).max(2)[0]
        iden = torch.eye(self.k).flatten().unsqueeze(0)
        return (self.fc(feat) + iden).view(-1, self.k, self.k)


class PointNet(nn.Module):

    def __init__(self, classes=3):
        super().__init__()
        self.tnet = TNet()
        self.mlp = nn.Sequential(nn.Conv1d(3, 8, 1), nn.BatchNorm1d(8), nn.ReLU(), nn.Conv1d(8, 16, 1))
        self.head = nn.Linear(16, classes)

    def forward(self, pts):
        trans = self.tnet(pts)
        x = torch.bmm(trans, pts)
        return self.head(torch.max(self.mlp(x), 2, keepdim=False)[0]), trans


class KNNEdgeConv(nn.Module):

    def __init__(self, dim, out, k=3):
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Linear(dim * 2, out), nn.ReLU())

    def forward(self, x):
        dist = torch.cdist(x, x)
        idx = dist.topk(self.k, dim=-1, largest=False).indices
        b, n, d = x.shape
        neighbors = torch.gather(x.unsqueeze(1).expand(b, n, n, d), 2, idx.unsqueeze(-1).expand(-1, -1, -1, d))
        center = x.unsqueeze(2).expand_as(neighbors)
        return self.mlp(torch.cat([center, neighbors - center], -1)).max(2).values


TESTCASES = [
    (PointNet, lambda: ([], {}), lambda: ([torch.rand([2, 3, 10])], {}), False),
    (KNNEdgeConv, lambda: ([], {'dim': 3, 'out': 4}), lambda: ([torch.rand([2, 6, 3])], {}), False),
]

EXPECTED = {
    'PointNet': {'dynamic': False, 'features': ['max(dim)[0] indexing', 'bmm with a predicted transform', 'tuple output']},
    'KNNEdgeConv': {'dynamic': False, 'features': ['topk(largest=False).indices', 'gather with expanded indices']},
}
