"""Numbers the monitor run follows (read from tensors by ``.item()``, sizes) are LiftedInts inside
the run; what the program leaves outside must be plain ints (``type(n) is int``), also when the
run assumed the number instead of lifting it (found by a helper: a number read from a tensor and
passed to a native that splits the call later, appended to a list from outside, stayed a
LiftedInt there)."""
from harness import program

F_ = "liftedleaks"

program(F_, "item_appended_to_an_outside_list", """
EXPECT = "split"
import struct
DONE = []
def f(x):
    y = x.relu()
    n = int(y.sum().item())
    p = struct.pack("b", n)
    DONE.append(n)
    return y + len(p), [type(d).__name__ for d in DONE]
def make(): return f
def inputs(i): return (torch.full((3,), float(i % 4 + 1)),)
NCALLS = 6
""")

program(F_, "item_stored_in_a_module_attribute", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
    def forward(self, x):
        k = int(x.argmax().item())
        self.seen.append(k)
        self.last = k
        return x * 2, type(self.last).__name__
m = M()
def make(): return m
def inputs(i): return (torch.arange(4.0).roll(i % 2),)
NCALLS = 6
""")
