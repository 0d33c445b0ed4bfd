"""Corpus (variable): Variable(t) from pre-0.4 code: wrapping inputs, fresh hidden states and constants inside forward."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.autograd import Variable
patch_functional()


class OldStyleRNN(nn.Module):

    def __init__(self, dim, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.LSTMCell(dim, hidden)

    def init_hidden(self, batch):
        return (Variable(torch.zeros(batch, self.hidden)), Variable(torch.zeros(batch, self.hidden)))

    def forward(self, seq):
        h, c = self.init_hidden(seq.size(0))
        for t in range(seq.size(1)):
            h, c = self.cell(seq[:, t], (h, c))
        return h


class VariableWrappedInput(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        x = Variable(x)
        noise_free = Variable(torch.ones(x.size()), requires_grad=False)
        return self.fc(x) * noise_free


class GridVariable(nn.Module):

    def __init__(self, size=4):
        super().__init__()
        self.size = size

    def forward(self, feat):
        theta = Variable(torch.Tensor([[1, 0, 0], [0, 1, 0]]).unsqueeze(0).repeat(feat.size(0), 1, 1))
        grid = F.affine_grid(theta, feat.size(), align_corners=False)
        return F.grid_sample(feat, grid, align_corners=False)


TESTCASES = [
    (OldStyleRNN, lambda: ([], {'dim': 3, 'hidden': 4}), lambda: ([torch.rand([2, 3, 3])], {}), False),
    (VariableWrappedInput, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (GridVariable, lambda: ([], {}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
]

EXPECTED = {
    'OldStyleRNN': {'dynamic': False, 'features': ['Variable(torch.zeros)', 'hidden-state helper method', 'LSTMCell loop']},
    'VariableWrappedInput': {'dynamic': False, 'features': ['Variable(input)', 'Variable(requires_grad=False)']},
    'GridVariable': {'dynamic': False, 'features': ['Variable(torch.Tensor(nested list))', 'affine_grid']},
}
