"""Corpus (temporal): video models: (2+1)D factorised convolutions, temporal shift modules, frame-wise 2D backbones folded into the batch."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class R2Plus1D(nn.Module):

    def __init__(self, cin, cout, mid=None):
        super().__init__()
        mid = mid or (cin + cout) // 2
        self.spatial = nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1))
        self.temporal = nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0))
        self.bn = nn.BatchNorm3d(mid)

    def forward(self, x):
        return self.temporal(F.relu(self.bn(self.spatial(x))))


class TemporalShift(nn.Module):

    def __init__(self, channels, segments=4, fold_div=4):
        super().__init__()
        self.segments, self.fold = segments, channels // fold_div
        self.net = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        nt, c, h, w = x.shape
        x5 = x.view(nt // self.segments, self.segments, c, h, w)
        out = torch.zeros_like(x5)
        f = self.fold
        out[:, :-1, :f] = x5[:, 1:, :f]
        out[:, 1:, f:2 * f] = x5[:, :-1, f:2 * f]
        out[:, :, 2 * f:] = x5[:, :, 2 * f:]
        return self.net(out.view(nt, c, h, w))


class FrameBackbone(nn.Module):

    def __init__(self, channels=3, feat=4):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(channels, feat, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.temporal = nn.Conv1d(feat, feat, 3, padding=1)

    def forward(self, video):
        b, t = video.shape[:2]
        frames = self.cnn(video.flatten(0, 1)).view(b, t, -1)
        return self.temporal(frames.transpose(1, 2)).mean(-1)


TESTCASES = [
    (R2Plus1D, lambda: ([2, 3], {}), lambda: ([torch.rand([1, 2, 4, 5, 5])], {}), False),
    (TemporalShift, lambda: ([], {'channels': 4}), lambda: ([torch.rand([8, 4, 3, 3])], {}), False),
    (FrameBackbone, lambda: ([], {}), lambda: ([torch.rand([2, 3, 3, 4, 4])], {}), False),
]

EXPECTED = {
    'R2Plus1D': {'dynamic': False, 'features': ['Conv3d with tuple kernels', 'or-default size']},
    'TemporalShift': {'dynamic': False, 'features': ['slice assignments into zeros_like', 'view by segments']},
    'FrameBackbone': {'dynamic': False, 'features': ['flatten(0, 1) frames into batch', 'shape[:2] unpacking']},
}
