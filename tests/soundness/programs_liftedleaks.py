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


# -- a LiftedInt left in objects a lifting run made or wrote (type(v) is int False)

program(F_, "lifted_sizes_and_numbers_left_in_slots_frozensets_classes_defaults_and_ordered_keys", """
EXPECT = "dynamic"   # (each call rewrites g.__defaults__, which its guards read: monitored every call)
import collections as _c
class SBox:
    __slots__ = ("v",)
    def __init__(self, v):
        self.v = v
class Box:
    def __init__(self, v):
        self.v = v
    def get(self):
        return self.v
OUT = SBox(0)
OD = _c.OrderedDict()
def g(a=0):
    return a
def f(x, n):
    m = x.shape[0]
    OUT.v = n
    g.__defaults__ = (m,)
    OD[n] = m
    T = type("T", (), {"v": n})
    return x * n, SBox(m), frozenset([m, n]), T, Box(n).get
def make(): return f
def inputs(i): return (torch.ones(1 + i % 3), i)
def invoke(f, i):
    y, sb, fs, T, get = f(*inputs(i))
    kinds = lambda *vs: [type(v).__name__ for v in vs]
    return y, sb.v, sorted(fs), T.v, get(), OUT.v, g(), list(OD.items()), \\
        kinds(sb.v, *fs, T.v, get(), OUT.v, g(), *OD.keys(), *OD.values())
NCALLS = 6
""")
