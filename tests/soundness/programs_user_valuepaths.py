"""Written the ways users write such code, changing outside state between calls: branches on tensor values that alternate between calls, mixed with writes, prints, draws and lifted sizes."""
from harness import program

F_ = "user_valuepaths"

program(F_, "alternating_branch_with_writes_on_both_sides", """
EXPECT = "record"
STATS = {"pos": 0, "neg": 0, "last": None}
def f(x):
    STATS["last"] = "enter"
    if x.sum() > 0:
        STATS["pos"] += 1
        y = x * 2
    else:
        STATS["neg"] += 1
        y = -x
    STATS["last"] = "exit"
    return y
def make(): return f
def inputs(i): return (torch.ones(2) * (1 if i % 2 == 0 else -1),)
NCALLS = 8
""")

program(F_, "alternating_branch_then_print_of_value", """
EXPECT = "record"
import io
BUF = io.StringIO()
def f(x):
    m = x.mean()
    if m > 0:
        print("pos", f"{m.item():.3f}", file=BUF)
        return x.relu()
    print("neg", f"{m.item():.3f}", file=BUF)
    return x.abs()
def make(): return f
def inputs(i): return (torch.randn(4) + (2 if i % 3 == 0 else -2),)
def state(): return BUF.getvalue()
NCALLS = 8
""")

program(F_, "branch_on_value_with_rng_draw_one_side", """
EXPECT = "record"
def f(x):
    if x.max() > 1:
        return x + torch.randn_like(x)
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(3) * [0.5, 2, 0.5, 2, 2, 0.5, 0.5][i],)
def state(): return torch.get_rng_state()
NCALLS = 7
""")

program(F_, "branch_on_value_inplace_on_buffer_one_side", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.register_buffer("count", torch.zeros(()))
    def forward(self, x):
        if (x > 0).any():
            self.count += 1
            return x * self.count
        return x
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(2) * [1, -1, 1, -1, -1, 1, 1][i],)
NCALLS = 7
""")

program(F_, "nested_value_branches_with_counter_dict", """
EXPECT = "dynamic"
C = collections.Counter()
def f(x):
    a = x[0] > 0
    b = x[1] > 0
    if a:
        if b:
            C["pp"] += 1; return x * 4
        C["pn"] += 1; return x * 3
    if b:
        C["np"] += 1; return x * 2
    C["nn"] += 1; return x
def make(): return f
SIGNS = [(1, 1), (1, -1), (-1, 1), (-1, -1), (1, 1), (-1, 1), (1, -1), (-1, -1), (1, 1)]
def inputs(i): return (torch.tensor(SIGNS[i], dtype=torch.float32),)
NCALLS = 9
""")

program(F_, "value_branch_with_changing_batch_size", """
EXPECT = "record"
LOG = []
def f(x):
    if x.mean() > 0:
        LOG.append(x.shape[0])
        return x.cumsum(0)
    return x.flip(0)
def make(): return f
def inputs(i): return (torch.ones(2 + i, 2) * (1 if i % 2 else -1),)
def state(): return list(LOG)
NCALLS = 7
""")

program(F_, "item_accumulated_into_attribute_running_mean", """
EXPECT = "record"
class Meter:
    def __init__(s): s.n = 0; s.total = 0.0
    def update(s, v): s.n += 1; s.total += v
    @property
    def avg(s): return s.total / max(s.n, 1)
M = Meter()
def f(x):
    loss = x.pow(2).mean()
    M.update(loss.item())
    if M.avg > 2:
        return loss * 0.5
    return loss
def make(): return f
def inputs(i): return (torch.ones(3) * [1, 1, 3, 3, 0.1, 2, 1][i],)
def state(): return M.n, M.total
NCALLS = 7
""")

program(F_, "while_loop_on_value_with_append", """
EXPECT = "record"
TRACE = []
def f(x):
    n = 0
    while x.abs().max() > 1:
        x = x / 2
        n += 1
        TRACE.append(n)
    return x, n
def make(): return f
def inputs(i): return (torch.ones(2) * [3, 3, 9, 0.5, 17, 3][i],)
def state(): return list(TRACE)
NCALLS = 6
""")
