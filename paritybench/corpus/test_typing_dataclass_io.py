"""Corpus (dataclass): dataclass and namedtuple values crossing the forward boundary: batch objects in, output records out."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from dataclasses import dataclass
from typing import NamedTuple
patch_functional()


@dataclass
class Batch:
    images: Tensor
    labels: Tensor
    weight: float = 1.0


class Prediction(NamedTuple):
    logits: Tensor
    loss: Tensor


@dataclass
class ModelOutput:
    hidden: Tensor
    pooled: Tensor
    attentions: tuple = ()

    def __getitem__(self, k):
        return getattr(self, k)


class BatchClassifier(nn.Module):

    def __init__(self, channels, classes=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, classes, 3, padding=1)

    def forward(self, batch: Batch) -> Prediction:
        logits = self.conv(batch.images).mean((2, 3))
        return Prediction(logits, F.cross_entropy(logits, batch.labels) * batch.weight)


class HFStyleEncoder(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.pool = nn.Linear(dim, dim)

    def forward(self, x):
        h = torch.tanh(self.layer(x))
        out = ModelOutput(hidden=h, pooled=self.pool(h[:, 0]))
        return out['pooled'], out.hidden, len(out.attentions)


TESTCASES = [
    (BatchClassifier, lambda: ([], {'channels': 2}), lambda: ([Batch(torch.rand([2, 2, 4, 4]), torch.tensor([0, 2]))], {}), False),
    (HFStyleEncoder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
]

EXPECTED = {
    'BatchClassifier': {'dynamic': False, 'features': ['dataclass input object', 'NamedTuple output']},
    'HFStyleEncoder': {'dynamic': False, 'features': ['dataclass output with __getitem__', 'field default ()']},
}
