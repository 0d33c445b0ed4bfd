"""Corpus (mixins): mixin classes adding behaviour to modules: init-weight mixins, feature-extraction mixins, cooperative super() chains with kwargs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class InitMixin:
    def init_weights(self, std=0.02):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=std)
                nn.init.zeros_(m.bias)


class FeatureMixin:
    feature_layers = ()

    def extract(self, x):
        feats = {}
        for name, module in self.named_children():
            x = module(x)
            if name in self.feature_layers:
                feats[name] = x
        return feats


class Base(nn.Module):

    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.dim = dim


class WithNorm(Base):

    def __init__(self, dim, eps=1e-5, **kwargs):
        super().__init__(dim, **kwargs)
        self.norm = nn.LayerNorm(dim, eps=eps)


class WithDropout(Base):

    def __init__(self, dim, p=0.0, **kwargs):
        super().__init__(dim, **kwargs)
        self.drop = nn.Dropout(p)


class CooperativeBlock(WithNorm, WithDropout):

    def __init__(self, dim):
        super().__init__(dim, eps=1e-6, p=0.1)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.drop(self.fc(self.norm(x)))


class FeatureNet(FeatureMixin, InitMixin, nn.Module):
    feature_layers = ('fc1', 'fc3')

    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.act = nn.ReLU()
        self.fc3 = nn.Linear(dim, dim)
        self.init_weights()

    def forward(self, x):
        feats = self.extract(x)
        return feats['fc3'] + feats['fc1'], list(feats)


TESTCASES = [
    (CooperativeBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (FeatureNet, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'CooperativeBlock': {'dynamic': False, 'features': ['diamond MRO with **kwargs super() chain']},
    'FeatureNet': {'dynamic': False, 'features': ['mixin methods walking named_children', 'class attribute tuple membership']},
}
