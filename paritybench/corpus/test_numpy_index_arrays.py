"""Corpus (index): indexing tensors with a module's numpy index arrays: channel shuffles, joint orders, fixed permutations."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class JointReorder(nn.Module):
    """Maps one skeleton's joint order to another's with a numpy permutation."""

    def __init__(self, joints=5):
        super().__init__()
        self.order = np.array([4, 2, 0, 1, 3])[:joints]
        self.fc = nn.Linear(joints * 2, joints * 2)

    def forward(self, pose):
        reordered = pose[:, self.order]
        return self.fc(reordered.flatten(1)).view_as(pose)


class NumpyChannelShuffle(nn.Module):

    def __init__(self, channels=6, groups=2):
        super().__init__()
        self.perm = np.arange(channels).reshape(groups, -1).T.reshape(-1)
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return self.conv(x[:, self.perm])


class FlipPairs(nn.Module):
    """Horizontal-flip test-time augmentation for keypoint heatmaps with left/right swaps."""

    def __init__(self, channels=4):
        super().__init__()
        pairs = np.array([[0, 1], [2, 3]])
        flip = np.arange(channels)
        flip[pairs[:, 0]], flip[pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
        self.flip_index = flip
        self.head = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        y = self.head(x)
        y_flip = self.head(x.flip(-1)).flip(-1)[:, self.flip_index]
        return (y + y_flip) / 2


TESTCASES = [
    (JointReorder, lambda: ([], {}), lambda: ([torch.rand([3, 5, 2])], {}), False),
    (NumpyChannelShuffle, lambda: ([], {}), lambda: ([torch.rand([1, 6, 3, 3])], {}), False),
    (FlipPairs, lambda: ([], {}), lambda: ([torch.rand([1, 4, 5, 5])], {}), False),
]

EXPECTED = {
    'JointReorder': {'dynamic': False, 'features': ['tensor indexed by a numpy int array']},
    'NumpyChannelShuffle': {'dynamic': False, 'features': ['numpy permutation from reshape/T', 'x[:, ndarray]']},
    'FlipPairs': {'dynamic': False, 'features': ['numpy flip index built in __init__', 'flip TTA']},
}
