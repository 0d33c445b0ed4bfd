"""Corpus (anchor): numpy tables built in __init__ and used in forward: anchor boxes, colour matrices, DCT bases, lookup tables."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def dct_matrix(n):
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


class YOLOAnchors(nn.Module):

    def __init__(self, channels, anchors=((10, 13), (16, 30), (33, 23)), stride=8):
        super().__init__()
        self.anchors = np.array(anchors, dtype=np.float32) / stride
        self.na = len(anchors)
        self.conv = nn.Conv2d(channels, self.na * 5, 1)

    def forward(self, x):
        b, _, h, w = x.shape
        p = self.conv(x).view(b, self.na, 5, h, w).permute(0, 1, 3, 4, 2)
        anchor_wh = torch.from_numpy(self.anchors).view(1, self.na, 1, 1, 2)
        return torch.cat([p[..., :2].sigmoid(), p[..., 2:4].exp() * anchor_wh, p[..., 4:].sigmoid()], -1)


class RGBToYCbCr(nn.Module):

    def __init__(self):
        super().__init__()
        self.matrix = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], dtype=np.float32)
        self.shift = np.array([0.0, 0.5, 0.5], dtype=np.float32)

    def forward(self, img):
        m = torch.tensor(self.matrix)
        out = torch.einsum('ij,bjhw->bihw', m, img)
        return out + torch.tensor(self.shift).view(1, 3, 1, 1)


class DCTPooling(nn.Module):

    def __init__(self, n=4, keep=2):
        super().__init__()
        self.basis = dct_matrix(n).astype(np.float32)
        self.keep = keep

    def forward(self, x):
        d = torch.from_numpy(self.basis)
        coeffs = d @ x @ d.t()
        return coeffs[..., :self.keep, :self.keep]


TESTCASES = [
    (YOLOAnchors, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 3, 3])], {}), False),
    (RGBToYCbCr, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (DCTPooling, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'YOLOAnchors': {'dynamic': False, 'features': ['numpy anchors / stride', 'torch.from_numpy(...).view']},
    'RGBToYCbCr': {'dynamic': False, 'features': ['torch.tensor(numpy matrix) in forward', 'einsum']},
    'DCTPooling': {'dynamic': False, 'features': ['numpy DCT basis built by a helper', 'from_numpy matmul']},
}
