"""Corpus (dtype): numpy dtypes and conversions on static data: np.float32 arrays to tensors with dtype checks, int64 label maps, boolean numpy masks."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LabelRemap(nn.Module):
    """Maps dataset label ids to training ids with a numpy lookup table (Cityscapes-style)."""

    def __init__(self, classes=4):
        super().__init__()
        table = np.full(8, 255, dtype=np.int64)
        table[[1, 3, 5, 7]] = np.arange(classes)
        self.table = table
        self.head = nn.Conv2d(3, classes, 1)

    def forward(self, img, labels):
        lut = torch.from_numpy(self.table)
        train_ids = lut[labels]
        return F.cross_entropy(self.head(img), train_ids, ignore_index=255)


class NumpyBoolMask(nn.Module):

    def __init__(self, dim=6):
        super().__init__()
        self.keep = np.array([True, False, True, True, False, True])[:dim]
        self.fc = nn.Linear(int(self.keep.sum()), 2)

    def forward(self, x):
        return self.fc(x[:, torch.from_numpy(self.keep)])


class DtypeChecked(nn.Module):

    def __init__(self):
        super().__init__()
        self.weights = np.array([0.2, 0.3, 0.5], dtype=np.float64)

    def forward(self, x):
        w = self.weights.astype(np.float32) if self.weights.dtype != np.float32 else self.weights
        t = torch.as_tensor(w)
        return (x * t).sum(-1), str(w.dtype), t.dtype == torch.float32


TESTCASES = [
    (LabelRemap, lambda: ([], {}), lambda: ([torch.rand([2, 3, 4, 4]), torch.randint(0, 8, [2, 4, 4])], {}), False),
    (NumpyBoolMask, lambda: ([], {}), lambda: ([torch.rand([2, 6])], {}), False),
    (DtypeChecked, lambda: ([], {}), lambda: ([torch.rand([2, 3])], {}), False),
]

EXPECTED = {
    'LabelRemap': {'dynamic': False, 'features': ['numpy int64 lookup table to a tensor', 'ignore_index']},
    'NumpyBoolMask': {'dynamic': False, 'features': ['numpy bool mask converted for column selection']},
    'DtypeChecked': {'dynamic': False, 'features': ['ndarray.dtype comparison', 'str(dtype) output']},
}
