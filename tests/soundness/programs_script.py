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
