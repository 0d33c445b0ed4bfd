"""More reads of tensor values and sizes, the way models write them: values stored into buffers,
globals and dicts, NaN checks, rounding, cached tensors keyed by lengths, boolean masks counted."""
from harness import program

F_ = "liftedmore"

program(F_, "item_written_into_a_buffer", """
class Track(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("stat", torch.zeros(2))
    def forward(self, x):
        self.stat[0] = x.mean().item()
        self.stat[1] = self.stat[1] + 1
        return x - self.stat[0]
m = Track()
def make(): return m
def inputs(i): return torch.arange(3.0) * (i + 1)
""")

program(F_, "item_to_global_and_dict", """
LAST = None
STATS = {}
def f(x):
    global LAST
    s = x.abs().max().item()
    LAST = s
    STATS["max"] = s * 2
    return x / s
def make(): return f
def inputs(i): return torch.tensor([1.0, -3.0, 2.0]) * (i + 1)
def state(): return (LAST, dict(STATS))
""")

program(F_, "nan_check_and_rounding", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
import math
def f(x):
    s = x.sum().item()
    if math.isnan(s):
        return torch.zeros_like(x)
    r = round(s, 1)
    return x * r
def make(): return f
def inputs(i): return [torch.ones(2), torch.tensor([float('nan'), 1.0]), torch.ones(2) * 2.04, torch.ones(2)][i]
""")

program(F_, "positions_cached_by_length", """
class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}
    def forward(self, x):
        n = x.size(1)
        if n not in self.cache:
            self.cache[n] = torch.arange(n).float()
        return x + self.cache[n]
m = Pos()
def make(): return m
def inputs(i): return torch.ones(2, [3, 5, 3, 5, 7][i % 5])
NCALLS = 8
""")

program(F_, "masked_count_drives_division", """
def f(x):
    sel = x[x > 0]
    return sel.sum() / max(sel.numel(), 1), sel.numel()
def make(): return f
def inputs(i): return torch.tensor([1.0, -1.0, 2.0, -3.0]) * [1, -1, 2, 1][i]
""")

program(F_, "shape_tuple_slicing_and_zeros", """
def f(x):
    rest = x.shape[1:]
    y = torch.zeros(x.shape[0], *rest)
    y[:, 0] = 1
    return (x + y).reshape(x.size(0), -1), rest
def make(): return f
def inputs(i): return torch.ones([2, 3, 5, 2][i], [2, 2, 4, 4][i])
""")

program(F_, "step_counter_with_warmup_schedule", """
class Sched(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        self.step += 1
        warm = min(1.0, self.step / 3)
        if self.step > 4:
            x = x * 2
        return self.lin(x) * warm
m = Sched()
def make(): return m
def inputs(i): return torch.ones(1, 2)
NCALLS = 7
""")

program(F_, "printed_values_and_shapes", """
import io, contextlib
OUT = []
def f(x):
    print("sum", x.sum().item(), x.shape)
    return x * 2
def make(): return f
def inputs(i): return torch.ones(i + 1, 2)
def invoke(fn, i):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*inputs(i) if isinstance(inputs(i), tuple) else (inputs(i),))
    OUT.append(buf.getvalue())
    return out
def state(): return list(OUT)
""")

program(F_, "lengths_seen_in_a_set", """
class Seen(nn.Module):
    def __init__(self):
        super().__init__()
        self.lengths = set()
    def forward(self, x):
        self.lengths.add(x.size(1))
        return x * len(self.lengths)
m = Seen()
def make(): return m
def inputs(i): return torch.ones(2, [3, 5, 3, 6][i % 4])
NCALLS = 7
""")
