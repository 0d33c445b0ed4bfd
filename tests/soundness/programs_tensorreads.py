"""Tensor values read into Python: lifted numbers (item/float flowing into operators) and
assumed reads (branches on tensors, int(t), tolist, max(t, c)) whose values change between
calls, with outside state changed around them (buffers in place, attributes, RNG)."""
from harness import program

F_ = "tensorreads"

program(F_, "quantize_scale_from_weight", """
class Q(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6))
    def forward(self, x):
        scale = max(float(self.w.abs().max()) / 127.0, 1e-8)
        return torch.round(x / scale) * scale
m = Q()
def make(): return m
def step(i):
    with torch.no_grad():
        m.w.mul_(1.0 + i)
def inputs(i): return torch.linspace(-1, 1, 6) * (i + 1)
""")

program(F_, "branch_on_sum_sign_changes", """
def f(x):
    if x.sum() > 0:
        return x * 2
    return x - 1
def make(): return f
def inputs(i): return torch.ones(3) * (1 if i % 2 == 0 else -1)
NCALLS = 6
""")

program(F_, "while_loop_on_norm", """
def f(x):
    n = 0
    while x.norm() > 1:
        x = x / 2
        n += 1
    return x, n
def make(): return f
def inputs(i): return torch.ones(4) * (3 ** (i % 3))
NCALLS = 6
""")

program(F_, "int_item_indexes_a_list", """
table = [10.0, 20.0, 30.0]
def f(x):
    k = int(x.argmax())
    return x * table[k]
def make(): return f
def inputs(i): return torch.eye(3)[i % 3]
NCALLS = 5
""")

program(F_, "tolist_drives_python", """
def f(x):
    counts = (x > 0).sum(0).tolist()
    return [x[:, j] * c for j, c in enumerate(counts)]
def make(): return f
def inputs(i): return torch.randn(4, 3, generator=torch.Generator().manual_seed(i % 2))
""")

program(F_, "max_tensor_and_number", """
def f(x):
    rng = max(x.max() - x.min(), 1e-3)
    return (x - x.min()) / rng
def make(): return f
def inputs(i): return torch.zeros(4) if i % 2 else torch.arange(4.0) * i
""")

program(F_, "buffer_updated_then_branch", """
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(()))
    def forward(self, x):
        self.n += 1
        if self.n > 2:
            return x * 10
        return x
m = Counter()
def make(): return m
def inputs(i): return torch.ones(2)
NCALLS = 5
""")

program(F_, "buffer_updated_through_view_then_item", """
class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(2, 2))
    def forward(self, x):
        v = self.acc.view(-1)
        v.add_(x.sum())
        return x * self.acc.sum().item()
m = Acc()
def make(): return m
def inputs(i): return torch.ones(2) * (i - 1)
""")

program(F_, "random_ops_around_a_branch", """
def f(x):
    noise = torch.rand(3)
    if (x + noise).mean() > 0.5:
        return x + torch.rand(3)
    return x - noise
def make(): return f
def inputs(i): return torch.ones(3) * (i % 2)
def state(): return torch.rand(2)
NCALLS = 6
""")

program(F_, "read_value_stored_and_returned", """
class Track(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
        self.seen = []
    def forward(self, x):
        s = x.mean().item()
        self.last = s
        self.seen.append(round(s, 3))
        return x - s, s * 2
m = Track()
def make(): return m
def inputs(i): return torch.arange(3.0) + i
""")

program(F_, "read_value_formatted", """
log = []
def f(x):
    s = x.abs().max().item()
    log.append(f"max={s:.4f}")
    return x / s
def make(): return f
def inputs(i): return torch.tensor([1.0, -2.0, 0.5]) * (i + 1)
""")

program(F_, "read_then_changed_in_place_later", """
def f(x):
    y = x * 1
    flag = bool(y[0] > 0)
    y.mul_(-1)   # the value read must be the one before this change
    return y if flag else y + 100
def make(): return f
def inputs(i): return torch.tensor([1.0, 2.0]) * (1 if i % 2 == 0 else -1)
""")

program(F_, "packed_sequence_lengths_change", """
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4)
        self.lengths = [5, 2, 4]
    def forward(self, x, lens):
        a = pack_padded_sequence(x, lens, enforce_sorted=False)
        b = pack_padded_sequence(x, self.lengths, enforce_sorted=False)
        ya, ha = self.rnn(a)
        yb, hb = self.rnn(b)
        return pad_packed_sequence(ya)[0], ha, pad_packed_sequence(yb, total_length=5)[0], hb
m = Enc()
def make(): return m
def step(i):
    if i == 3:
        m.lengths = [1, 5, 3]
def inputs(i): return (torch.randn(5, 3, 3), torch.tensor([5, 1 + i % 3, 3]))
NCALLS = 9
""")

program(F_, "read_numbers_returned_in_a_tuple", """
class Clamp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        y = self.fc(x)
        lo, hi = y.min().item(), y.max().item()
        self.range = (lo, hi)
        return y.clamp(-5, 5), (lo, hi), ((lo,), 2)
m = Clamp()
def make(): return m
def inputs(i): return torch.randn(3, 4) * (0.1 if i % 2 else 1.0)
""")

program(F_, "branch_on_a_value_then_buffers_changed_in_place", """
# An iterative solver's step: buffers reset and updated in place (fill_, add_/sub_, +=, an
# argument's view written), with a branch on a tensor value in between. When the branch goes
# the other way on a later call, the graph has already changed the buffers: they must be as the
# call found them before the program runs again.
class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("sol", torch.zeros(3))
        self.register_buffer("count", torch.zeros(1))
    @torch.no_grad()
    def forward(self, v, out):
        self.sol.fill_(1.0 / 3)
        g = v @ v.t()
        if g[0, 1] > 0:
            self.sol.add_(g[0])
        else:
            self.sol.sub_(g[1])
        self.count += 1
        out[0].copy_(self.sol)
        return self.sol * 2
m = Solver()
outs = [torch.zeros(2, 3) for _ in range(8)]
def make(): return m
def inputs(i):
    return torch.randn(3, 3, generator=torch.Generator().manual_seed(i)), outs[i]
def state(): return m.sol.clone(), m.count.clone(), [o.clone() for o in outs]
NCALLS = 8
""")

program(F_, "histogram_of_routed_experts_is_an_operator", """
EXPECT = "record"
E = 4
def route(x, w):
    idx = (x @ w).argmax(-1)
    counts = torch.histc(idx.float(), bins=E, min=0, max=E - 1)
    offsets = torch.cumsum(counts, 0)
    return counts, offsets, x * counts.max()
W = torch.randn(6, E, generator=torch.Generator().manual_seed(0))
def make(): return route
def inputs(i):
    return (torch.randn(8, 6, generator=torch.Generator().manual_seed(i)), W)
""")

program(F_, "number_in_a_tensor_argument_decides_a_branch", """
# `pad_id in ids[:, [-1, 0]]` (transformers' padding warning): Tensor.__contains__ computes
# `(pad_id == ids).any().item()`, a value read the record assumes and checks on every call.
NCALLS = 6
PAD = 0
def f(x, ids):
    if PAD in ids[:, [-1, 0]]:
        print("padding at an end and no attention mask")
        x = x * 2
    if torch.tensor(7) in ids:
        x = x - 1
    return x + 1
def make(): return f
def inputs(i):
    ids = torch.arange(1, 11).reshape(2, 5) % 6 + 1        # no 0, no 7
    if i == 2: ids[0, 0] = 0
    if i == 4: ids[1, 2] = 7
    if i == 5: ids[1, -1] = 0
    return (torch.ones(2), ids)
""")
