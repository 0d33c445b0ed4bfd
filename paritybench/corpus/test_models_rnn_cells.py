"""Corpus (rnn): RNN cells unrolled over a fixed length: hand-written LSTM and GRU cells, bidirectional scans, attention decoders."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class HandLSTMCell(nn.Module):

    def __init__(self, inp, hidden):
        super().__init__()
        self.ih = nn.Linear(inp, 4 * hidden)
        self.hh = nn.Linear(hidden, 4 * hidden, bias=False)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class UnrolledLSTM(nn.Module):

    def __init__(self, inp, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = HandLSTMCell(inp, hidden)

    def forward(self, seq):
        b, t, _ = seq.shape
        state = (seq.new_zeros(b, self.hidden), seq.new_zeros(b, self.hidden))
        outs = []
        for step in range(t):
            state = self.cell(seq[:, step], state)
            outs.append(state[0])
        return torch.stack(outs, 1), state


class BiGRUScan(nn.Module):

    def __init__(self, inp, hidden):
        super().__init__()
        self.fwd = nn.GRUCell(inp, hidden)
        self.bwd = nn.GRUCell(inp, hidden)
        self.hidden = hidden

    def forward(self, seq):
        b, t, _ = seq.shape
        hf = hb = torch.zeros(b, self.hidden)
        fwd_out, bwd_out = [], [None] * t
        for i in range(t):
            hf = self.fwd(seq[:, i], hf)
            fwd_out.append(hf)
        for i in reversed(range(t)):
            hb = self.bwd(seq[:, i], hb)
            bwd_out[i] = hb
        return torch.cat([torch.stack(fwd_out, 1), torch.stack(bwd_out, 1)], -1)


class AttentionDecoder(nn.Module):
    """Greedy-free decoder: teacher forcing over a fixed number of steps with Bahdanau attention."""

    def __init__(self, dim, vocab=6, steps=3):
        super().__init__()
        self.steps = steps
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim * 2, dim)
        self.score = nn.Linear(dim * 2, 1)
        self.out = nn.Linear(dim, vocab)

    def forward(self, memory, targets):
        h = memory.mean(1)
        logits = []
        for t in range(self.steps):
            e = self.score(torch.cat([memory, h.unsqueeze(1).expand_as(memory)], -1)).softmax(1)
            ctx = (e * memory).sum(1)
            h = self.cell(torch.cat([self.embed(targets[:, t]), ctx], -1), h)
            logits.append(self.out(h))
        return torch.stack(logits, 1)


TESTCASES = [
    (UnrolledLSTM, lambda: ([], {'inp': 3, 'hidden': 4}), lambda: ([torch.rand([2, 5, 3])], {}), False),
    (BiGRUScan, lambda: ([], {'inp': 3, 'hidden': 4}), lambda: ([torch.rand([2, 4, 3])], {}), False),
    (AttentionDecoder, lambda: ([], {'dim': 4}), lambda: ([torch.rand([2, 5, 4]), torch.randint(0, 6, [2, 3])], {}), False),
]

EXPECTED = {
    'UnrolledLSTM': {'dynamic': False, 'features': ['hand LSTM cell with chunk(4) unpacking', 'tuple state', 'new_zeros']},
    'BiGRUScan': {'dynamic': False, 'features': ['reversed(range) scan', 'list slot assignment', 'chained assignment']},
    'AttentionDecoder': {'dynamic': False, 'features': ['teacher-forced decoder loop', 'additive attention']},
}
