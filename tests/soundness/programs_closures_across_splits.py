"""Closures made in the call whose cells the frame goes on writing after a split (a dynamic
operation the call is split at): the closure sits in a local, on ``self``, in a list, or is
called only after the split; a ``nonlocal`` counter bumped around a split inside a loop. A cell
is one object across the split, whatever holds the closure."""
from harness import program

F_ = "closures_across_splits"

_SPLIT = """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "dynamic"}
import io
buf = io.StringIO()
def inputs(i):
    return (torch.ones(2) * (i + 1), float(i % 3 + 2))
NCALLS = 5
"""

program(F_, "closure_in_a_local_reads_a_local_rebound_after_the_split", _SPLIT + """
def f(x, scale):
    k = 1.0
    g = lambda: k
    buf.write(f"{x.sum().item():.3f}\\n")
    k = scale
    return x * g()
def make(): return f
""")

program(F_, "closure_on_self_reads_a_local_rebound_after_the_split", _SPLIT + """
class M(nn.Module):
    def forward(self, x, scale):
        k = 1.0
        self.get = lambda: k
        buf.write(f"{x.sum().item():.3f}\\n")
        k = scale
        return x * self.get()
m = M()
def make(): return m
def state(): return m.get()
""")

program(F_, "closure_in_a_list_sees_the_rebinding", _SPLIT + """
def f(x, scale):
    k = 0.5
    fs = [lambda: k * 2]
    buf.write(f"{x.sum().item():.3f}\\n")
    k = scale
    return x + fs[0]()
def make(): return f
""")

program(F_, "nonlocal_counter_bumped_around_a_split_in_a_loop", _SPLIT + """
def f(x, scale):
    n = 0
    def bump():
        nonlocal n
        n += 1
    for _ in range(3):
        bump()
        buf.write(f"{x.sum().item():.3f}\\n")
        bump()
    return x * n + scale
def make(): return f
""")

program(F_, "closure_writes_the_cell_the_frame_reads_after_the_split", _SPLIT + """
def f(x, scale):
    acc = 0.0
    def add(v):
        nonlocal acc
        acc += v
    add(scale)
    buf.write(f"{x.sum().item():.3f}\\n")
    add(1.0)
    return x * acc
def make(): return f
""")
