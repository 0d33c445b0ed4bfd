"""Corpus (deque): collections.deque: sliding windows of features, bounded histories built inside forward, rotate."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from collections import deque
patch_functional()


class SlidingWindowSum(nn.Module):
    """Keeps the last k frame features in a bounded deque while scanning the sequence."""

    def __init__(self, dim, window=3):
        super().__init__()
        self.window = window
        self.fc = nn.Linear(dim, dim)

    def forward(self, seq):
        recent = deque(maxlen=self.window)
        outs = []
        for t in range(seq.shape[1]):
            recent.append(self.fc(seq[:, t]))
            outs.append(torch.stack(list(recent)).mean(0))
        return torch.stack(outs, 1)


class RotatingExperts(nn.Module):

    def __init__(self, dim, n=3):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n))

    def forward(self, x):
        order = deque(range(len(self.experts)))
        order.rotate(1)
        for i in order:
            x = torch.tanh(self.experts[i](x))
        return x


class BreadthFirstTree(nn.Module):
    """Visits a small module tree breadth first with a deque queue."""

    def __init__(self, dim):
        super().__init__()
        self.root = nn.ModuleDict({
            'left': nn.ModuleDict({'leaf': nn.Linear(dim, dim)}),
            'right': nn.Linear(dim, dim),
        })

    def forward(self, x):
        queue = deque([self.root])
        while queue:
            node = queue.popleft()
            if isinstance(node, nn.ModuleDict):
                queue.extend(node.values())
            else:
                x = x + node(x)
        return x


TESTCASES = [
    (SlidingWindowSum, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4])], {}), False),
    (RotatingExperts, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (BreadthFirstTree, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'SlidingWindowSum': {'dynamic': False, 'features': ['deque(maxlen)', 'list(deque) of tensors']},
    'RotatingExperts': {'dynamic': False, 'features': ['deque.rotate', 'iteration over deque']},
    'BreadthFirstTree': {'dynamic': False, 'features': ['deque queue with popleft/extend', 'while over a container']},
}
