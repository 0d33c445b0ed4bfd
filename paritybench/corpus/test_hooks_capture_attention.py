"""Corpus (capture): forward hooks that capture attention maps and statistics from inside library modules, read after the inner call."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class AttentionRecorder(nn.Module):

    def __init__(self, dim, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(nn.MultiheadAttention(dim, 1, batch_first=True) for _ in range(layers))
        self.maps = []
        for layer in self.layers:
            layer.register_forward_hook(self._grab)

    def _grab(self, module, args, output):
        self.maps.append(output[1])

    def forward(self, x):
        self.maps = []
        for layer in self.layers:
            x = x + layer(x, x, x)[0]
        return x, torch.stack(self.maps, 1)


class ActivationStats(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1))
        self.stats = {}
        for name, m in self.body.named_children():
            if isinstance(m, nn.Conv2d):
                m.register_forward_hook(functools.partial(self._record, name))

    def _record(self, name, module, args, output):
        self.stats[name] = (output.mean(), output.std())

    def forward(self, x):
        y = self.body(x)
        return y, torch.stack([torch.stack(v) for _, v in sorted(self.stats.items())])


TESTCASES = [
    (AttentionRecorder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (ActivationStats, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4])], {}), False),
]

EXPECTED = {
    'AttentionRecorder': {'dynamic': False, 'features': ['forward hook appending to a list on self', 'hook reading output tuple']},
    'ActivationStats': {'dynamic': False, 'features': ['functools.partial hook with a name', 'tuple values in a dict on self']},
}
