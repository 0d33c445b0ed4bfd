"""Corpus (dynamic): NumPy draws that choose the structure on every call (layers dropped at random,
a random subset of relation features): the mock draws them again, a new path is a new record."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LayerDrop(nn.Module):
    """Skips each layer with probability `drop`, as wav2vec-style adapters do in training."""

    def __init__(self, dim, layers=3, drop=0.3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.drop = drop

    def forward(self, x):
        for layer in self.layers:
            if np.random.random() > self.drop:
                x = torch.relu(layer(x))
        return x



class RandomRelations(nn.Module):
    """Fuses a random subset of relation features (np.random.choice without replacement)."""

    def __init__(self, dim, relations=4, keep=2):
        super().__init__()
        self.fc = nn.ModuleList(nn.Linear(dim, dim) for _ in range(relations))
        self.keep = keep

    def forward(self, x):
        out = 0
        for idx in np.random.choice(len(self.fc), self.keep, replace=False):
            out = out + self.fc[idx](x)
        return out



TESTCASES = [
    (LayerDrop, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
    (RandomRelations, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'LayerDrop': {'dynamic': True, 'features': ['np.random.random per layer chooses the path']},
    'RandomRelations': {'dynamic': True, 'features': ['np.random.choice array pinned: chooses the path']},
}
