"""Corpus (effects): teacher networks updated inside forward: EMA of parameters via zip(parameters), momentum encoders, copy_ under no_grad."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class MomentumEncoder(nn.Module):

    def __init__(self, dim, m=0.9):
        super().__init__()
        self.student = nn.Linear(dim, dim)
        self.teacher = nn.Linear(dim, dim)
        self.teacher.load_state_dict(self.student.state_dict())
        for p in self.teacher.parameters():
            p.requires_grad = False
        self.m = m

    def forward(self, x):
        with torch.no_grad():
            for ps, pt in zip([self.student.weight, self.student.bias], [self.teacher.weight, self.teacher.bias]):
                pt.mul_(self.m).add_(ps.detach(), alpha=1 - self.m)
        return F.cosine_similarity(self.student(x), self.teacher(x), dim=-1)


class CenteredTeacher(nn.Module):
    """DINO-style centering: a running center buffer updated from teacher outputs."""

    def __init__(self, dim, out=5, momentum=0.9):
        super().__init__()
        self.head = nn.Linear(dim, out)
        self.register_buffer('center', torch.zeros(1, out))
        self.momentum = momentum

    def forward(self, x, tau=0.1):
        t = self.head(x)
        probs = F.softmax((t - self.center) / tau, -1)
        self.center = self.center * self.momentum + t.mean(0, keepdim=True) * (1 - self.momentum)
        return probs


TESTCASES = [
    (MomentumEncoder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (CenteredTeacher, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4])], {}), False),
]

EXPECTED = {
    'MomentumEncoder': {'dynamic': False, 'features': ['parameter mul_/add_(alpha=) EMA', 'zip of parameter lists']},
    'CenteredTeacher': {'dynamic': False, 'features': ['buffer reassigned from an expression']},
}
