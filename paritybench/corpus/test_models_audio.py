"""Corpus (audio): audio models: dilated causal convolutions (WaveNet), gated activations, TCN blocks, frame-level MFCC-like features."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class CausalConv1d(nn.Conv1d):

    def __init__(self, cin, cout, kernel, dilation=1):
        super().__init__(cin, cout, kernel, dilation=dilation)
        self.left = (kernel - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class WaveNetBlock(nn.Module):

    def __init__(self, channels, dilations=(1, 2, 4)):
        super().__init__()
        self.filters = nn.ModuleList(CausalConv1d(channels, channels, 2, d) for d in dilations)
        self.gates = nn.ModuleList(CausalConv1d(channels, channels, 2, d) for d in dilations)
        self.res = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in dilations)

    def forward(self, x):
        skip = 0
        for f, g, r in zip(self.filters, self.gates, self.res):
            z = torch.tanh(f(x)) * torch.sigmoid(g(x))
            x = x + r(z)
            skip = skip + z
        return x, skip


class TemporalBlock(nn.Module):

    def __init__(self, cin, cout, dilation):
        super().__init__()
        self.net = nn.Sequential(CausalConv1d(cin, cout, 3, dilation), nn.ReLU(), CausalConv1d(cout, cout, 3, dilation), nn.ReLU())
        self.down = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return F.relu(self.net(x) + self.down(x))


class LogMelFrontEnd(nn.Module):
    """Framing, Hann window, |rfft|^2 and a fixed triangular filter bank."""

    def __init__(self, frame=16, hop=8, mels=4):
        super().__init__()
        self.frame, self.hop = frame, hop
        self.register_buffer('window', torch.hann_window(frame))
        bins = frame // 2 + 1
        centers = torch.linspace(0, bins - 1, mels + 2)
        grid = torch.arange(bins).float()
        fb = [torch.clamp(1 - (grid - centers[m + 1]).abs() / (centers[m + 1] - centers[m]), min=0) for m in range(mels)]
        self.register_buffer('fbank', torch.stack(fb))

    def forward(self, wav):
        frames = wav.unfold(-1, self.frame, self.hop) * self.window
        power = torch.fft.rfft(frames).abs().pow(2)
        return torch.log(power @ self.fbank.t() + 1e-6)


TESTCASES = [
    (WaveNetBlock, lambda: ([], {'channels': 2}), lambda: ([torch.rand([1, 2, 10])], {}), False),
    (TemporalBlock, lambda: ([2, 3, 2], {}), lambda: ([torch.rand([1, 2, 10])], {}), False),
    (LogMelFrontEnd, lambda: ([], {}), lambda: ([torch.rand([2, 64])], {}), False),
]

EXPECTED = {
    'WaveNetBlock': {'dynamic': False, 'features': ['Conv1d subclass with super().forward', 'zip over three ModuleLists', 'skip = 0 int start']},
    'TemporalBlock': {'dynamic': False, 'features': ['conditional Identity', 'causal padding']},
    'LogMelFrontEnd': {'dynamic': False, 'features': ['unfold framing', 'torch.fft.rfft', 'buffers built from a list']},
}
