"""Corpus (warnings): warnings.warn in forward: deprecation notices and shape sanity warnings that do not change results."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class DeprecatedArgument(nn.Module):

    def __init__(self, dim, use_old_scaling=True):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.use_old_scaling = use_old_scaling

    def forward(self, x):
        if self.use_old_scaling:
            warnings.warn('use_old_scaling is deprecated and will be removed', DeprecationWarning)
            x = x * 0.5
        return self.fc(x)


class OddSizeWarning(nn.Module):

    def __init__(self, channels):
        super().__init__()
        self.down = nn.Conv2d(channels, channels, 2, stride=2)

    def forward(self, x):
        if x.shape[-1] % 2 == 1:
            warnings.warn(f'input width {x.shape[-1]} is odd; the last column is dropped')
        return self.down(x)


class UserWarningOnce(nn.Module):

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, mask=None):
        if mask is None:
            warnings.warn('no mask given, attending to every position', UserWarning, stacklevel=2)
            mask = torch.ones(x.shape[:2], dtype=torch.bool)
        return self.norm(x) * mask.unsqueeze(-1)


TESTCASES = [
    (DeprecatedArgument, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (OddSizeWarning, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 6, 7])], {}), False),
    (UserWarningOnce, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 3, 4])], {}), False),
]

EXPECTED = {
    'DeprecatedArgument': {'dynamic': False, 'features': ['warnings.warn(DeprecationWarning)', 'config branch']},
    'OddSizeWarning': {'dynamic': False, 'features': ['warnings.warn with f-string of a shape']},
    'UserWarningOnce': {'dynamic': False, 'features': ['warnings.warn(stacklevel=2)', 'Optional mask default']},
}
