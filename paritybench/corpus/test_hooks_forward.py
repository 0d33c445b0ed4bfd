"""Corpus (forward): forward hooks registered in __init__: output rescaling, feature capture into dicts, hooks on the module itself."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CaptureFeatures(nn.Module):
    """Keeps intermediate activations through forward hooks, as perceptual losses do."""

    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        self.features = {}
        for name in ('1', '3'):
            self.body[int(name)].register_forward_hook(self._save(name))

    def _save(self, name):
        def hook(module, inputs, output):
            self.features[name] = output
        return hook

    def forward(self, x):
        out = self.body(x)
        return out, sum(f.mean() for f in self.features.values())


class OutputScaleHook(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.fc.register_forward_hook(lambda m, i, o: o * 0.5)

    def forward(self, x):
        return self.fc(x) + x


class SelfHookedBlock(nn.Module):
    """A forward hook on the compiled module itself adds a residual connection."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_forward_hook(SelfHookedBlock._residual)

    @staticmethod
    def _residual(module, inputs, output):
        return output + inputs[0]

    def forward(self, x):
        return torch.tanh(self.fc(x))


class PreAndPost(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_forward_pre_hook(self._normalize)
        self.register_forward_hook(self._clamp)

    def _normalize(self, module, args):
        x, = args
        return (F.normalize(x, dim=-1),)

    def _clamp(self, module, args, output):
        return output.clamp(-0.5, 0.5)

    def forward(self, x):
        return self.fc(x)


TESTCASES = [
    (CaptureFeatures, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
    (OutputScaleHook, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (SelfHookedBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (PreAndPost, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'CaptureFeatures': {'dynamic': False, 'features': ['forward hooks writing a dict on self', 'closure factory hook']},
    'OutputScaleHook': {'dynamic': False, 'features': ['lambda forward hook replacing output']},
    'SelfHookedBlock': {'dynamic': False, 'features': ['forward hook on the compiled module itself', 'staticmethod hook']},
    'PreAndPost': {'dynamic': False, 'features': ['bound-method pre-hook and hook on self']},
}
