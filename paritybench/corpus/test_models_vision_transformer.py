"""Corpus (vision): a tiny ViT and Mixer: patch embedding convs, class tokens, learned positions, token/channel mixing MLPs."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class PatchEmbedding(nn.Module):

    def __init__(self, channels, dim, patch):
        super().__init__()
        self.proj = nn.Conv2d(channels, dim, patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class TinyViT(nn.Module):

    def __init__(self, image=8, patch=4, channels=3, dim=8, depth=2, classes=3):
        super().__init__()
        self.embed = PatchEmbedding(channels, dim, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, 2, dim * 2, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        tokens = self.embed(img)
        tokens = torch.cat([self.cls.expand(tokens.shape[0], -1, -1), tokens], 1) + self.pos
        return self.head(self.encoder(tokens)[:, 0])


class MixerBlock(nn.Module):

    def __init__(self, tokens, dim, hidden=8):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, hidden), nn.GELU(), nn.Linear(hidden, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class TinyMixer(nn.Module):

    def __init__(self, image=8, patch=2, channels=3, dim=6, depth=2):
        super().__init__()
        self.embed = PatchEmbedding(channels, dim, patch)
        self.blocks = nn.Sequential(*[MixerBlock((image // patch) ** 2, dim) for _ in range(depth)])

    def forward(self, img):
        return self.blocks(self.embed(img)).mean(1)


TESTCASES = [
    (TinyViT, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
    (TinyMixer, lambda: ([], {}), lambda: ([torch.rand([2, 3, 8, 8])], {}), False),
]

EXPECTED = {
    'TinyViT': {'dynamic': False, 'features': ['TransformerEncoder (norm_first)', 'class token expand/cat', 'learned positions']},
    'TinyMixer': {'dynamic': False, 'features': ['token-mixing transposes', 'Sequential of blocks']},
}
