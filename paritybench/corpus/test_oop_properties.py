"""Corpus (oop): properties, class attributes, classmethod and staticmethod in ResNet-style blocks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.downsample = None
        if inplanes != planes * Bottleneck.expansion:
            self.downsample = nn.Conv2d(inplanes, planes * self.expansion, 1, bias=False)

    @property
    def out_channels(self):
        return self.conv3.out_channels

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.conv1(x))
        out = F.relu(self.conv2(out))
        out = self.conv3(out)
        assert out.shape[1] == self.out_channels
        return F.relu(out + identity)


class Classifier(nn.Module):
    default_classes = 3

    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg.dim, cfg.get('classes', cls.default_classes))

    @staticmethod
    def temperature(logits, t=2.0):
        return logits / t

    @property
    def num_classes(self):
        return self.head.out_features

    def forward(self, x):
        return self.temperature(self.head(x)).softmax(-1) * self.num_classes


class Gain(nn.Module):

    def __init__(self, value=2.0):
        super().__init__()
        self._gain = value

    @property
    def gain(self):
        return self._gain

    @gain.setter
    def gain(self, value):
        self._gain = float(value)

    def forward(self, x):
        self.gain = 3
        return x * self.gain


class ConfiguredClassifier(Classifier):

    def __init__(self, cfg):
        built = Classifier.from_config(cfg)
        super().__init__(built.head.in_features, built.num_classes)


TESTCASES = [
    (Bottleneck, lambda: ([], {'inplanes': 4, 'planes': 2}), lambda: ([torch.rand([1, 4, 5, 5])], {}), True),
    (ConfiguredClassifier, lambda: ([_mock_config(dim=4)], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (Gain, lambda: ([], {}), lambda: ([torch.rand([3])], {}), False),
]

EXPECTED = {
    'Bottleneck': {'dynamic': False, 'features': ['class attribute', 'property', 'assert', 'Optional submodule']},
    'ConfiguredClassifier': {'dynamic': False, 'features': ['classmethod', 'staticmethod', 'property', 'config object']},
    'Gain': {'dynamic': False, 'features': ['property setter written in forward', 'float()']},
}
