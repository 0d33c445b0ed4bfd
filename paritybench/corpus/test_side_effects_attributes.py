"""Corpus (side effects): forward writes attributes it later reads (paper Fig. 3c, DeBERTa XSoftmax style)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class XSoftmax(nn.Module):

    def forward(self, inp, mask, dim):
        self.dim = dim
        rmask = ~mask.bool()
        output = inp.masked_fill(rmask, -1e4)
        output = torch.softmax(output, self.dim)
        return output.masked_fill(rmask, 0)


class ShapeRecorder(nn.Module):
    """Keeps the last input shape and output statistics for debugging tools."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.last_shape = None
        self.last_output = None

    def forward(self, x):
        self.last_shape = tuple(x.shape)
        y = self.fc(x)
        self.last_output = y.detach()
        return y * len(self.last_shape)


class ModeSwitch(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.mode = 'init'

    def set_mode(self, mode):
        self.mode = mode

    def forward(self, x):
        self.set_mode('running')
        y = self.fc(x)
        if self.mode == 'running':
            y = y.relu()
        self.set_mode('idle')
        return y


TESTCASES = [
    (XSoftmax, lambda: ([], {}), lambda: ([torch.rand([2, 4, 4]), torch.rand([2, 4, 4]) > 0.3, -1], {}), False),
    (ShapeRecorder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (ModeSwitch, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'XSoftmax': {'dynamic': False, 'features': ['attribute written then read', 'int argument', 'bool mask input']},
    'ShapeRecorder': {'dynamic': False, 'features': ['tuple attribute write', 'tensor attribute write', 'len of attribute']},
    'ModeSwitch': {'dynamic': False, 'features': ['method writing attributes', 'string attribute read in branch']},
}
