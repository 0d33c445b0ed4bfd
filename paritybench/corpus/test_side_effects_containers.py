"""Corpus (side effects): lists and dicts mutated in place, including containers passed in by the caller."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CollectIntoList(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(3))

    def forward(self, x, sink):
        for layer in self.layers:
            x = layer(x)
            sink.append(x.sum())
        sink.insert(0, x.mean())
        return x


class StateDictUpdate(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.enc = nn.Linear(dim, dim)

    def forward(self, batch):
        batch['features'] = self.enc(batch['image'])
        batch['num'] = batch.get('num', 0) + 1
        batch.pop('unused', None)
        return batch['features'].tanh()


class ListSurgery(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        feats = [x, self.fc(x), self.fc(x).relu()]
        last = feats.pop()
        feats.reverse()
        feats[1:1] = [last * 2]
        del feats[-1]
        feats.extend([last, last])
        feats.pop(-2)
        return torch.stack(feats), len(feats)


TESTCASES = [
    (CollectIntoList, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), []], {}), False),
    (StateDictUpdate, lambda: ([], {'dim': 4}), lambda: ([{'image': torch.rand([2, 4]), 'unused': 1}], {}), False),
    (ListSurgery, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'CollectIntoList': {'dynamic': False, 'features': ['append to caller list', 'list.insert']},
    'StateDictUpdate': {'dynamic': False, 'features': ['caller dict mutated', 'dict.get', 'dict.pop']},
    'ListSurgery': {'dynamic': False, 'features': ['list.pop/reverse/extend', 'slice assignment', 'del item']},
}
