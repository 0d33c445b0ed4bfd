"""Corpus (densenet): DenseNet-style connectivity: growing feature lists concatenated at every layer, transition layers, dense ASPP."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DenseLayer(nn.Module):

    def __init__(self, cin, growth):
        super().__init__()
        self.norm = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, growth, 3, padding=1)

    def forward(self, prev_features):
        x = torch.cat(prev_features, 1) if isinstance(prev_features, list) else prev_features
        return self.conv(F.relu(self.norm(x)))


class DenseBlock(nn.ModuleDict):

    def __init__(self, layers, cin, growth):
        super().__init__()
        for i in range(layers):
            self.add_module('denselayer%d' % (i + 1), DenseLayer(cin + i * growth, growth))

    def forward(self, x):
        features = [x]
        for name, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)


class Transition(nn.Sequential):

    def __init__(self, cin, cout):
        super().__init__()
        self.add_module('norm', nn.BatchNorm2d(cin))
        self.add_module('relu', nn.ReLU())
        self.add_module('conv', nn.Conv2d(cin, cout, 1))
        self.add_module('pool', nn.AvgPool2d(2))


class TinyDenseNet(nn.Module):

    def __init__(self, growth=2, blocks=(2, 2), init=4):
        super().__init__()
        layers = [nn.Conv2d(3, init, 3, padding=1)]
        c = init
        for i, n in enumerate(blocks):
            layers.append(DenseBlock(n, c, growth))
            c += n * growth
            if i != len(blocks) - 1:
                layers.append(Transition(c, c // 2))
                c //= 2
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(c, 3)

    def forward(self, x):
        return self.classifier(F.adaptive_avg_pool2d(F.relu(self.features(x)), (1, 1)).flatten(1))


class DenseASPP(nn.Module):

    def __init__(self, channels, rates=(1, 2, 3)):
        super().__init__()
        self.branches = nn.ModuleList(nn.Conv2d(channels * (i + 1), channels, 3, padding=r, dilation=r) for i, r in enumerate(rates))

    def forward(self, x):
        feats = x
        for branch in self.branches:
            feats = torch.cat([feats, branch(feats)], 1)
        return feats


TESTCASES = [
    (TinyDenseNet, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (DenseASPP, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 6])], {}), False),
]

EXPECTED = {
    'TinyDenseNet': {'dynamic': False, 'features': ['ModuleDict subclass forward over items()', 'add_module with % names', 'isinstance(list) dispatch']},
    'DenseASPP': {'dynamic': False, 'features': ['growing concatenation', 'dilated convs']},
}
