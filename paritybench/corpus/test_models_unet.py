"""Corpus (unet): a small U-Net: encoder skips kept in a list, decoder pops them, size-matched concatenation with F.pad."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DoubleConv(nn.Sequential):

    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Up(nn.Module):

    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = DoubleConv(cin, cout)

    def forward(self, x, skip):
        x = self.up(x)
        dy, dx = skip.size(2) - x.size(2), skip.size(3) - x.size(3)
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class TinyUNet(nn.Module):

    def __init__(self, channels=1, base=4, depth=2, classes=2):
        super().__init__()
        self.inc = DoubleConv(channels, base)
        self.downs = nn.ModuleList(DoubleConv(base * 2 ** i, base * 2 ** (i + 1)) for i in range(depth))
        self.ups = nn.ModuleList(Up(base * 2 ** (i + 1), base * 2 ** i) for i in reversed(range(depth)))
        self.head = nn.Conv2d(base, classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.head(x)


TESTCASES = [
    (TinyUNet, lambda: ([], {}), lambda: ([torch.rand([1, 1, 10, 10])], {}), False),
    (TinyUNet, lambda: ([], {'channels': 3, 'depth': 1}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (Up, lambda: ([8, 4], {}), lambda: ([torch.rand([1, 8, 3, 3]), torch.rand([1, 4, 7, 7])], {}), False),
]

EXPECTED = {
    'TinyUNet': {'dynamic': False, 'features': ['skip list append/pop', 'odd-size padding', 'Sequential subclass']},
    'TinyUNet#1': {'dynamic': False, 'features': ['config-driven depth']},
    'Up': {'dynamic': False, 'features': ['F.pad with size differences', 'ConvTranspose2d']},
}
