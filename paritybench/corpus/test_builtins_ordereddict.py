"""Corpus (ordereddict): OrderedDict: Sequential built from ordered layer dicts, move_to_end, popitem and ordered outputs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from collections import OrderedDict
patch_functional()


class OrderedStack(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(OrderedDict([
            ('fc1', nn.Linear(dim, dim * 2)),
            ('act', nn.ReLU()),
            ('fc2', nn.Linear(dim * 2, dim)),
        ]))

    def forward(self, x):
        feats = OrderedDict()
        for name, layer in self.body.named_children():
            x = layer(x)
            feats[name] = x
        return feats


class PriorityHeads(nn.Module):
    """Heads kept in an OrderedDict; the preferred one is moved to the end and read last."""

    def __init__(self, dim):
        super().__init__()
        self.heads = nn.ModuleDict(OrderedDict((k, nn.Linear(dim, 2)) for k in ('a', 'b', 'c')))
        self.prefer = 'a'

    def forward(self, x):
        order = OrderedDict((k, None) for k in self.heads)
        order.move_to_end(self.prefer)
        last_key, _ = order.popitem()
        outs = [self.heads[k](x) for k in order]
        return torch.cat(outs, -1), self.heads[last_key](x)


class StateDictMix(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, dim)
        self.b = nn.Linear(dim, dim)

    def forward(self, x):
        weights = OrderedDict([('a', self.a.weight), ('b', self.b.weight)])
        mixed = sum(w for w in weights.values()) / len(weights)
        return F.linear(x, mixed), list(weights.keys())


TESTCASES = [
    (OrderedStack, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (PriorityHeads, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (StateDictMix, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'OrderedStack': {'dynamic': False, 'features': ['Sequential(OrderedDict)', 'named_children', 'OrderedDict output']},
    'PriorityHeads': {'dynamic': False, 'features': ['OrderedDict.move_to_end', 'popitem', 'ModuleDict(OrderedDict)']},
    'StateDictMix': {'dynamic': False, 'features': ['OrderedDict(pairs) of parameters', 'sum over values()']},
}
