"""A 10-layer LSTM with hidden size 256 whose loops run in Python (paper Fig. 18, ``LSTM``).

Written the way PyTorch's own benchmark of custom RNNs writes it (``custom_lstms.py`` in
pytorch/benchmarks/fastrnns): an ``LSTMCell`` made of tensor ops (two ``mm``, ``chunk``,
``sigmoid``/``tanh``), an ``LSTMLayer`` that ``unbind``s the sequence and loops over time steps in
Python, accumulating outputs with ``outputs += [out]`` before ``torch.stack``, and a
``StackedLSTM`` that loops over layers with a hand-kept index into a list of ``LSTMState``
namedtuples. The number of iterations of the time loop is the input's sequence length, so inputs
of different lengths run different paths (the dynamic control flow of §8.5).

Input: ``(x [T, B, 256], states)`` where ``states`` is a list of one ``LSTMState(hx, cx)`` per
layer; output: ``(y [T, B, 256], new_states)``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import torch
import torch.nn as nn
from torch.nn import Parameter

from models._common import (
    check_batch_size,
    check_count,
    check_kind,
    check_size,
    generator,
    seeded,
    uniform_ints,
)

__all__ = ["LSTMState", "LSTMCell", "LSTMLayer", "StackedLSTM", "lstm", "get_model", "get_input",
           "get_dynamic_inputs"]

DYNAMIC_KINDS = ("seqlen",)

LSTMState = namedtuple('LSTMState', ['hx', 'cx'])


class LSTMCell(nn.Module):
    """One LSTM step: gates from the input and the previous hidden state, new (h, c)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        # nn.LSTM's initialisation, U(-1/sqrt(hidden), 1/sqrt(hidden)): with unit-variance weights
        # the 10-layer recurrence over 128 steps is chaotic, and any compiler's reordering of
        # floating-point sums would change its output beyond every tolerance.
        k = hidden_size ** -0.5
        self.weight_ih = Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.weight_hh = Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.bias_ih = Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.bias_hh = Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, input, state):
        hx, cx = state
        gates = (torch.mm(input, self.weight_ih.t()) + self.bias_ih
                 + torch.mm(hx, self.weight_hh.t()) + self.bias_hh)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)

        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)

        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)

        return hy, (hy, cy)


class LSTMLayer(nn.Module):
    """Runs ``cell`` over the time steps of the input, in a Python loop."""

    def __init__(self, cell, *cell_args):
        super().__init__()
        self.cell = cell(*cell_args)

    def forward(self, input, state):
        inputs = input.unbind(0)
        outputs = []
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return torch.stack(outputs), state


def init_stacked_lstm(num_layers, layer, first_layer_args, other_layer_args):
    layers = [layer(*first_layer_args)] + [layer(*other_layer_args)
                                           for _ in range(num_layers - 1)]
    return nn.ModuleList(layers)


class StackedLSTM(nn.Module):
    """``num_layers`` LSTM layers, each fed with the previous one's output sequence."""

    def __init__(self, num_layers, layer, first_layer_args, other_layer_args):
        super().__init__()
        self.layers = init_stacked_lstm(num_layers, layer, first_layer_args,
                                        other_layer_args)

    def forward(self, input, states):
        output_states = []
        output = input
        i = 0
        for rnn_layer in self.layers:
            state = states[i]
            output, out_state = rnn_layer(output, state)
            output_states += [out_state]
            i += 1
        return output, output_states


def lstm(input_size, hidden_size, num_layers):
    """A ``StackedLSTM`` of ``LSTMLayer``s over ``LSTMCell``s."""
    return StackedLSTM(num_layers, LSTMLayer,
                       first_layer_args=[LSTMCell, input_size, hidden_size],
                       other_layer_args=[LSTMCell, hidden_size, hidden_size])


#: Layers, hidden (= input) size, default sequence length and the range of the dynamic lengths.
CONFIGS = {
    "paper": dict(num_layers=10, hidden_size=256, seq_len=64, seq_range=(16, 128)),
    "smoke": dict(num_layers=2, hidden_size=16, seq_len=8, seq_range=(2, 12)),
}


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """The 10-layer, 256-wide stacked LSTM (``paper``) or a 2-layer, 16-wide one (``smoke``)."""
    check_size(size)
    cfg = CONFIGS[size]
    with seeded(seed):
        model = lstm(cfg["hidden_size"], cfg["hidden_size"], cfg["num_layers"])
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, seq_len: int | None = None,
              **kw: Any) -> tuple[list, dict]:
    """``([x [T, BS, H], [LSTMState(h [BS, H], c [BS, H])] * layers], {})``.

    T = 64 (paper) or 8 (smoke) unless ``seq_len`` is given; H = 256 or 16.
    """
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for lstm.get_input: {sorted(kw)}")
    cfg = CONFIGS[size]
    seq_len = cfg["seq_len"] if seq_len is None else seq_len
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    hidden = cfg["hidden_size"]
    gen = generator(seed)
    x = torch.randn(seq_len, batch_size, hidden, generator=gen)
    states = [LSTMState(torch.randn(batch_size, hidden, generator=gen), torch.randn(batch_size, hidden, generator=gen))
              for _ in range(cfg["num_layers"])]
    return [x, states], {}


def get_dynamic_inputs(batch_size: int = 1, n: int = 10, size: str = "paper", kind: str = "seqlen",
                       seed: int = 0) -> list[tuple[list, dict]]:
    """``n`` inputs of batch ``batch_size`` whose sequence lengths (the trip count of the time loop)
    are drawn uniformly from [16, 128] (paper) or [2, 12] (smoke)."""
    check_kind(kind, DYNAMIC_KINDS, "lstm")
    check_count(n)
    lengths = uniform_ints(generator(seed), *CONFIGS[check_size(size)]["seq_range"], n)
    return [get_input(batch_size, size, seed=seed + 1 + i, seq_len=t) for i, t in enumerate(lengths)]
