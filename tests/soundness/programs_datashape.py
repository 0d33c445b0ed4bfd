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

program(F_, "where_indices_of_a_mask_then_in_place_on_the_argument", """
# ArcFace's margin: `index = torch.where(label != -1)[0]` (how many rows follows the labels),
# a one-hot of that many rows, then the argument changed in place (acos_, index_put, cos_, mul_);
# the number of ignored labels changes between calls, and the margin is changed once.
class ArcFace(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = 8.0
        self.m = 0.5
    def forward(self, cosine, label):
        index = torch.where(label != -1)[0]
        m_hot = torch.zeros(index.size()[0], cosine.size()[1], device=cosine.device)
        m_hot.scatter_(1, label[index, None], self.m)
        cosine.acos_()
        cosine[index] += m_hot
        cosine.cos_().mul_(self.s)
        return cosine, index.numel()
m = ArcFace()
labels = [[0, -1, 2, 3], [1, 1, -1, -1], [-1, -1, -1, 4], [2, 3, 4, 0], [0, -1, 2, 3]]
def make(): return m
def inputs(i):
    return torch.rand(4, 5, generator=torch.Generator().manual_seed(i)) * 0.9, torch.tensor(labels[i])
def step(i):
    if i == 3: m.m = 0.25
NCALLS = 5
""")
