"""Corpus (submodule): hooks on submodules set up in __init__: input normalisation pre-hooks, activation clamps, hooks with kwargs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class InputNormalizer:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, module, args):
        x = args[0]
        return ((x - self.mean) / self.std,) + tuple(args[1:])


class NormalizedBackbone(nn.Module):

    def __init__(self, channels=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(channels, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.backbone.register_forward_pre_hook(InputNormalizer(0.5, 0.25))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.backbone(x).flatten(1))


class ClampedActivations(nn.Module):

    def __init__(self, dim, depth=3, bound=0.8):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(dim, dim) for _ in range(depth)])
        for layer in self.layers:
            layer.register_forward_hook(lambda m, i, o, b=bound: o.clamp(-b, b))

    def forward(self, x):
        return self.layers(x)


class KwargsPreHook(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.inner = nn.MultiheadAttention(dim, 1, batch_first=True)
        self.inner.register_forward_pre_hook(self._no_weights, with_kwargs=True)

    @staticmethod
    def _no_weights(module, args, kwargs):
        kwargs['need_weights'] = False
        return args, kwargs

    def forward(self, x):
        out, weights = self.inner(x, x, x)
        return out, weights is None


TESTCASES = [
    (NormalizedBackbone, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (ClampedActivations, lambda: ([], {'dim': 4}), lambda: ([torch.randn([2, 4])], {}), False),
    (KwargsPreHook, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
]

EXPECTED = {
    'NormalizedBackbone': {'dynamic': False, 'features': ['callable-object pre-hook returning new args']},
    'ClampedActivations': {'dynamic': False, 'features': ['lambda hooks with default-bound closure']},
    'KwargsPreHook': {'dynamic': False, 'features': ['register_forward_pre_hook(with_kwargs=True)']},
}
