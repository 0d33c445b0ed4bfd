"""Corpus (parameter): nn.ParameterList / ParameterDict and ModuleDict: per-level weights, named experts, learnable mixing."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LevelWeights(nn.Module):
    """BiFPN-style fast normalized fusion with one ParameterList entry per node."""

    def __init__(self, channels, inputs=(2, 3)):
        super().__init__()
        self.weights = nn.ParameterList(nn.Parameter(torch.ones(n)) for n in inputs)
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 1) for _ in inputs)

    def forward(self, a, b, c):
        feats = [a, b, c]
        outs = []
        for w, conv in zip(self.weights, self.convs):
            w = F.relu(w)
            w = w / (w.sum() + 1e-4)
            outs.append(conv(sum(wi * f for wi, f in zip(w, feats))))
        return outs


class NamedScales(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.scales = nn.ParameterDict({'q': nn.Parameter(torch.ones(dim)), 'k': nn.Parameter(torch.ones(dim) * 2)})
        self.proj = nn.ModuleDict({'q': nn.Linear(dim, dim), 'k': nn.Linear(dim, dim)})

    def forward(self, x):
        q, k = (self.proj[n](x) * self.scales[n] for n in ('q', 'k'))
        return torch.softmax(q @ k.transpose(-1, -2), -1), sorted(self.scales.keys())


class ExpertDict(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.experts = nn.ModuleDict({name: nn.Linear(dim, dim) for name in ('vision', 'text', 'audio')})
        self.gates = nn.Parameter(torch.zeros(len(self.experts)))

    def forward(self, x):
        probs = torch.softmax(self.gates, 0)
        outs = [probs[i] * expert(x) for i, (name, expert) in enumerate(self.experts.items())]
        return torch.stack(outs).sum(0), 'text' in self.experts


TESTCASES = [
    (LevelWeights, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 4, 4]), torch.rand([1, 2, 4, 4])], {}), False),
    (NamedScales, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (ExpertDict, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'LevelWeights': {'dynamic': False, 'features': ['ParameterList iteration', 'zip(parameter, list)']},
    'NamedScales': {'dynamic': False, 'features': ['ParameterDict', 'ModuleDict', 'generator unpacking']},
    'ExpertDict': {'dynamic': False, 'features': ['ModuleDict.items()', 'in ModuleDict']},
}
