"""Corpus (callable): plain Python objects with __call__ used inside forward: box coders, loss objects, activation objects holding parameters."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class BoxCoder:
    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0), clip=math.log(1000.0 / 16)):
        self.weights, self.clip = weights, clip

    def __call__(self, deltas, boxes):
        wx, wy, ww, wh = self.weights
        widths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        cx, cy = boxes[:, 0] + 0.5 * widths, boxes[:, 1] + 0.5 * heights
        dx, dy = deltas[:, 0] / wx, deltas[:, 1] / wy
        dw, dh = (deltas[:, 2] / ww).clamp(max=self.clip), (deltas[:, 3] / wh).clamp(max=self.clip)
        pcx, pcy = dx * widths + cx, dy * heights + cy
        pw, ph = torch.exp(dw) * widths, torch.exp(dh) * heights
        return torch.stack([pcx - pw / 2, pcy - ph / 2, pcx + pw / 2, pcy + ph / 2], 1)


class FocalLoss:
    def __init__(self, alpha=0.25, gamma=2.0):
        self.alpha, self.gamma = alpha, gamma

    def __call__(self, logits, targets):
        p = logits.sigmoid()
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction='none')
        pt = p * targets + (1 - p) * (1 - targets)
        w = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (w * ce * (1 - pt) ** self.gamma).mean()


class RegressionHead(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 4)
        self.coder = BoxCoder()

    def forward(self, feats, anchors):
        return self.coder(self.fc(feats), anchors)


class FocalHead(nn.Module):

    def __init__(self, dim, classes=3):
        super().__init__()
        self.fc = nn.Linear(dim, classes)
        self.loss = FocalLoss(gamma=1.5)

    def forward(self, x, targets):
        logits = self.fc(x)
        return self.loss(logits, targets), logits


def _anchors():
    xy = torch.rand([5, 2]) * 10
    return torch.cat([xy, xy + 1 + torch.rand([5, 2]) * 5], 1)


TESTCASES = [
    (RegressionHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), _anchors()], {}), False),
    (FocalHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4]), torch.randint(0, 2, [5, 3]).float()], {}), False),
]

EXPECTED = {
    'RegressionHead': {'dynamic': False, 'features': ['__call__ object with tuple unpacking of config', 'math.log default']},
    'FocalHead': {'dynamic': False, 'features': ['loss object with __call__']},
}
