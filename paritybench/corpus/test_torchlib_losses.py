"""Corpus (losses): loss modules and functional losses combined in forward: label smoothing, KL distillation with temperature, Dice on soft masks, CTC-free sequence losses."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DistillationLoss(nn.Module):

    def __init__(self, dim, classes=4, T=2.0, alpha=0.5):
        super().__init__()
        self.student = nn.Linear(dim, classes)
        self.teacher = nn.Linear(dim, classes)
        self.kl = nn.KLDivLoss(reduction='batchmean')
        self.ce = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.T, self.alpha = T, alpha

    def forward(self, x, y):
        s, t = self.student(x), self.teacher(x).detach()
        soft = self.kl(F.log_softmax(s / self.T, -1), F.softmax(t / self.T, -1)) * self.T ** 2
        return self.alpha * soft + (1 - self.alpha) * self.ce(s, y)


class DiceBCE(nn.Module):

    def __init__(self, channels, smooth=1.0):
        super().__init__()
        self.head = nn.Conv2d(channels, 1, 1)
        self.bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
        self.smooth = smooth

    def forward(self, x, mask):
        logits = self.head(x)
        p = logits.sigmoid().flatten(1)
        m = mask.flatten(1)
        dice = 1 - (2 * (p * m).sum(1) + self.smooth) / (p.sum(1) + m.sum(1) + self.smooth)
        return dice.mean() + self.bce(logits, mask)


class SequenceNLL(nn.Module):

    def __init__(self, dim, vocab=5, pad=0):
        super().__init__()
        self.out = nn.Linear(dim, vocab)
        self.nll = nn.NLLLoss(ignore_index=pad, reduction='sum')
        self.pad = pad

    def forward(self, h, targets):
        logp = self.out(h).log_softmax(-1)
        tokens = (targets != self.pad).sum()
        return self.nll(logp.flatten(0, 1), targets.flatten()) / tokens


TESTCASES = [
    (DistillationLoss, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.randint(0, 4, [3])], {}), False),
    (DiceBCE, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 4, 4]), torch.randint(0, 2, [2, 1, 4, 4]).float()], {}), False),
    (SequenceNLL, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4]), torch.randint(0, 5, [2, 3])], {}), False),
]

EXPECTED = {
    'DistillationLoss': {'dynamic': False, 'features': ['KLDivLoss(batchmean)', 'CrossEntropyLoss(label_smoothing)', 'T ** 2']},
    'DiceBCE': {'dynamic': False, 'features': ['BCEWithLogitsLoss(pos_weight)', 'soft Dice']},
    'SequenceNLL': {'dynamic': False, 'features': ['NLLLoss(ignore_index) normalised by a token count tensor']},
}
