"""Values read from tensors, container items and argument metadata that a record must not keep
from the call it was made on: numbers from ``.item()`` passed through builtin
iterators (a split continuation that consumes an iterator made before the split, a bound method
of a dict made in the call live at the split), an item read after appends past the length the
container had at entry (the item the run appended, not an entry item), ..."""
from harness import program

F_ = "values_not_kept_from_the_recorded_call"

program(F_, "item_values_through_dict_zip", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
def f(x):
    la = (x ** 2).mean(); lb = x.abs().mean()
    vals = [la.item(), lb.item()]
    return la + lb, dict(zip(["mse", "l1"], vals))
def make(): return f
def inputs(i): return (torch.tensor([[1., 3.], [1., 3.], [5., 2.], [-3., 1.], [0.25, 0.5], [2.5, 7.]][i]),)
NCALLS = 6
""")

program(F_, "item_values_through_map_int", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
def f(x):
    return x + 1, list(map(int, [x[0].item(), x[1].item()]))
def make(): return f
def inputs(i): return (torch.tensor([[1., 3.], [1., 3.], [5., 2.], [-3., 1.], [0.25, 0.5], [2.5, 7.]][i]),)
NCALLS = 6
""")

program(F_, "item_values_through_statistics_mean", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
import statistics
def f(x):
    return x + 1, statistics.mean([x[0].item(), x[1].item()])
def make(): return f
def inputs(i): return (torch.tensor([[1., 3.], [1., 3.], [5., 2.], [-3., 1.], [0.25, 0.5], [2.5, 7.], [4., 9.]][i]),)
NCALLS = 7
""")

program(F_, "bound_dict_method_live_at_a_split", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
import struct
def f(x):
    counts = {}
    get = counts.get
    n = int(x.sum().item())
    p = struct.pack("b", n)          # splits here: `get` is live, bound to this call's dict
    for k in (1, 2, 1):
        counts[k] = get(k, 0) + len(p)
    return x * 2, counts
def make(): return f
def inputs(i): return (torch.full((2,), float(i % 3)),)
NCALLS = 6
""")

program(F_, "append_then_read_index_0", """
EXPECT = "record"
class RelLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []
    def forward(self, loss):
        self.history.append(loss.detach())
        return loss / self.history[0]
m = RelLoss()
def make(): return m
def inputs(i): return (torch.tensor([2.0, 4.0, 8.0, 1.0, 3.0][i]),)
NCALLS = 5
""")

program(F_, "deque_append_then_read_past_entry_length", """
EXPECT = "record"
import collections
Q = collections.deque([torch.ones(1)])
def f(x):
    Q.append(x * 2)
    return x + Q[1]
def make(): return f
def inputs(i): return (torch.full((1,), float(i + 1)),)
NCALLS = 4
""")

program(F_, "text_from_item_len_pads_a_column", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
def f(x):
    s = f"{x.mean().item():.2f}"
    return x * 2, s + " " * (8 - len(s)) + "|"
def make(): return f
def inputs(i): return (torch.full((2,), [1.0, 1.0, 30.0, -2.0, 100.5][i]),)
NCALLS = 5
""")

program(F_, "text_from_item_sliced_and_iterated", """
EXPECT = "record"
def f(x):
    s = f"loss={x.mean().item():.4f}"
    return x * 2, s[:9], [c for c in s[5:]]
def make(): return f
def inputs(i): return (torch.full((2,), [1.0, 1.0, 30.0, -2.0, 1.0][i]),)
NCALLS = 5
""")

program(F_, "storage_offset_of_a_view_argument", """
EXPECT = "record"
BASE = torch.arange(12.)
def windows(x, k=2):
    n = x.shape[0] - k + 1
    return torch.as_strided(x, (n, k), (x.stride(0), x.stride(0)), x.storage_offset()), x.storage_offset()
def make(): return windows
def inputs(i): return (BASE[[0, 0, 3, 3, 1][i]:][:5],)
NCALLS = 5
""")

program(F_, "storage_offset_of_a_tensor_made_in_the_call", """
EXPECT = "record"
BASE = torch.arange(12.)
def f(x):
    y = x.detach()
    return x * 2, y.storage_offset()
def make(): return f
def inputs(i): return (BASE[[0, 0, 3, 3, 1][i]:][:5],)
NCALLS = 5
""")

program(F_, "is_set_to_of_two_arguments", """
EXPECT = "record"
T0 = torch.ones(4)
def f(x, y):
    return x * 2, x.is_set_to(y)
def make(): return f
def inputs(i): return [(torch.ones(4), torch.ones(4)), (torch.ones(4), torch.ones(4)), (T0, T0), (T0[:], T0), (T0, T0)][i]
NCALLS = 5
""")

program(F_, "length_of_an_argument_storage", """
EXPECT = "split"
def f(x):
    return x * 2, len(x.untyped_storage())
def make(): return f
def inputs(i): return ([torch.ones(3), torch.ones(3), torch.ones(4)[1:], torch.ones(3)][i],)
NCALLS = 4
""")

program(F_, "recursion_limit_read_between_changes", """
EXPECT = "record"
import sys
LIMITS = [1000, 1000, 3000, 3000, 1000]
def step(i):
    sys.setrecursionlimit(LIMITS[i])
    CLEANUP.append(lambda: sys.setrecursionlimit(1000))
def f(x):
    return x * (sys.getrecursionlimit() // 1000)
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "numpy_error_mode_read_between_changes", """
EXPECT = "record"
MODES = ["warn", "warn", "ignore", "ignore", "warn"]
def step(i):
    np.seterr(divide=MODES[i])
    CLEANUP.append(lambda: np.seterr(divide="warn"))
def f(x):
    return x * 2, np.geterr()["divide"]
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "decimal_division_under_a_changed_precision", """
EXPECT = "dynamic"
import decimal
PRECS = [28, 28, 5, 5, 28]
D1, D7 = decimal.Decimal(1), decimal.Decimal(7)
def step(i):
    decimal.getcontext().prec = PRECS[i]
    CLEANUP.append(lambda: setattr(decimal.getcontext(), "prec", 28))
def f(x):
    return x * 2, str(D1 / D7)
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")
