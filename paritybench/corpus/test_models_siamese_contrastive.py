"""Corpus (siamese): metric learning: siamese encoders with shared weights, InfoNCE over a batch, triplet margins, ArcFace-style margins."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class SiameseEncoder(nn.Module):

    def __init__(self, dim, emb=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 8), nn.ReLU(), nn.Linear(8, emb))

    def forward(self, a, b):
        za, zb = (F.normalize(self.net(t), dim=-1) for t in (a, b))
        return F.pairwise_distance(za, zb), (za * zb).sum(-1)


class InfoNCE(nn.Module):

    def __init__(self, dim, temperature=0.1):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.t = temperature

    def forward(self, q, k):
        q, k = F.normalize(self.proj(q), dim=1), F.normalize(self.proj(k), dim=1)
        logits = q @ k.t() / self.t
        labels = torch.arange(q.shape[0])
        return F.cross_entropy(logits, labels), (logits.argmax(1) == labels).float().mean()


class ArcMarginHead(nn.Module):

    def __init__(self, dim, classes=4, s=8.0, m=0.3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, dim))
        self.s, self.cos_m, self.sin_m = s, math.cos(m), math.sin(m)

    def forward(self, x, labels):
        cosine = F.linear(F.normalize(x), F.normalize(self.weight)).clamp(-1 + 1e-7, 1 - 1e-7)
        sine = torch.sqrt(1.0 - cosine ** 2)
        phi = cosine * self.cos_m - sine * self.sin_m
        onehot = F.one_hot(labels, cosine.shape[1]).float()
        return self.s * (onehot * phi + (1 - onehot) * cosine)


class TripletLoss(nn.Module):

    def __init__(self, dim, margin=0.5):
        super().__init__()
        self.embed = nn.Linear(dim, dim)
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, pos, neg):
        return self.loss(*(self.embed(t) for t in (anchor, pos, neg)))


TESTCASES = [
    (SiameseEncoder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.rand([3, 4])], {}), False),
    (InfoNCE, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), torch.rand([5, 4])], {}), False),
    (ArcMarginHead, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3]), torch.randint(0, 4, [5])], {}), False),
    (TripletLoss, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.rand([3, 4]), torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'SiameseEncoder': {'dynamic': False, 'features': ['shared encoder via generator unpacking']},
    'InfoNCE': {'dynamic': False, 'features': ['arange labels from batch size', 'accuracy output']},
    'ArcMarginHead': {'dynamic': False, 'features': ['math.cos/sin margins in __init__', 'one_hot mixing']},
    'TripletLoss': {'dynamic': False, 'features': ['loss(*generator)']},
}
