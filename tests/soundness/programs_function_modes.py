"""Torch function modes (``TorchFunctionMode``, a ``with torch.device(...)`` block) entered inside
the call, whose Python ``__torch_function__`` changes what each torch call in the block returns
and reads the mode's attributes, changed between calls; and a mode active around some calls
only (the mode stack differs at call time)."""
from harness import program

F_ = "function_modes"

_SCALE_MODE = """
from torch.overrides import TorchFunctionMode
class Scale(TorchFunctionMode):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.seen = []
    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(getattr(func, "__name__", "?"))
        out = func(*args, **(kwargs or {}))
        return out * self.k if func is torch.add else out
"""

program(F_, "a_mode_entered_in_the_call_changes_what_its_block_computes", _SCALE_MODE + """
EXPECT = "dynamic"
MODE = Scale(2.0)
def f(x):
    y = x + 1
    with MODE:
        z = torch.add(y, 1)
    return z * 3
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: MODE.k = 5.0
def state(): return MODE.k, list(MODE.seen)
""")

program(F_, "a_mode_made_in_the_call_from_an_argument", _SCALE_MODE + """
EXPECT = "dynamic"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x, k):
        with Scale(k):
            h = torch.add(self.lin(x), 1.0)
        return h.relu()
def make(): return M()
def inputs(i): return (torch.randn(2, 3), [1.0, 2.0, 2.0, 0.5][i])
""")

program(F_, "a_device_block_in_the_call", """
EXPECT = "dynamic"
def f(x):
    with torch.device("cpu"):
        t = torch.ones(3)
    return x + t
def make(): return f
def inputs(i): return (torch.randn(3),)
""")

program(F_, "a_mode_active_around_some_calls_only", _SCALE_MODE + """
EXPECT = "record"
MODE = Scale(3.0)
def f(x):
    return torch.add(x, 1) * 2
def make(): return f
def inputs(i): return (torch.randn(3),)
def context(i): return MODE if i in (1, 3) else contextlib.nullcontext()
def state(): return list(MODE.seen)
NCALLS = 5
""")
