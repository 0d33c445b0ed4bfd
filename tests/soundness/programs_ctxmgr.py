"""Context managers inside the program: autocast, no_grad, enable_grad, inference_mode,
set_grad_enabled, user context managers that change globals."""
from harness import program

F_ = "ctxmgr"

program(F_, "autocast_inside_forward", """
class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)
    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.lin(x)
        return self.head(h.float()), h.dtype
m = Mixed()
def make(): return m
def inputs(i): return torch.randn(2, 8)
""")

program(F_, "autocast_flag_attribute", """
class Amp(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)
        self.use_amp = True
    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.use_amp):
            return self.lin(x)
m = Amp()
def make(): return m
def inputs(i): return torch.randn(2, 8)
def step(i):
    if i == 2: m.use_amp = False
""")

program(F_, "no_grad_block_ema", """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("feat_mean", torch.zeros(4))
    def forward(self, x):
        y = self.lin(x)
        with torch.no_grad():
            self.feat_mean.mul_(0.9).add_(0.1 * y.mean(0))
            z = y * 2
        return y, z
m = Model()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def post(out, i): return [o.requires_grad for o in out]
""")

program(F_, "enable_grad_inside_under_no_grad", """
class Refine(nn.Module):
    def forward(self, x):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            e = (x ** 2).sum()
            g, = torch.autograd.grad(e, x)
        return x - 0.1 * g
m = Refine()
def make(): return m
def inputs(i): return torch.randn(3)
def context(i): return torch.no_grad() if i % 2 else contextlib.nullcontext()
""")

program(F_, "inference_mode_inside", """
EXPECT = "dynamic"
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.last_norm = None
    def forward(self, x):
        with torch.inference_mode():
            self.last_norm = self.lin(x).norm()
        return self.lin(x) * 2
m = Probe()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def post(out, i): return (out.requires_grad, m.last_norm.is_inference())
""")

program(F_, "set_grad_enabled_from_attribute", """
class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
        self.finetune = False
    def forward(self, x):
        with torch.set_grad_enabled(self.finetune):
            f = self.backbone(x)
        return self.head(f)
m = Frozen()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.finetune = True
def post(out, i):
    out.sum().backward()
    g = m.backbone.weight.grad
    m.zero_grad()
    return g
""")

program(F_, "user_contextmanager_changes_global", """
SCALE = 1.0
@contextlib.contextmanager
def scaled(k):
    global SCALE
    old, SCALE = SCALE, k
    try:
        yield
    finally:
        SCALE = old
def inner(x):
    return x * SCALE
def outer(x):
    with scaled(3.0):
        a = inner(x)
    return a + inner(x)
def make(): return outer
def inputs(i): return torch.ones(2)
def step(i):
    global SCALE
    if i == 2: SCALE = 5.0
""")

program(F_, "nested_no_grad_enable_grad", """
def f(w, x):
    with torch.no_grad():
        a = w * x
        with torch.enable_grad():
            b = w * x
    return a, b
W = torch.ones(3, requires_grad=True)
def make(): return f
def inputs(i): return (W, torch.randn(3))
def post(out, i): return [o.requires_grad for o in out]
""")

program(F_, "catch_warnings_in_forward", """
import warnings
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = self.lin(x)
        return y
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def state(): return len(warnings.filters), warnings.showwarning
""")
