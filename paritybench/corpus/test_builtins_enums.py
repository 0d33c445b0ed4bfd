"""Corpus (enums): enum.Enum configs: activation and pooling kinds, IntEnum axes, Enum members compared in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class Pool(enum.Enum):
    AVG = 'avg'
    MAX = 'max'
    BOTH = 'both'


class Axis(enum.IntEnum):
    BATCH = 0
    CHANNEL = 1
    HEIGHT = 2
    WIDTH = 3


class Act(enum.Enum):
    RELU = enum.auto()
    GELU = enum.auto()


class EnumPooling(nn.Module):

    def __init__(self, channels, pool=Pool.BOTH):
        super().__init__()
        self.pool = Pool(pool) if isinstance(pool, str) else pool
        self.fc = nn.Linear(channels * (2 if self.pool is Pool.BOTH else 1), channels)

    def forward(self, x):
        feats = []
        if self.pool in (Pool.AVG, Pool.BOTH):
            feats.append(x.mean((Axis.HEIGHT, Axis.WIDTH)))
        if self.pool in (Pool.MAX, Pool.BOTH):
            feats.append(x.amax(dim=(Axis.HEIGHT, Axis.WIDTH)))
        return self.fc(torch.cat(feats, Axis.CHANNEL))


class EnumActivation(nn.Module):

    def __init__(self, dim, act=Act.GELU):
        super().__init__()
        self.act = act
        self.fc = nn.Linear(dim, dim)
        self.table = {Act.RELU: F.relu, Act.GELU: F.gelu}

    def forward(self, x):
        return self.table[self.act](self.fc(x)), self.act.name.lower()


class IntEnumIndexing(nn.Module):

    def forward(self, boxes):
        class Coord(enum.IntEnum):
            X1 = 0
            Y1 = 1
            X2 = 2
            Y2 = 3
        w = boxes[:, Coord.X2] - boxes[:, Coord.X1]
        h = boxes[:, Coord.Y2] - boxes[:, Coord.Y1]
        return w * h, int(Coord.Y2) + len(Coord)


TESTCASES = [
    (EnumPooling, lambda: ([], {'channels': 3}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (EnumPooling, lambda: ([], {'channels': 3, 'pool': 'max'}), lambda: ([torch.rand([2, 3, 4, 4])], {}), False),
    (EnumActivation, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (IntEnumIndexing, lambda: ([], {}), lambda: ([torch.rand([5, 4])], {}), False),
]

EXPECTED = {
    'EnumPooling': {'dynamic': False, 'features': ['Enum membership test', 'IntEnum as dims']},
    'EnumPooling#1': {'dynamic': False, 'features': ['Enum built from its value', 'is comparison']},
    'EnumActivation': {'dynamic': False, 'features': ['dict keyed by Enum', 'member .name string output']},
    'IntEnumIndexing': {'dynamic': False, 'features': ['IntEnum class defined in forward', 'len(Enum)']},
}
