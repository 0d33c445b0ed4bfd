"""Corpus (gru): text classifiers: embedding + convolution over n-gram widths with max-over-time, attention pooling over GRU states, hierarchical pooling."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class TextCNN(nn.Module):

    def __init__(self, vocab=20, dim=4, widths=(2, 3, 4), filters=3, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, w) for w in widths)
        self.fc = nn.Linear(filters * len(widths), classes)

    def forward(self, tokens):
        e = self.embed(tokens).transpose(1, 2)
        pooled = [F.relu(conv(e)).max(dim=2)[0] for conv in self.convs]
        return self.fc(torch.cat(pooled, 1))


class AttentionPooledGRU(nn.Module):

    def __init__(self, vocab=20, dim=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.att = nn.Linear(2 * dim, 1, bias=False)

    def forward(self, tokens, mask):
        h, _ = self.gru(self.embed(tokens))
        scores = self.att(torch.tanh(h)).squeeze(-1).masked_fill(~mask, -1e9)
        alpha = scores.softmax(-1)
        return torch.bmm(alpha.unsqueeze(1), h).squeeze(1), alpha


class HierarchicalPool(nn.Module):
    """Words -> sentences -> document, with a fixed number of sentences per document."""

    def __init__(self, vocab=20, dim=4, sentences=2):
        super().__init__()
        self.sentences = sentences
        self.embed = nn.EmbeddingBag(vocab, dim, mode='max')
        self.doc = nn.Linear(dim, dim)

    def forward(self, tokens):
        b, n = tokens.shape
        words = tokens.view(b * self.sentences, n // self.sentences)
        sent = self.embed(words).view(b, self.sentences, -1)
        return self.doc(sent.mean(1))


TESTCASES = [
    (TextCNN, lambda: ([], {}), lambda: ([torch.randint(0, 20, [2, 7])], {}), False),
    (AttentionPooledGRU, lambda: ([], {}), lambda: ([torch.randint(0, 20, [2, 5]), torch.tensor([[True] * 5, [True] * 3 + [False] * 2])], {}), False),
    (HierarchicalPool, lambda: ([], {}), lambda: ([torch.randint(0, 20, [2, 6])], {}), False),
]

EXPECTED = {
    'TextCNN': {'dynamic': False, 'features': ['max(dim=2)[0] over conv widths', 'padding_idx']},
    'AttentionPooledGRU': {'dynamic': False, 'features': ['masked_fill(~mask)', 'bmm pooling', 'tuple output']},
    'HierarchicalPool': {'dynamic': False, 'features': ['EmbeddingBag(mode=max) without offsets', 'view arithmetic']},
}
