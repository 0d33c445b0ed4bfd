"""Corpus (models): recurrent encoder-decoder pieces with fixed-length loops and attention."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class LSTMEncoder(nn.Module):

    def __init__(self, vocab=10, emb=4, hidden=6, bidirectional=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True, bidirectional=bidirectional)
        self.num_directions = 2 if bidirectional else 1

    def forward(self, tokens):
        out, (h, c) = self.rnn(self.embed(tokens))
        h = h.view(self.num_directions, -1, h.shape[-1])
        return out, torch.cat([h[i] for i in range(self.num_directions)], -1)


class AttnDecoder(nn.Module):

    def __init__(self, hidden=6, out_dim=5, steps=3):
        super().__init__()
        self.cell = nn.GRUCell(out_dim + hidden, hidden)
        self.attn = nn.Linear(hidden * 2, 1)
        self.out = nn.Linear(hidden, out_dim)
        self.steps = steps

    def forward(self, memory, h):
        y = memory.new_zeros(memory.shape[0], self.out.out_features)
        outputs = []
        for t in range(self.steps):
            scores = self.attn(torch.cat([memory, h.unsqueeze(1).expand_as(memory)], -1)).squeeze(-1)
            context = (scores.softmax(-1).unsqueeze(-1) * memory).sum(1)
            h = self.cell(torch.cat([y, context], -1), h)
            y = self.out(h)
            outputs.append(y)
        return torch.stack(outputs, 1)


TESTCASES = [
    (LSTMEncoder, lambda: ([], {}), lambda: ([torch.randint(0, 10, [2, 5])], {}), False),
    (AttnDecoder, lambda: ([], {}), lambda: ([torch.rand([2, 4, 6]), torch.rand([2, 6])], {}), False),
]

EXPECTED = {
    'LSTMEncoder': {'dynamic': False, 'features': ['nested tuple unpacking of LSTM state', 'list comprehension over range']},
    'AttnDecoder': {'dynamic': False, 'features': ['fixed-length Python loop', 'expand_as', 'new_zeros from module attribute']},
}
