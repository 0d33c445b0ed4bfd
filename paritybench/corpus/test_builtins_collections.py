"""Corpus (builtins): collections and dataclasses as outputs and configs (OrderedDict, namedtuple, defaultdict, deque)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()

from collections import OrderedDict, defaultdict, deque, namedtuple
from dataclasses import dataclass

DetectionOutput = namedtuple('DetectionOutput', ['boxes', 'scores', 'num_levels'])


class DetectionHead(nn.Module):

    def __init__(self, channels=4, levels=2):
        super().__init__()
        self.box = nn.Conv2d(channels, 4, 1)
        self.cls = nn.Conv2d(channels, 2, 1)
        self.levels = levels

    def forward(self, x):
        boxes, scores = [], []
        for _ in range(self.levels):
            boxes.append(self.box(x).flatten(2))
            scores.append(self.cls(x).flatten(2).sigmoid())
            x = F.avg_pool2d(x, 2)
        return DetectionOutput(torch.cat(boxes, -1), torch.cat(scores, -1), self.levels)


class OrderedStages(nn.Module):

    def __init__(self, dim=4):
        super().__init__()
        self.stages = nn.Sequential(OrderedDict([('fc1', nn.Linear(dim, dim)), ('act', nn.ReLU()), ('fc2', nn.Linear(dim, 2))]))

    def forward(self, x):
        feats = OrderedDict()
        for name, layer in self.stages.named_children():
            x = layer(x)
            feats[name] = x
        feats.move_to_end('fc1')
        return feats


class GroupedPooling(nn.Module):

    def __init__(self, groups=('a', 'b', 'a', 'c', 'b')):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        buckets = defaultdict(list)
        for tag, chunk in zip(self.groups, x.unbind(1)):
            buckets[tag].append(chunk)
        return {k: torch.stack(v, 1).mean(1) for k, v in sorted(buckets.items())}


class SlidingHistory(nn.Module):
    """Mixes the last few intermediate states, kept in a bounded deque inside forward."""

    def __init__(self, dim, steps=5, keep=3):
        super().__init__()
        self.cell = nn.Linear(dim, dim)
        self.steps, self.keep = steps, keep

    def forward(self, x):
        history = deque(maxlen=self.keep)
        for _ in range(self.steps):
            x = torch.tanh(self.cell(x))
            history.append(x)
        return torch.stack(list(history)).mean(0)


@dataclass
class BlockConfig:
    dim: int = 4
    hidden_ratio: float = 2.0
    dropout: float = 0.0

    @property
    def hidden(self):
        return int(self.dim * self.hidden_ratio)


class ConfiguredMLP(nn.Module):

    def __init__(self, dim=4):
        super().__init__()
        self.cfg = BlockConfig(dim=dim)
        self.fc1 = nn.Linear(self.cfg.dim, self.cfg.hidden)
        self.fc2 = nn.Linear(self.cfg.hidden, self.cfg.dim)

    def forward(self, x):
        return x + F.dropout(self.fc2(F.gelu(self.fc1(x))), self.cfg.dropout, self.training)


TESTCASES = [
    (DetectionHead, lambda: ([], {}), lambda: ([torch.rand([1, 4, 4, 4])], {}), False),
    (OrderedStages, lambda: ([], {}), lambda: ([torch.rand([3, 4])], {}), False),
    (GroupedPooling, lambda: ([], {}), lambda: ([torch.rand([2, 5, 3])], {}), False),
    (SlidingHistory, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ConfiguredMLP, lambda: ([], {}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'DetectionHead': {'dynamic': False, 'features': ['namedtuple output', 'list append in loop']},
    'OrderedStages': {'dynamic': False, 'features': ['OrderedDict', 'named_children', 'OrderedDict.move_to_end']},
    'GroupedPooling': {'dynamic': False, 'features': ['defaultdict(list)', 'zip with unbind', 'dict output']},
    'SlidingHistory': {'dynamic': False, 'features': ['collections.deque(maxlen)', 'list(deque)']},
    'ConfiguredMLP': {'dynamic': False, 'features': ['dataclass config', 'property on dataclass', 'self.training']},
}
