"""Corpus (hypernetworks): hypernetworks and dynamic filters: weights predicted per sample and applied with bmm / grouped conv, FiLM from a task embedding."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class HyperLinear(nn.Module):

    def __init__(self, cond_dim, cin, cout):
        super().__init__()
        self.cin, self.cout = cin, cout
        self.gen_w = nn.Linear(cond_dim, cin * cout)
        self.gen_b = nn.Linear(cond_dim, cout)

    def forward(self, x, cond):
        w = self.gen_w(cond).view(-1, self.cout, self.cin)
        b = self.gen_b(cond).unsqueeze(-1)
        return (torch.bmm(w, x.unsqueeze(-1)) + b).squeeze(-1)


class DynamicFilter(nn.Module):
    """Per-sample 3x3 depthwise filters predicted from a global descriptor."""

    def __init__(self, channels):
        super().__init__()
        self.c = channels
        self.gen = nn.Linear(channels, channels * 9)

    def forward(self, x):
        b, c, h, w = x.shape
        k = self.gen(x.mean((2, 3))).view(b * c, 1, 3, 3).softmax(-1)
        y = F.conv2d(x.reshape(1, b * c, h, w), k, padding=1, groups=b * c)
        return y.view(b, c, h, w)


class TaskFiLM(nn.Module):

    def __init__(self, dim, tasks=3):
        super().__init__()
        self.task_embed = nn.Embedding(tasks, dim * 2)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, task_id):
        gamma, beta = self.task_embed(task_id).chunk(2, -1)
        return F.relu(self.fc(x)) * gamma + beta


TESTCASES = [
    (HyperLinear, lambda: ([2, 3, 4], {}), lambda: ([torch.rand([5, 3]), torch.rand([5, 2])], {}), False),
    (DynamicFilter, lambda: ([], {'channels': 2}), lambda: ([torch.rand([2, 2, 4, 4])], {}), False),
    (TaskFiLM, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.randint(0, 3, [3])], {}), False),
]

EXPECTED = {
    'HyperLinear': {'dynamic': False, 'features': ['predicted weights applied with bmm']},
    'DynamicFilter': {'dynamic': False, 'features': ['grouped conv over batch*channels', 'reshape(1, b*c, h, w)']},
    'TaskFiLM': {'dynamic': False, 'features': ['Embedding of task ids chunked into FiLM params']},
}
