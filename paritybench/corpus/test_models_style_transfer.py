"""Corpus (style): style-transfer pieces: Gram matrices, perceptual losses over feature lists, whitening-colouring by instance statistics."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def gram(x):
    b, c, h, w = x.shape
    f = x.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


class StyleLoss(nn.Module):

    def __init__(self, channels=3, layers=2):
        super().__init__()
        convs, c = [], channels
        for i in range(layers):
            convs.append(nn.Sequential(nn.Conv2d(c, 4 * (i + 1), 3, padding=1), nn.ReLU()))
            c = 4 * (i + 1)
        self.features = nn.ModuleList(convs)

    def forward(self, img, style):
        loss, content = 0.0, 0.0
        for layer in self.features:
            img, style = layer(img), layer(style)
            loss = loss + F.mse_loss(gram(img), gram(style))
            content = content + F.l1_loss(img, style)
        return loss, content


class StatsTransfer(nn.Module):

    def forward(self, content, style, eps=1e-5):
        cm, cs = content.mean((2, 3), keepdim=True), content.std((2, 3), keepdim=True) + eps
        sm, ss = style.mean((2, 3), keepdim=True), style.std((2, 3), keepdim=True) + eps
        return (content - cm) / cs * ss + sm


TESTCASES = [
    (StyleLoss, lambda: ([], {}), lambda: ([torch.rand([1, 3, 4, 4]), torch.rand([1, 3, 4, 4])], {}), False),
    (StatsTransfer, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4]), torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'StyleLoss': {'dynamic': False, 'features': ['float 0.0 accumulators', 'tuple reassignment', 'module-level gram helper']},
    'StatsTransfer': {'dynamic': False, 'features': ['keyword default eps in forward', 'tuple unpacking of statistics']},
}
