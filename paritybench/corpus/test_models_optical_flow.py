"""Corpus (optical): optical-flow and stereo pieces: local correlation cost volumes, flow warping with grid_sample, disparity regression."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LocalCorrelation(nn.Module):

    def __init__(self, radius=1):
        super().__init__()
        self.r = radius

    def forward(self, f1, f2):
        b, c, h, w = f1.shape
        f2p = F.pad(f2, [self.r] * 4)
        vols = []
        for dy in range(2 * self.r + 1):
            for dx in range(2 * self.r + 1):
                vols.append((f1 * f2p[:, :, dy:dy + h, dx:dx + w]).mean(1, keepdim=True))
        return torch.cat(vols, 1)


class FlowWarp(nn.Module):

    def forward(self, img, flow):
        b, _, h, w = img.shape
        ys, xs = torch.meshgrid(torch.arange(h, dtype=img.dtype), torch.arange(w, dtype=img.dtype), indexing='ij')
        gx = 2 * (xs + flow[:, 0]) / max(w - 1, 1) - 1
        gy = 2 * (ys + flow[:, 1]) / max(h - 1, 1) - 1
        return F.grid_sample(img, torch.stack((gx, gy), -1), align_corners=True)


class DisparityRegression(nn.Module):

    def __init__(self, channels, max_disp=4):
        super().__init__()
        self.max_disp = max_disp
        self.agg = nn.Conv3d(1, 1, 3, padding=1)

    def forward(self, left, right):
        b, c, h, w = left.shape
        cost = left.new_zeros(b, 1, self.max_disp, h, w)
        for d in range(self.max_disp):
            if d > 0:
                cost[:, 0, d, :, d:] = (left[..., d:] - right[..., :-d]).abs().mean(1)
            else:
                cost[:, 0, d] = (left - right).abs().mean(1)
        prob = F.softmax(-self.agg(cost).squeeze(1), 1)
        disp = torch.arange(self.max_disp, dtype=left.dtype).view(1, -1, 1, 1)
        return (prob * disp).sum(1)


TESTCASES = [
    (LocalCorrelation, lambda: ([], {}), lambda: ([torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 4, 4])], {}), False),
    (FlowWarp, lambda: ([], {}), lambda: ([torch.rand([1, 2, 4, 5]), torch.randn([1, 2, 4, 5])], {}), False),
    (DisparityRegression, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 3, 6]), torch.rand([1, 2, 3, 6])], {}), False),
]

EXPECTED = {
    'LocalCorrelation': {'dynamic': False, 'features': ['nested static loops building a cost volume', '[r] * 4 padding list']},
    'FlowWarp': {'dynamic': False, 'features': ['meshgrid + grid_sample warp', 'max() of Python sizes']},
    'DisparityRegression': {'dynamic': False, 'features': ['slice assignment per disparity', 'branch on the loop index']},
}
