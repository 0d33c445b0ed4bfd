"""Global torch state around the call: grad mode, inference mode, autocast (enabled/dtype),
default dtype, deterministic algorithms, float32 matmul precision, global module hooks,
an active TorchFunctionMode."""
from harness import program

F_ = "globalstate"

program(F_, "no_grad_around_call", """
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
def make(): return m
def inputs(i): return torch.randn(3, 4)
def context(i): return torch.no_grad() if i in (1, 3) else contextlib.nullcontext()
def post(out, i): return (out.requires_grad, out.grad_fn is None)
""")

program(F_, "set_grad_enabled_globally", """
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.grad_calls = 0
    def forward(self, x):
        if torch.is_grad_enabled():
            self.grad_calls += 1
        return self.lin(x)
m = Counter()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i): torch.set_grad_enabled(i % 2 == 0)
def post(out, i): return out.requires_grad
""")

program(F_, "inference_mode_around_call", """
m = nn.Linear(4, 4)
def make(): return m
def inputs(i): return torch.randn(2, 4)
def context(i): return torch.inference_mode() if i == 2 else contextlib.nullcontext()
def post(out, i): return (out.is_inference(), out.requires_grad)
""")

program(F_, "autocast_enabled_around_call", """
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 4)
    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
m = MLP()
def make(): return m
def inputs(i): return torch.randn(2, 8)
def context(i): return torch.autocast("cpu", dtype=torch.bfloat16) if i >= 2 else contextlib.nullcontext()
def post(out, i): return out.dtype
""")

program(F_, "autocast_dtype_changes", """
m = nn.Linear(8, 4)
def make(): return m
def inputs(i): return torch.randn(2, 8)
def context(i): return torch.autocast("cpu", dtype=torch.bfloat16 if i < 2 else torch.float16)
""")

program(F_, "autocast_set_globally", """
def proj(x, w):
    return x @ w
W = torch.randn(8, 4)
def make(): return proj
def inputs(i): return (torch.randn(2, 8), W)
def step(i):
    torch.set_autocast_enabled("cpu", i >= 2)
    torch.set_autocast_dtype("cpu", torch.bfloat16)
""")

program(F_, "default_dtype_float64", """
class Shift(nn.Module):
    def forward(self, x):
        bias = torch.ones(x.shape[-1]) * 0.5
        return x + bias, torch.tensor(1.5)
m = Shift()
def make(): return m
def inputs(i): return torch.randn(2, 3, dtype=torch.float64)
def step(i):
    if i == 2: torch.set_default_dtype(torch.float64)
""")

program(F_, "deterministic_algorithms_branch", """
def scatter_sum(x, idx):
    if torch.are_deterministic_algorithms_enabled():
        return torch.zeros(4).index_add(0, idx, x) * 1.0
    return torch.zeros(4).index_add(0, idx, x) * 2.0
def make(): return scatter_sum
def inputs(i): return (torch.ones(3), torch.tensor([0, 1, 1]))
def step(i): torch.use_deterministic_algorithms(i >= 2)
""")

program(F_, "matmul_precision_branch", """
class Attn(nn.Module):
    def forward(self, q, k):
        s = q @ k.transpose(-1, -2)
        if torch.get_float32_matmul_precision() != "highest":
            s = s.float() * 0.5
        return s.softmax(-1)
m = Attn()
def make(): return m
def inputs(i): return (torch.randn(2, 3), torch.randn(2, 3))
def step(i): torch.set_float32_matmul_precision("high" if i >= 2 else "highest")
""")

program(F_, "global_forward_hook_registered_later", """
m = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
H = []
def double_linear(mod, inp, out):
    if isinstance(mod, nn.Linear):
        return out * 2
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: H.append(nn.modules.module.register_module_forward_hook(double_linear))
    if i == 3: H.pop().remove()
NCALLS = 5
""")

program(F_, "global_forward_pre_hook_counts", """
EXPECT = "dynamic"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 3)
        self.l2 = nn.Linear(3, 3)
    def forward(self, x):
        return self.l2(self.l1(x))
m = Net()
CALLS = []
def pre(mod, args):
    CALLS.append(type(mod).__name__)
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 1: nn.modules.module.register_module_forward_pre_hook(pre)
""")

program(F_, "torch_function_mode_active", """
from torch.overrides import TorchFunctionMode
class ScaleLinear(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is F.linear:
            out = out * 10
        return out
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
def make(): return m
def inputs(i): return torch.randn(2, 4)
def context(i): return ScaleLinear() if i == 2 else contextlib.nullcontext()
""")

program(F_, "no_grad_then_backward", """
m = nn.Linear(3, 1)
def make(): return m
def inputs(i): return torch.randn(4, 3)
def context(i): return torch.no_grad() if i == 1 else contextlib.nullcontext()
def post(out, i):
    if out.requires_grad:
        out.sum().backward()
    return [None if p.grad is None else p.grad.clone() for p in m.parameters()]
""")

program(F_, "grad_mode_set_inside_forward_leaks", """
class Freeze(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        torch.set_grad_enabled(False)      # a (buggy but real) program that leaves grad mode off
        return self.lin(x)
m = Freeze()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i): torch.set_grad_enabled(True)
def post(out, i): return (out.requires_grad, torch.is_grad_enabled())
""")

program(F_, "default_dtype_set_inside_function", """
EXPECT = "dynamic"
def f(x):
    torch.set_default_dtype(torch.float64)
    y = torch.ones(3) * 2
    torch.set_default_dtype(torch.float32)
    return x + y, torch.zeros(2)
def make(): return f
def inputs(i): return torch.ones(3)
""")

program(F_, "autocast_enabled_query_branch", """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        y = self.lin(x)
        if torch.is_autocast_enabled("cpu"):
            y = y.float() * 2
        return y
m = Head()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def context(i): return torch.autocast("cpu", dtype=torch.bfloat16) if i == 2 else contextlib.nullcontext()
""")
