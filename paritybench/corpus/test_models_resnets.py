"""Corpus (resnets): ResNet family blocks: basic and bottleneck blocks with downsample shortcuts, stages built from a layer spec, pre-activation."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or cin != planes * self.expansion:
            self.downsample = nn.Sequential(nn.Conv2d(cin, planes * self.expansion, 1, stride, bias=False), nn.BatchNorm2d(planes * self.expansion))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + identity)


class Bottleneck(BasicBlock):
    expansion = 2

    def __init__(self, cin, planes, stride=1):
        super().__init__(cin, planes, stride)
        self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        return F.relu(self.bn3(self.conv3(out)) + identity)


class TinyResNet(nn.Module):

    def __init__(self, block=BasicBlock, layers=(1, 1), widths=(4, 8), classes=3):
        super().__init__()
        self.inplanes = widths[0]
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        self.stages = nn.Sequential(*[self._make_layer(block, w, n, 1 if i == 0 else 2) for i, (w, n) in enumerate(zip(widths, layers))])
        self.fc = nn.Linear(widths[-1] * block.expansion, classes)

    def _make_layer(self, block, planes, blocks, stride):
        layers = [block(self.inplanes, planes, stride)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class PreActBlock(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(channels), nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2, self.conv2 = nn.BatchNorm2d(channels), nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        return self.conv2(F.relu(self.bn2(out))) + x


TESTCASES = [
    (TinyResNet, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (TinyResNet, lambda: ([], {'block': Bottleneck, 'layers': (2, 1)}), lambda: ([torch.rand([1, 3, 8, 8])], {}), False),
    (PreActBlock, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
]

EXPECTED = {
    'TinyResNet': {'dynamic': False, 'features': ['_make_layer with self.inplanes side effect in __init__', 'optional downsample']},
    'TinyResNet#1': {'dynamic': False, 'features': ['Bottleneck subclass overriding forward', 'class attribute expansion']},
    'PreActBlock': {'dynamic': False, 'features': ['tuple attribute assignment']},
}
