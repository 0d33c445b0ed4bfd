"""Wrappers: @torch.no_grad() on forward, *args/**kwargs decorators, compiling a submodule in place,
compile(m).to(dtype), train()/eval() toggles through the compiled object (dropout, batchnorm)."""
from harness import program

F_ = "wrappers"

program(F_, "no_grad_decorated_forward", """
class Infer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    @torch.no_grad()
    def forward(self, x):
        return self.lin(x)
m = Infer()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def post(out, i): return out.requires_grad
""")

program(F_, "args_kwargs_decorator_counting", """
CALLS = 0
def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global CALLS
        CALLS += 1
        return fn(*args, **kwargs)
    return wrapper
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    @counted
    def forward(self, x, scale=1.0):
        return self.lin(x) * scale
m = Net()
def make(): return m
def inputs(i): return ((torch.randn(2, 3),), {"scale": float(i % 2 + 1)})
def step(i):
    global CALLS
    if i % 2 == 0: CALLS = 0
NCALLS = 6
""")

program(F_, "submodule_compiled_in_place", """
class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Linear(4, 4)
        self.scale = 1.0
    def forward(self, x):
        return self.block(x) * self.scale
m = Parent()
TOP_COMPILE = False
def make():
    m.block = COMPILE(m.block)
    return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.scale = 2.0
""")

program(F_, "compiled_then_to_float64", """
m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
TOP_COMPILE = False
def make():
    return COMPILE(m).to(torch.float64)
def inputs(i): return torch.randn(2, 3, dtype=torch.float64)
""")

program(F_, "dropout_train_eval_toggle", """
m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    if i == 2: CALLABLE.eval()
    if i == 3: CALLABLE.train()
NCALLS = 5
""")

program(F_, "batchnorm_train_eval_toggle", """
m = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
def make(): return m
def inputs(i): return torch.randn(6, 4)
def step(i):
    if i == 2: CALLABLE.eval()
    if i == 3: CALLABLE.train()
NCALLS = 5
""")

program(F_, "submodule_eval_only", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.9)
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(self.drop(x))
m = Net()
def make(): return m
def inputs(i): return torch.ones(2, 4)
def step(i):
    if i == 2: m.drop.eval()
""")

program(F_, "output_scaling_decorator_reads_global", """
OUT_SCALE = 1.0
def scaled(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs) * OUT_SCALE
    return inner
@scaled
def proj(x, w):
    return x @ w
W = torch.randn(3, 2)
def make(): return proj
def inputs(i): return (torch.randn(2, 3), W)
def step(i):
    global OUT_SCALE
    if i == 2: OUT_SCALE = -2.0
""")

program(F_, "nested_compiled_helper", """
def inner(x, k):
    return torch.sin(x) * k
INNER = None
K = [1.0]
def outer(x):
    return INNER(x, K[0]) + 1
def make():
    global INNER
    INNER = COMPILE(inner)
    return outer
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: K[0] = 5.0
""")

program(F_, "requires_grad_false_whole_model", """
m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.requires_grad_(False)
def post(out, i): return out.requires_grad
""")

program(F_, "star_args_kwargs_forwarded_from_a_comprehension", """
class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)
    def forward(self, input, scale=1.0):
        return self.l(input) * scale
class Ensembler(nn.Module):
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([Lin(), Lin()])
    def forward(self, *input, **kwargs):
        outputs = [model(*input, **kwargs) for model in self.models]
        return torch.stack(outputs).mean(0)
m = Ensembler()
def make(): return m
def inputs(i): return ((), {"input": torch.rand(2, 4), "scale": [1.0, 1.0, 3.0, 1.0][i % 4]})
def step(i):
    if i == 3: m.models.append(Lin())
""")
