"""Corpus (redraw, natives): Python and NumPy random draws in forward (augmentation jitter, layer
drop, random subsets of relations), natives run on constants (version strings parsed by a regular
expression), `zip(*map(f, ...))` (mmdet's multi_apply), packed sequences with lengths from
`tolist()`, and `torch.equal` in attention. The runner reseeds every generator before each call
with a seed of its own: a draw that only scales values, or a branch on one, is one record per
side (draws that choose the structure are in test_dynamic_random_draws.py)."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from functools import partial
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
patch_functional()

_VERSION = re.compile(r"^(\d+)\.(\d+)")


def _torch_at_least(major, minor):
    m = _VERSION.match(torch.__version__)
    return (int(m.group(1)), int(m.group(2))) >= (major, minor)


def multi_apply(func, *args, **kwargs):
    pfunc = partial(func, **kwargs) if kwargs else func
    map_results = map(pfunc, *args)
    return tuple(map(list, zip(*map_results)))


class RandomJitter(nn.Module):
    """Scales features by a random factor and flips them half of the time."""

    def __init__(self, dim, p=0.5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.p = p

    def forward(self, x):
        y = self.fc(x) * random.uniform(0.8, 1.2)
        if random.random() < self.p:
            y = y.flip(-1)
        return y + np.random.rand()


class VersionGated(nn.Module):
    """Chooses an activation by the installed torch version (a native regex on a constant)."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.fc(x)
        if _torch_at_least(1, 7):
            return F.silu(y)
        return y * torch.sigmoid(y)


class MultiLevelHead(nn.Module):
    """mmdet-style head applied to every level with multi_apply."""

    def __init__(self, channels):
        super().__init__()
        self.cls = nn.Conv2d(channels, 2, 1)
        self.reg = nn.Conv2d(channels, 4, 1)

    def forward_single(self, feat, scale):
        return self.cls(feat), self.reg(feat) * scale

    def forward(self, feat):
        feats = [feat, F.avg_pool2d(feat, 2)]
        return multi_apply(self.forward_single, feats, [1.0, 2.0])


class SortedPackedGRU(nn.Module):
    """Packs a batch by lengths read from a tensor (tolist), runs a GRU, pads back."""

    def __init__(self, dim, hidden=5):
        super().__init__()
        self.rnn = nn.GRU(dim, hidden, batch_first=True)

    def forward(self, x, lengths):
        lens, order = torch.sort(lengths, descending=True)
        packed = pack_padded_sequence(x[order], lens.tolist(), batch_first=True)
        out, h = self.rnn(packed)
        return pad_packed_sequence(out, batch_first=True)[0], h


class SelfAttentionCheck(nn.Module):
    """Takes the self-attention path when query, key and value are the same tensor."""

    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.q = nn.Linear(dim, dim)

    def forward(self, query, key):
        if torch.equal(query, key):
            q, k, v = self.qkv(query).chunk(3, -1)
        else:
            q, k, v = self.q(query), key, key
        return torch.softmax(q @ k.transpose(-1, -2), -1) @ v


TESTCASES = [
    (RandomJitter, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (VersionGated, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4])], {}), False),
    (MultiLevelHead, lambda: ([], {'channels': 3}), lambda: ([torch.rand([1, 3, 4, 4])], {}), False),
    (SortedPackedGRU, lambda: ([], {'dim': 3}), lambda: ([torch.rand([3, 5, 3]), torch.tensor([5, 2, 4])], {}), False),
    (SelfAttentionCheck, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 4]), torch.rand([2, 4])], {}), False),
]

EXPECTED = {
    'RandomJitter': {'dynamic': False, 'features': ['random.uniform/random.random drawn again', 'np.random.rand']},
    'VersionGated': {'dynamic': False, 'features': ['re.Pattern.match on torch.__version__']},
    'MultiLevelHead': {'dynamic': False, 'features': ['zip(*map(partial...))', 'multi_apply']},
    'SortedPackedGRU': {'dynamic': False, 'features': ['pack_padded_sequence(tolist lengths)', 'pad_packed_sequence']},
    'SelfAttentionCheck': {'dynamic': False, 'features': ['torch.equal branch']},
}
