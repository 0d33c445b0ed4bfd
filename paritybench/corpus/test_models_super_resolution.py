"""Corpus (super): super-resolution networks: residual-in-residual dense blocks with scaling, sub-pixel upsampling stacks, mean shift layers."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MeanShift(nn.Conv2d):

    def __init__(self, rgb_mean=(0.4488, 0.4371, 0.404), sign=-1):
        super().__init__(3, 3, 1)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1)
        self.bias.data = sign * torch.Tensor(rgb_mean)
        for p in self.parameters():
            p.requires_grad = False


class ResidualDenseBlock(nn.Module):

    def __init__(self, nf=4, gc=2):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(nf + i * gc, gc if i < 4 else nf, 3, padding=1) for i in range(5))

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            out = conv(torch.cat(feats, 1))
            if i < 4:
                feats.append(F.leaky_relu(out, 0.2))
        return out * 0.2 + x


class TinyEDSR(nn.Module):

    def __init__(self, nf=4, scale=4, blocks=2):
        super().__init__()
        self.sub_mean, self.add_mean = MeanShift(), MeanShift(sign=1)
        self.head = nn.Conv2d(3, nf, 3, padding=1)
        self.body = nn.Sequential(*[ResidualDenseBlock(nf) for _ in range(blocks)])
        up = []
        for _ in range(int(math.log(scale, 2))):
            up += [nn.Conv2d(nf, nf * 4, 3, padding=1), nn.PixelShuffle(2)]
        self.tail = nn.Sequential(*up, nn.Conv2d(nf, 3, 3, padding=1))

    def forward(self, x):
        x = self.head(self.sub_mean(x))
        return self.add_mean(self.tail(self.body(x) + x))


TESTCASES = [
    (TinyEDSR, lambda: ([], {}), lambda: ([torch.rand([1, 3, 4, 4])], {}), False),
    (ResidualDenseBlock, lambda: ([], {}), lambda: ([torch.rand([1, 4, 4, 4])], {}), False),
]

EXPECTED = {
    'TinyEDSR': {'dynamic': False, 'features': ['Conv2d subclass with fixed weights', 'torch.Tensor(tuple) in __init__', 'Sequential(*list, extra)']},
    'ResidualDenseBlock': {'dynamic': False, 'features': ['dense concatenation with conditional append']},
}
