"""Corpus (models): small convolutional networks (ResNet stages, VAE with reparameterisation)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):

    def __init__(self, layers=(1, 1, 1), num_classes=3, width=4):
        super().__init__()
        self.inplanes = width
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.stages = nn.Sequential(*[self._make_layer(width * 2 ** i, n, stride=1 if i == 0 else 2) for i, n in enumerate(layers)])
        self.fc = nn.Linear(self.inplanes * BasicBlock.expansion, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class VAE(nn.Module):

    def __init__(self, in_dim=8, latent=2):
        super().__init__()
        self.enc = nn.Linear(in_dim, 6)
        self.mu = nn.Linear(6, latent)
        self.logvar = nn.Linear(6, latent)
        self.dec = nn.Sequential(nn.Linear(latent, 6), nn.ReLU(), nn.Linear(6, in_dim), nn.Sigmoid())

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        h = F.relu(self.enc(x.view(-1, self.enc.in_features)))
        mu, logvar = self.mu(h), self.logvar(h)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar


TESTCASES = [
    (BasicBlock, lambda: ([], {'inplanes': 4, 'planes': 4}), lambda: ([torch.rand([1, 4, 6, 6])], {}), True),
    (TinyResNet, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (VAE, lambda: ([], {}), lambda: ([torch.rand([2, 2, 4])], {}), False),
]

EXPECTED = {
    'BasicBlock': {'dynamic': False, 'features': ['Optional downsample', 'augmented assignment on a tensor', 'inplace ReLU']},
    'TinyResNet': {'dynamic': False, 'features': ['_make_layer builder', 'nested Sequential', 'class attribute via class name']},
    'VAE': {'dynamic': False, 'features': ['randn_like under a fixed seed', 'view(-1, in_features)', 'tuple output']},
}
