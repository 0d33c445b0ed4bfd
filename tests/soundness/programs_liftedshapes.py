"""Lifted shapes: inputs whose sizes change between calls (batch size, sequence length), with
sizes read into Python, stored outside, used by loops, caches and in-place state."""
from harness import program

F_ = "liftedshapes"

program(F_, "flatten_batch_sizes", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 4, 2)
    def forward(self, x):
        y = self.conv(x).relu()
        return self.fc(y.view(y.size(0), -1)), y.shape
m = Net()
def make(): return m
def inputs(i): return torch.randn([2, 5, 1, 7, 3, 5][i], 2, 4, 4, generator=torch.Generator().manual_seed(i))
NCALLS = 6
""")

program(F_, "positions_cache_grows_with_length", """
class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = torch.zeros(0)
        self.seen = []
    def forward(self, x):
        n = x.shape[1]
        if self.cache.numel() < n:
            self.cache = torch.arange(n).float()
        self.seen.append(n)
        return x + self.cache[:n]
m = Pos()
def make(): return m
def inputs(i): return torch.ones(2, [4, 6, 3, 9, 5][i % 5])
NCALLS = 8
""")

program(F_, "loop_over_the_length", """
def f(x):
    h = torch.zeros(x.shape[0])
    for t in range(x.shape[1]):
        h = torch.tanh(h + x[:, t])
    return h
def make(): return f
def inputs(i): return torch.randn(2, [3, 4, 4, 6, 3][i], generator=torch.Generator().manual_seed(i))
NCALLS = 5
""")

program(F_, "running_stats_with_changing_batch", """
m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU())
def make(): return m
def inputs(i): return torch.randn([4, 7, 2, 9][i], 3, generator=torch.Generator().manual_seed(i))
""")

program(F_, "chunks_depend_on_length", """
def f(x):
    return [c.sum() for c in x.split(3, dim=1)]
def make(): return f
def inputs(i): return torch.ones(2, [6, 7, 9, 6, 3][i])
NCALLS = 5
""")

program(F_, "size_arithmetic_and_reshape", """
def f(x):
    b, n = x.shape[0], x.shape[1]
    half = n // 2
    y = x[:, :half] * x[:, half:2 * half]
    return y.reshape(b * half), half, n % 2
def make(): return f
def inputs(i): return torch.arange(float(2 * [4, 5, 8, 3][i])).view(2, -1)
""")

program(F_, "transposed_inputs_with_changing_sizes", """
def f(x):
    if x.is_contiguous():
        return x.view(-1)
    return x.t().reshape(-1) * 2
def make(): return f
def inputs(i):
    return [torch.ones(2, 3), torch.ones(4, 3), torch.ones(3, 5).t(), torch.ones(3, 2).t(), torch.ones(6, 3)][i]
NCALLS = 5
""")

program(F_, "sizes_read_through_builtins", """
import operator
def f(x):
    a = getattr(x, "shape")[0]                  # getattr of `shape`
    b = torch.numel(x)                          # torch.numel, a function
    c = sum(d for d in x.shape)                 # a generator of sizes summed in C
    return x * a + b - c, (a, b, c)
def make(): return f
def inputs(i): return torch.ones([3, 4, 5, 4, 6, 2][i], 2)
NCALLS = 6
""")

program(F_, "value_shaped_counts", """
class Anchors(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.counts = []
    def forward(self, x):
        y = self.fc(x)
        pos = y[y[:, 0] > 0]
        n = pos.shape[0]
        self.counts.append(n)
        pad = torch.zeros(n + 1, 3)
        pad[:n] = pos
        k = torch.unique((y * 2).round()).numel()
        return pad * k, n, pad.size(), len(pos) / max(1, n)
m = Anchors()
def make(): return m
def inputs(i): return torch.randn(6, 3, generator=torch.Generator().manual_seed(i))
NCALLS = 6
""")

program(F_, "size_read_then_a_break_type_checked_eagerly", """
# A size read from a lifted dimension, then a native MagPy breaks on: the call goes on eagerly,
# and the program looks at the exact type of the sizes it holds (in its own frame, in a helper's
# frame that broke, in a list built before the break, in a callee entered after it).
import sys
def kind(v):
    return (type(v) is int, type(v).__name__)
def helper(x, n):
    m = x.size(1)
    if n > 4:
        sys.intern("magpy-break")   # (a native MagPy breaks on, once sizes are lifted)
    return (kind(n), kind(m), type(m) == int)
def f(x):
    n = x.size(0)
    dims = [n, x.shape[1]]
    y = x * n
    inner = helper(x, n)
    return y, inner, kind(n), [type(d) is int for d in dims], type(x.shape[0]) is int
def make(): return f
def inputs(i): return torch.randn([2, 3, 5, 4, 6][i], [3, 4, 2, 2, 5][i], generator=torch.Generator().manual_seed(i))
NCALLS = 5
""")
