"""Corpus (abstract): abstract base classes for model families: abc.ABC with abstractmethod hooks, template-method forwards."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class BaseHead(nn.Module, abc.ABC):

    def __init__(self, dim):
        super().__init__()
        self.pre = nn.LayerNorm(dim)

    @abc.abstractmethod
    def predict(self, x):
        ...

    def postprocess(self, y):
        return y

    def forward(self, x):
        return self.postprocess(self.predict(self.pre(x)))


class ClassificationHead(BaseHead):

    def __init__(self, dim, classes=3):
        super().__init__(dim)
        self.fc = nn.Linear(dim, classes)

    def predict(self, x):
        return self.fc(x)

    def postprocess(self, y):
        return y.log_softmax(-1)


class RegressionHead(BaseHead):

    def __init__(self, dim):
        super().__init__(dim)
        self.fc = nn.Linear(dim, 1)

    def predict(self, x):
        return self.fc(x).squeeze(-1)


class Loss(abc.ABC):
    @abc.abstractmethod
    def __call__(self, pred, target):
        ...


class HuberLoss(Loss):
    def __init__(self, delta=0.5):
        self.delta = delta

    def __call__(self, pred, target):
        return F.huber_loss(pred, target, delta=self.delta)


class WithLossObject(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.head = RegressionHead(dim)
        self.loss = HuberLoss()

    def forward(self, x, target):
        pred = self.head(x)
        return self.loss(pred, target), isinstance(self.loss, Loss)


TESTCASES = [
    (ClassificationHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (RegressionHead, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (WithLossObject, lambda: ([], {'dim': 4}), lambda: ([torch.rand([3, 4]), torch.rand([3])], {}), False),
]

EXPECTED = {
    'ClassificationHead': {'dynamic': False, 'features': ['abc.ABC module base', 'template method overridden']},
    'RegressionHead': {'dynamic': False, 'features': ['abstractmethod implemented', 'inherited postprocess']},
    'WithLossObject': {'dynamic': False, 'features': ['callable ABC object', 'isinstance against an ABC']},
}
