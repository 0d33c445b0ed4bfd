"""Corpus (namedtuples): namedtuples: typing.NamedTuple and collections.namedtuple as outputs, configs and per-layer specs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from collections import namedtuple
from typing import NamedTuple
patch_functional()


LayerSpec = namedtuple('LayerSpec', ['out_channels', 'kernel', 'stride'])


class DetectionOutput(NamedTuple):
    boxes: Tensor
    scores: Tensor
    num_classes: int = 3


class SpecStack(nn.Module):

    def __init__(self, in_channels=2):
        super().__init__()
        specs = [LayerSpec(4, 3, 1), LayerSpec(8, 3, 2), LayerSpec(8, 1, 1)]
        layers = []
        for spec in specs:
            layers.append(nn.Conv2d(in_channels, spec.out_channels, spec.kernel, spec.stride, spec.kernel // 2))
            in_channels = spec.out_channels
        self.layers = nn.Sequential(*layers)
        self.specs = specs

    def forward(self, x):
        total_stride = math.prod(s.stride for s in self.specs)
        return self.layers(x), total_stride


class NamedDetections(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.box = nn.Linear(dim, 4)
        self.cls = nn.Linear(dim, 3)

    def forward(self, x):
        out = DetectionOutput(boxes=self.box(x).sigmoid(), scores=self.cls(x).softmax(-1))
        return out._replace(scores=out.scores * 2)


class UnpackNamed(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.head = NamedDetections(dim)

    def forward(self, x):
        boxes, scores, n = self.head(x)
        as_dict = self.head(x)._asdict()
        return boxes.sum(-1) + scores.max(-1).values / n + as_dict['boxes'].mean(-1)


TESTCASES = [
    (SpecStack, lambda: ([], {}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
    (NamedDetections, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4])], {}), False),
    (UnpackNamed, lambda: ([], {'dim': 4}), lambda: ([torch.rand([5, 4])], {}), False),
]

EXPECTED = {
    'SpecStack': {'dynamic': False, 'features': ['collections.namedtuple specs', 'math.prod over a generator']},
    'NamedDetections': {'dynamic': False, 'features': ['typing.NamedTuple output', '_replace']},
    'UnpackNamed': {'dynamic': False, 'features': ['NamedTuple unpacking', '_asdict']},
}
