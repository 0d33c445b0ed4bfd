"""TorchScript functions called from Python: one graph node that calls the scripted function
(as eager does), with the function object guarded where it is read and in-place changes of its
arguments seen by their versions."""
from harness import program

F_ = "script"

program(F_, "script_function_replaced_between_calls", """
@torch.jit.script
def mish(x):
    return x * torch.tanh(F.softplus(x))
@torch.jit.script
def swish(x):
    return x * torch.sigmoid(x)
ACT = mish
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return ACT(self.lin(x)) * 2
m = Net()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    global ACT
    if i == 2: ACT = swish
""")

program(F_, "script_function_updates_a_buffer_in_place", """
@torch.jit.script
def ema_(avg, x, decay: float):
    avg.mul_(decay).add_(x.mean(0), alpha=1.0 - decay)
    return avg
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(4))
        self.decay = 0.9
    def forward(self, x):
        ema_(self.avg, x, self.decay)
        return x - self.avg
m = Tracker()
def make(): return m
def inputs(i): return torch.randn(5, 4)
def step(i):
    if i == 2: m.decay = 0.5
""")

program(F_, "script_function_with_a_python_scalar_argument", """
@torch.jit.script
def scaled(x, s: float):
    return x * s
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = 2.0
    def forward(self, x):
        return scaled(x, self.s) + 1
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: m.s = -3.0
""")

program(F_, "script_module_subclass_parameters_changed_in_place", """
class Mix(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.key = nn.Linear(4, 4, bias=False)
        self.mix = nn.Parameter(torch.full((1, 4), 0.5))
    @torch.jit.script_method
    def forward(self, x):
        return torch.relu(self.key(x * self.mix + x * (1 - self.mix)))
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.mixer = Mix()
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.mixer(x) + 1)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        with torch.no_grad():
            m.mixer.mix.mul_(0.1)
            m.mixer.key.weight.add_(1.0)
""")

program(F_, "script_module_replaced_and_other_script_method_called", """
class Enc(torch.jit.ScriptModule):
    def __init__(self, k: float):
        super().__init__()
        self.k = k
        self.fc = nn.Linear(3, 3)
    @torch.jit.script_method
    def encode(self, x):
        return self.fc(x) * self.k
    @torch.jit.script_method
    def forward(self, x):
        return self.encode(x).tanh()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Enc(2.0)
    def forward(self, x):
        return self.enc(x) + self.enc.encode(x)
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        torch.manual_seed(5)
        m.enc = Enc(-1.0)
""")

program(F_, "scripted_module_returns_a_count_and_keeps_state", """
EXPECT = "dynamic"
class Counter(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(1))
    @torch.jit.script_method
    def forward(self, x):
        self.seen += 1
        return x * self.seen, int(self.seen.item())
c = Counter()
def f(x):
    y, n = c(x)
    return y + n
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
""")
