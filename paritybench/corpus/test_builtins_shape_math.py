"""Corpus (builtins): shape arithmetic with divmod, //, %, math.ceil and int() for padding (TF-style SAME conv)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def same_padding(size, kernel, stride, dilation=1):
    out = math.ceil(size / stride)
    pad = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return pad // 2, pad - pad // 2


class Conv2dSame(nn.Conv2d):

    def forward(self, x):
        ih, iw = x.size()[-2:]
        kh, kw = self.weight.size()[-2:]
        top, bottom = same_padding(ih, kh, self.stride[0], self.dilation[0])
        left, right = same_padding(iw, kw, self.stride[1], self.dilation[1])
        x = F.pad(x, [left, right, top, bottom])
        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class PatchEmbed(nn.Module):

    def __init__(self, channels=3, patch=4, dim=8):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(channels * patch * patch, dim)

    def forward(self, x):
        b, c, h, w = x.shape
        rows, rem_h = divmod(h, self.patch)
        cols, rem_w = divmod(w, self.patch)
        if rem_h or rem_w:
            x = F.pad(x, (0, (self.patch - rem_w) % self.patch, 0, (self.patch - rem_h) % self.patch))
            rows, cols = rows + (rem_h > 0), cols + (rem_w > 0)
        x = x.unfold(2, self.patch, self.patch).unfold(3, self.patch, self.patch)
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(b, rows * cols, -1)
        return self.proj(x)


class ScaledDotAttention(nn.Module):

    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.scale = int(dim // heads) ** -0.5

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        out = attn.softmax(-1) @ v
        return out.transpose(1, 2).reshape(b, n, round(d))


TESTCASES = [
    (Conv2dSame, lambda: ([], {'in_channels': 3, 'out_channels': 4, 'kernel_size': 3, 'stride': 2}), lambda: ([torch.rand([1, 3, 7, 9])], {}), False),
    (PatchEmbed, lambda: ([], {}), lambda: ([torch.rand([2, 3, 10, 8])], {}), False),
    (ScaledDotAttention, lambda: ([], {'dim': 8}), lambda: ([torch.rand([2, 5, 8])], {}), False),
]

EXPECTED = {
    'Conv2dSame': {'dynamic': False, 'features': ['math.ceil', 'max', '// and -', 'subclass of nn.Conv2d']},
    'PatchEmbed': {'dynamic': False, 'features': ['divmod', 'bool arithmetic', '% padding', 'Tensor.unfold']},
    'ScaledDotAttention': {'dynamic': False, 'features': ['int()', '** -0.5', 'round()', 'unpacking a tensor']},
}
