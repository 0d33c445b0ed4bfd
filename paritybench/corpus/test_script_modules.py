"""Corpus (static): TorchScript inside eager models: `torch.jit.ScriptModule` subclasses with
`script_method`s (RWKV-, simplerecon-, pydreamer-style), another script method called by name,
`torch.jit.script` of a submodule."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch import jit
patch_functional()

MyModule = torch.jit.ScriptModule
MyFunction = torch.jit.script_method


class ChannelMix(MyModule):

    def __init__(self, dim):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.mix_k = nn.Parameter(torch.full((1, 1, dim), 0.5))
        self.key = nn.Linear(dim, 4 * dim, bias=False)
        self.value = nn.Linear(4 * dim, dim, bias=False)

    @MyFunction
    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.mix_k + xx * (1 - self.mix_k)
        return self.value(torch.square(torch.relu(self.key(xk))))


class BackprojectDepth(jit.ScriptModule):

    def __init__(self, height: int, width: int):
        super().__init__()
        self.height = height
        self.width = width
        ys, xs = torch.meshgrid(torch.arange(height, dtype=torch.float), torch.arange(width, dtype=torch.float), indexing='ij')
        pix = torch.stack([xs.flatten(), ys.flatten(), torch.ones(height * width)], 0)
        self.register_buffer('pix_coords', pix.unsqueeze(0))

    @jit.script_method
    def forward(self, depth, inv_K):
        cam = torch.matmul(inv_K[:, :3, :3], self.pix_coords)
        return depth.view(depth.shape[0], 1, -1) * cam


class GRUCellBlock(nn.Module):
    """An eager model around a scripted cell, calling another script method by name."""

    def __init__(self, dim):
        super().__init__()
        self.cell = ScriptGRU(dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.out(h), self.cell.gate(x)


class ScriptGRU(jit.ScriptModule):

    def __init__(self, dim):
        super().__init__()
        self.ih = nn.Linear(dim, 3 * dim)
        self.hh = nn.Linear(dim, 3 * dim)

    @jit.script_method
    def gate(self, x):
        return torch.sigmoid(self.ih(x)).chunk(3, -1)[0]

    @jit.script_method
    def forward(self, x, h):
        r, z, n = (self.ih(x) + self.hh(h)).chunk(3, -1)
        return (1 - torch.sigmoid(z)) * torch.tanh(n) + torch.sigmoid(z) * h


class ScriptedHead(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.head = torch.jit.script(nn.Sequential(nn.ReLU(), nn.Linear(dim, 3)))

    def forward(self, x):
        return self.head(self.body(x))


TESTCASES = [
    (ChannelMix, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
    (BackprojectDepth, lambda: ([], {'height': 4, 'width': 4}), lambda: ([torch.rand([2, 1, 4, 4]), torch.rand([2, 4, 4])], {}), False),
    (GRUCellBlock, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
    (ScriptedHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'ChannelMix': {'dynamic': False, 'features': ['ScriptModule subclass', 'script_method forward']},
    'BackprojectDepth': {'dynamic': False, 'features': ['ScriptModule subclass', 'buffer read by TorchScript']},
    'GRUCellBlock': {'dynamic': False, 'features': ['scripted submodule', 'other script method called by name']},
    'ScriptedHead': {'dynamic': False, 'features': ['torch.jit.script of a submodule']},
}
