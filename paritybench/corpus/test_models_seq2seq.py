"""Corpus (seq2seq): sequence models with nn.LSTM/GRU/Transformer modules: bidirectional encoders, state reshaping, causal decoders."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


class BiLSTMEncoder(nn.Module):

    def __init__(self, vocab=10, dim=4, hidden=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        h = h.view(2, 2, tokens.shape[0], -1)[-1]
        return out, torch.cat([h[0], h[1]], -1)


class GRUDecoderStep(nn.Module):

    def __init__(self, vocab=10, dim=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden.unsqueeze(0))
        return self.out(out).log_softmax(-1), hidden.squeeze(0)


class CausalTransformerLM(nn.Module):

    def __init__(self, vocab=12, dim=8, layers=2, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, 2, dim * 2, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(n)
        h = self.tok(tokens) + self.pos(torch.arange(n))
        return self.head(self.blocks(h, mask=mask, is_causal=True))


TESTCASES = [
    (BiLSTMEncoder, lambda: ([], {}), lambda: ([torch.randint(0, 10, [2, 5])], {}), False),
    (GRUDecoderStep, lambda: ([], {}), lambda: ([torch.randint(0, 10, [2, 1]), torch.rand([2, 4])], {}), False),
    (CausalTransformerLM, lambda: ([], {}), lambda: ([torch.randint(0, 12, [2, 6])], {}), False),
]

EXPECTED = {
    'BiLSTMEncoder': {'dynamic': False, 'features': ['nn.LSTM bidirectional', 'nested tuple unpacking', 'state view/index']},
    'GRUDecoderStep': {'dynamic': False, 'features': ['nn.GRU with an initial hidden state']},
    'CausalTransformerLM': {'dynamic': False, 'features': ['generate_square_subsequent_mask', 'tied weights', 'is_causal']},
}
