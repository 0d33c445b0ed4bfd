"""Corpus (rnn): torch.nn.utils helpers: pad_sequence of lists, length masks for padded GRU outputs, parameters_to_vector."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence
from torch.nn.utils import parameters_to_vector
patch_functional()


class PadListInputs(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, a, b, c):
        padded = pad_sequence([a, b, c], batch_first=True)
        return self.fc(padded)


class MaskedGRUMean(nn.Module):
    """Runs a GRU over padded sequences and averages only the valid steps of each (lengths are static)."""

    def __init__(self, dim, lengths=(4, 3, 1)):
        super().__init__()
        self.lengths = list(lengths)
        self.gru = nn.GRU(dim, dim, batch_first=True)

    def forward(self, x):
        out, _ = self.gru(x)
        lengths = torch.tensor(self.lengths)
        mask = (torch.arange(x.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
        return (out * mask).sum(1) / lengths[:, None]


class ParamVectorNorm(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        vec = parameters_to_vector([self.fc.weight, self.fc.bias])
        return self.fc(x) / vec.norm()


TESTCASES = [
    (PadListInputs, lambda: ([], {'dim': 3}), lambda: ([torch.rand([4, 3]), torch.rand([2, 3]), torch.rand([3, 3])], {}), False),
    (MaskedGRUMean, lambda: ([], {'dim': 3}), lambda: ([torch.rand([3, 4, 3])], {}), False),
    (ParamVectorNorm, lambda: ([], {'dim': 3}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'PadListInputs': {'dynamic': False, 'features': ['pad_sequence of a list']},
    'MaskedGRUMean': {'dynamic': False, 'features': ['length mask from torch.tensor(list) and arange', 'masked mean']},
    'ParamVectorNorm': {'dynamic': False, 'features': ['parameters_to_vector of a parameter list']},
}
