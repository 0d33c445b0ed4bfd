"""Corpus (generators): generator methods on modules: yielding (name, tensor) pairs, iterating stages lazily, generator pipelines consumed in forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class StagedEncoder(nn.Module):

    def __init__(self, channels, stages=3):
        super().__init__()
        self.stages = nn.ModuleList(nn.Conv2d(channels, channels, 3, 2, 1) for _ in range(stages))

    def iter_features(self, x):
        for i, stage in enumerate(self.stages):
            x = F.relu(stage(x))
            yield f'c{i + 2}', x

    def forward(self, x):
        return dict(self.iter_features(x))


class PipelineGenerators(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    @staticmethod
    def chunks(x, n):
        for i in range(0, x.shape[0], n):
            yield x[i:i + n]

    def forward(self, x):
        processed = (self.fc(c) for c in self.chunks(x, 2))
        normalized = (F.normalize(c, dim=-1) for c in processed)
        return torch.cat(list(normalized), 0)


class FirstMatching(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList([nn.Identity(), nn.Linear(dim, dim), nn.Linear(dim, 2)])

    def forward(self, x):
        first_linear = next(m for m in self.layers if isinstance(m, nn.Linear))
        last = next(reversed(self.layers))
        return last(first_linear(x)), next(iter(self.layers), None) is not None


TESTCASES = [
    (StagedEncoder, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 8, 8])], {}), False),
    (PipelineGenerators, lambda: ([], {'dim': 3}), lambda: ([torch.rand([5, 3])], {}), False),
    (FirstMatching, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'StagedEncoder': {'dynamic': False, 'features': ['generator method yielding pairs', 'dict(generator)']},
    'PipelineGenerators': {'dynamic': False, 'features': ['staticmethod generator', 'chained generator expressions']},
    'FirstMatching': {'dynamic': False, 'features': ['next(generator)', 'next(reversed(ModuleList))', 'next(iter(...), None)']},
}
