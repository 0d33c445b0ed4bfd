"""Corpus (detection): detection heads: anchor generation from feature sizes, box decoding, FCOS-style centerness and per-level scales."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Scale(nn.Module):

    def __init__(self, init=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(init))

    def forward(self, x):
        return x * self.scale


class FCOSHead(nn.Module):

    def __init__(self, channels, classes=3, levels=3, strides=(4, 8, 16)):
        super().__init__()
        self.strides = strides
        self.tower = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.GroupNorm(1, channels), nn.ReLU())
        self.cls = nn.Conv2d(channels, classes, 3, padding=1)
        self.reg = nn.Conv2d(channels, 4, 3, padding=1)
        self.ctr = nn.Conv2d(channels, 1, 3, padding=1)
        self.scales = nn.ModuleList(Scale() for _ in range(levels))

    def forward(self, feats):
        out = []
        for f, scale, stride in zip(feats, self.scales, self.strides):
            t = self.tower(f)
            out.append((self.cls(t), F.relu(scale(self.reg(t))) * stride, self.ctr(t)))
        return out


class AnchorDecoder(nn.Module):

    def __init__(self, channels, sizes=(8.0, 16.0), stride=4):
        super().__init__()
        self.sizes, self.stride = sizes, stride
        self.reg = nn.Conv2d(channels, 4 * len(sizes), 1)

    def anchors(self, h, w):
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
        centers = torch.stack([xs, ys], -1).float().add(0.5).mul(self.stride).view(-1, 1, 2)
        wh = torch.tensor(self.sizes).view(1, -1, 1).expand(1, -1, 2)
        return torch.cat([centers.expand(-1, len(self.sizes), -1), wh.expand(h * w, -1, -1)], -1).view(-1, 4)

    def forward(self, x):
        b, _, h, w = x.shape
        deltas = self.reg(x).permute(0, 2, 3, 1).reshape(b, -1, 4)
        a = self.anchors(h, w)
        ctr = a[:, :2] + deltas[..., :2] * a[:, 2:]
        size = a[:, 2:] * deltas[..., 2:].clamp(max=math.log(1000 / 16)).exp()
        return torch.cat([ctr - size / 2, ctr + size / 2], -1)


TESTCASES = [
    (FCOSHead, lambda: ([], {'channels': 2}), lambda: ([[torch.rand([1, 2, 8, 8]), torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 2, 2])]], {}), False),
    (AnchorDecoder, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 3, 4])], {}), False),
]

EXPECTED = {
    'FCOSHead': {'dynamic': False, 'features': ['zip over features, scales and strides', 'list of tuples output']},
    'AnchorDecoder': {'dynamic': False, 'features': ['anchors from feature size', 'meshgrid', 'torch.tensor(tuple) in forward']},
}
