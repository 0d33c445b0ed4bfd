"""Corpus (segmentation): segmentation heads: ASPP with image pooling, PSP pyramid pooling, FPN top-down fusion to a fixed output size."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class ASPP(nn.Module):

    def __init__(self, cin, cout, rates=(1, 2, 3)):
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(cin, cout, 1)] + [nn.Conv2d(cin, cout, 3, padding=r, dilation=r) for r in rates[1:]])
        self.image_pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, cout, 1), nn.ReLU())
        self.project = nn.Conv2d(cout * (len(rates) + 1), cout, 1)

    def forward(self, x):
        size = x.shape[-2:]
        feats = [F.relu(b(x)) for b in self.branches]
        feats.append(F.interpolate(self.image_pool(x), size=size, mode='bilinear', align_corners=False))
        return self.project(torch.cat(feats, 1))


class PyramidPooling(nn.Module):

    def __init__(self, channels, bins=(1, 2, 3)):
        super().__init__()
        self.stages = nn.ModuleList(nn.Sequential(nn.AdaptiveAvgPool2d(b), nn.Conv2d(channels, channels // len(bins), 1)) for b in bins)
        self.bottleneck = nn.Conv2d(channels + channels // len(bins) * len(bins), channels, 3, padding=1)

    def forward(self, x):
        h, w = x.size(2), x.size(3)
        priors = [F.interpolate(stage(x), size=(h, w), mode='bilinear', align_corners=True) for stage in self.stages] + [x]
        return self.bottleneck(torch.cat(priors, 1))


class SegmentationHead(nn.Module):

    def __init__(self, channels, classes=3, out_size=(8, 8)):
        super().__init__()
        self.out_size = out_size
        self.aspp = ASPP(channels, channels)
        self.cls = nn.Conv2d(channels, classes, 1)

    def forward(self, x):
        return F.interpolate(self.cls(self.aspp(x)), size=self.out_size, mode='bilinear', align_corners=False).argmax(1)


TESTCASES = [
    (ASPP, lambda: ([2, 4], {}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
    (PyramidPooling, lambda: ([], {'channels': 6}), lambda: ([torch.rand([1, 6, 6, 6])], {}), False),
    (SegmentationHead, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
]

EXPECTED = {
    'ASPP': {'dynamic': False, 'features': ['list + list comprehension of convs', 'image pooling branch']},
    'PyramidPooling': {'dynamic': False, 'features': ['AdaptiveAvgPool2d bins', 'list concatenation with [x]']},
    'SegmentationHead': {'dynamic': False, 'features': ['argmax integer output', 'tuple size attribute']},
}
