"""Operators whose output shape depends on tensor values (repeat_interleave with tensor
repeats, pack_padded_sequence, torch.where(cond)): the shape the monitor run saw must not be
reused for inputs whose values give another shape."""
from harness import program

F_ = "datashape"

program(F_, "repeat_interleave_tensor_repeats_shape_read", """
def f(x, r):
    y = x.repeat_interleave(r)
    return y * y.shape[0]
def make(): return f
def inputs(i): return (torch.ones(3), torch.tensor([[1, 2, 3], [1, 2, 3], [3, 3, 3], [1, 1, 1]][i % 4]))
""")

program(F_, "pack_padded_sequence_lengths_change", """
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class BatchRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 5)
    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        out, h = self.rnn(packed)
        out, _ = pad_packed_sequence(out)
        return out, h
m = BatchRNN()
def make(): return m
def inputs(i): return (torch.randn(6, 3, 4), torch.tensor([[6, 5, 3], [6, 5, 3], [2, 4, 4], [1, 6, 2]][i % 4]))
""")

program(F_, "where_single_argument_indices", """
def f(x):
    idx, = torch.where(x > 0)
    return x[idx] * idx.numel()
def make(): return f
def inputs(i): return (torch.tensor([[1.0, -1.0, 2.0], [1.0, -1.0, 2.0], [-1.0, -1.0, 3.0], [4.0, 5.0, 6.0]][i % 4]),)
""")
