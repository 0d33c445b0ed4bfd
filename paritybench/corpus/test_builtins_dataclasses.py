"""Corpus (dataclasses): dataclass configs: fields with defaults, __post_init__ derived values, frozen configs, dataclasses.replace."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import dataclasses
from dataclasses import dataclass, field
patch_functional()


@dataclass
class BlockConfig:
    dim: int = 8
    expansion: int = 2
    dropout: float = 0.0
    activations: list = field(default_factory=lambda: ['gelu', 'relu'])

    def __post_init__(self):
        self.hidden = self.dim * self.expansion


@dataclass(frozen=True)
class HeadSpec:
    classes: int
    bias: bool = True
    temperature: float = 1.0


class ConfiguredMLP(nn.Module):

    def __init__(self, dim=4):
        super().__init__()
        self.cfg = BlockConfig(dim=dim)
        self.fc1 = nn.Linear(self.cfg.dim, self.cfg.hidden)
        self.fc2 = nn.Linear(self.cfg.hidden, self.cfg.dim)

    def forward(self, x):
        h = self.fc1(x)
        for name in self.cfg.activations:
            h = getattr(F, name)(h)
        return self.fc2(F.dropout(h, self.cfg.dropout, self.training))


class SpecHead(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.spec = HeadSpec(classes=3, temperature=2.0)
        self.fc = nn.Linear(dim, self.spec.classes, bias=self.spec.bias)

    def forward(self, x):
        sharper = dataclasses.replace(self.spec, temperature=self.spec.temperature / 2)
        logits = self.fc(x)
        return F.softmax(logits / self.spec.temperature, -1), F.softmax(logits / sharper.temperature, -1)


class AsDictSummary(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.cfg = BlockConfig(dim=dim, expansion=3)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        fields = dataclasses.asdict(self.cfg)
        scale = fields['expansion'] / len(fields['activations'])
        return self.fc(x) * scale, sorted(f.name for f in dataclasses.fields(self.cfg))


TESTCASES = [
    (ConfiguredMLP, lambda: ([], {}), lambda: ([torch.rand([2, 4])], {}), False),
    (SpecHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (AsDictSummary, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ConfiguredMLP': {'dynamic': False, 'features': ['@dataclass config', '__post_init__', 'getattr(F, name)']},
    'SpecHead': {'dynamic': False, 'features': ['frozen dataclass', 'dataclasses.replace in forward']},
    'AsDictSummary': {'dynamic': False, 'features': ['dataclasses.asdict', 'dataclasses.fields', 'list output of strings']},
}
