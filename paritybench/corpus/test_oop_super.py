"""Corpus (oop): subclassing torch layers and calling super().forward (paper Fig. 3b, pablopp/pytorch-tools style)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class EqualLeakyReLU(nn.LeakyReLU):

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


class EqualLinear(nn.Linear):
    """Equalized learning rate: weights are rescaled at run time."""

    def __init__(self, in_features, out_features, lr_mul=0.5):
        super(EqualLinear, self).__init__(in_features, out_features)
        self.w_scale = lr_mul / math.sqrt(in_features)

    def forward(self, x):
        return F.linear(x, self.weight * self.w_scale, self.bias)


class MaskedConv2d(nn.Conv2d):
    """PixelCNN-style masked convolution; the mask is a buffer made in __init__."""

    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in {'A', 'B'}
        self.register_buffer('mask', self.weight.data.clone().fill_(1))
        _, _, kh, kw = self.weight.size()
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == 'B'):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


class ScaledSequential(nn.Sequential):

    def __init__(self, *layers, scale=0.5):
        super().__init__(*layers)
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale + x


TESTCASES = [
    (EqualLeakyReLU, lambda: ([], {'scale': 4}), lambda: ([torch.randn([4, 4, 4, 4])], {}), False),
    (EqualLinear, lambda: ([], {'in_features': 4, 'out_features': 4}), lambda: ([torch.rand([2, 4])], {}), True),
    (MaskedConv2d, lambda: (['B', 2, 2, 3], {'padding': 1}), lambda: ([torch.rand([1, 2, 5, 5])], {}), False),
    (ScaledSequential, lambda: ([nn.Linear(4, 4), nn.Tanh()], {}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'EqualLeakyReLU': {'dynamic': False, 'features': ['super().forward', 'subclass of torch layer']},
    'EqualLinear': {'dynamic': False, 'features': ['super(Class, self).__init__', 'weight scaling']},
    'MaskedConv2d': {'dynamic': False, 'features': ['*args/**kwargs to super', 'registered buffer', 'bool arithmetic in slice']},
    'ScaledSequential': {'dynamic': False, 'features': ['Sequential subclass', 'super().forward', 'keyword-only init arg']},
}
